package supervisor

import (
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/environ"
	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/run"
	"github.com/malarun/malarun/internal/stream"
)

// record is the issue's record now: the one place that builds it, from
// the run as the plan opened it (base: its identity and history), the
// run's state (run.State: how it stands, from the moment this malarun
// takes it; its decisions' numbers, once begun) and what the driver
// knows (runFacts). Nothing else assigns a record field (issue 39), so
// which holds the truth for each field is read here.
func (r *runner) record(now time.Time) record.Record {
	f, s := &r.facts, &r.state
	rec := r.base
	rec.Owner, rec.Trace, rec.Cgroup = f.owner, f.trace, f.cgroupPath()
	rec.Status, rec.ExitCode, rec.Reason = s.Status, s.ExitCode, s.Reason
	rec.UsageLimit, rec.Reclaims, rec.InFlight = s.Limit, s.Reclaims, s.Cut
	rec.OutputFailures, rec.Sessions = f.outputFailures, f.sessions
	rec.APIAnswered = rec.APIAnswered || f.answered
	rec.ResultsLost, rec.NoResponse, rec.ResumeReason = f.resultsLost, f.noResponse, f.resumeReason
	if f.mcpSeen {
		rec.MCPNotConnected = f.mcpDown
	}
	rec.UpdatedAt = now
	if f.began {
		rec.Attempts, rec.SessionID, rec.SessionTalked = s.Attempts, s.SessionID, s.SessionTalked
		// A copy: the attempt's calls are added below, and the run's state
		// is internal/run's alone.
		rec.SideEffects = maps.Clone(s.SideEffects)
		rec.Continuations, rec.Checkpoint, rec.PhaseRoom = s.Continuations, s.Checkpoint, run.RoomToRecord(s.Room)
		// Finite whatever the CLI printed, so the record can always be
		// encoded: an attempt's cost is within [0, stream.MaxCostUSD] (the
		// decoder's bound), so the run's cost and the issue's total grow by
		// at most that per attempt, which a float64 absorbs for 1e302
		// attempts. A record written before holds a finite value too.
		rec.TotalCostUSD = r.base.TotalCostUSD + s.CostUSD - r.base.CostUSD
		rec.CostUSD = s.CostUSD
		rec.Tree, rec.AttemptStartedAt = nil, time.Time{}
	}
	if a := f.attempt; a != nil {
		rec.SessionTalked = a.talked || a.resume && rec.SessionTalked && rec.SessionID == a.session
		rec.SessionID = a.session
		for tool, n := range a.calls {
			if rec.SideEffects == nil {
				rec.SideEffects = map[string]int{}
			}
			rec.SideEffects[tool] += n
		}
		rec.InFlight, rec.Tree, rec.AttemptStartedAt = a.inFlight, a.tree, a.started
	}
	return rec
}

// save writes the issue's record. A record that cannot be saved means a
// later malarun could not continue the run: that ends the run.
func (r *runner) save() error {
	if r.deps.OutputFailures != nil {
		r.facts.noteOutputs(r.deps.OutputFailures())
	}
	if err := r.records.Save(r.record(time.Now())); err != nil {
		if lost, ok := errors.AsType[*journal.LostError](err); ok {
			// Another malarun runs the issue now: exit 7, as if it had
			// held the issue from the start.
			return &RunError{Kind: outcome.Busy, Detail: lost.Error()}
		}
		return fmt.Errorf("record the run: %w", err) // malarun's own trouble: exit 1
	}
	return nil
}

// recordAttemptStart saves the attempt's session and process before it
// produces anything (runFacts.attemptStarted).
func (r *runner) recordAttemptStart(spec run.Attempt, child Child) error {
	r.facts.attemptStarted(spec, child.Pid(), child.StartTime(), time.Now())
	return r.save()
}

// recordProgress saves, as they happen, what a later malarun needs if
// this one dies mid-attempt: that the session has talked (so it is worth
// resuming), the tool calls with side effects (so a fresh start is known to
// be unsafe), and the tool calls in flight (so the resume prompt names them).
// Without fsync: frequent, and only malarun's own death must be survived.
// The calls in flight are the machine's first record.MaxInFlight, taken
// at a cost that does not grow with the calls open (docs/design.md §D37).
func (r *runner) recordProgress(ev stream.Event, m *attempt.State) {
	calls, more := m.FirstOutstanding(record.MaxInFlight)
	if !r.facts.progress(&ev, inFlight{calls, more, m.Running()}, m.Talked(), r.policy.SideEffectFree) {
		return
	}
	if err := r.records.SaveQuick(r.record(time.Now())); err != nil {
		r.log.Error().Err(err).Msg("could not record the attempt's progress")
	}
}

// recordDecision ends the attempt's facts once the run decided what
// follows it; the caller saves.
func (r *runner) recordDecision(res *attemptResult) {
	r.facts.attemptDecided(attemptTold{resultsLost: res.log.ResultsLost, noResponse: res.noResponse, resumeReason: res.log.ResumeReason})
}

// finishRecord records how the run ended (run.Close). A record that cannot
// be saved is an error of its own: the exit code must not say the run
// ended cleanly while record.json still says processing (the next
// invocation would reclaim a finished run).
func (r *runner) finishRecord(err error) error {
	r.state = run.Close(r.state, r.ending(err))
	r.facts.attempt = nil
	if r.deps.FlushOutputs != nil {
		r.deps.FlushOutputs() // the last save notes every output that failed
	}
	serr := r.save()
	if serr == nil {
		return nil
	}
	if !errors.Is(serr, outcome.Busy) { // busy: the record is another malarun's to write now
		ended := "succeeded"
		if err != nil {
			ended = "ended: " + err.Error()
		}
		serr = fmt.Errorf("the run %s, but %w; record.json may still say %q, so fix the state directory before running issue %s again",
			ended, serr, record.Processing, r.cfg.IssueID)
	}
	// The command exits with this error: it is how the run ends, for the
	// report and the finished event.
	r.state = run.Close(r.state, r.ending(serr))
	return serr
}

// ending is how the run ended, for run.Close: the error's outcome and
// sentence, and the exit code cmd/malarun gives it.
func (r *runner) ending(err error) run.Ending {
	e := run.Ending{Outcome: outcome.Of(err), ExitCode: r.exitCode(err)}
	if err != nil {
		e.Reason = err.Error()
	}
	return e
}

func (r *runner) exitCode(err error) int {
	if r.deps.ExitCode != nil {
		return r.deps.ExitCode(err)
	}
	if err == nil {
		return 0
	}
	return 1
}

// attemptEnv is claude's environment for attempt n: the run's, with the
// TRACEPARENT of the attempt's span when traces are exported.
func (r *runner) attemptEnv(n int) []string {
	if r.deps.Traceparent == nil {
		return r.cfg.Env
	}
	tp, ts := r.deps.Traceparent(n)
	if tp == "" {
		return r.cfg.Env
	}
	env := environ.Without(r.cfg.Env, "TRACESTATE")
	return environ.With(environ.With(env, "TRACEPARENT", tp), "TRACESTATE", ts)
}
