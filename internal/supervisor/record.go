package supervisor

import (
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/rs/zerolog"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/run"
	"github.com/malarun/malarun/internal/stream"
)

// recordKeeper keeps the issue's record (record.json): the run as the
// plan opened it, what this malarun knows of it that the run's decisions
// cannot, and the saves at every transition and of progress within an
// attempt. It reads the run's state, never writes it.
type recordKeeper struct {
	log   zerolog.Logger
	issue string

	journal *journal.Journal
	records RecordWriter // where the record is saved: the journal, or a test's wrapper
	// base is the run as the plan opened it (its identity and history);
	// facts what this malarun knows of it that the run's decisions cannot
	// (runFacts). record() projects them, with state, into the record
	// saved at every transition.
	base  record.Record
	facts runFacts
	// state is the runner's: the run's decisions so far.
	state *run.State

	sideEffectFree map[string]bool               // the tools whose calls are no side effect (run.Policy)
	outputFailures func() []record.OutputFailure // Deps.OutputFailures
}

// record is the issue's record now: the one place that builds it, from
// the run as the plan opened it (base: its identity and history), the
// run's state (run.State: how it stands, from the moment this malarun
// takes it; its decisions' numbers, once begun) and what the driver
// knows (runFacts). Nothing else assigns a record field (issue 39), so
// which holds the truth for each field is read here.
func (k *recordKeeper) record(now time.Time) record.Record {
	f, s := &k.facts, k.state
	rec := k.base
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
		// encoded: an attempt's cost is within [0, stream.maxCostUSD] (the
		// decoder's bound), so the run's cost and the issue's total grow by
		// at most that per attempt, which a float64 absorbs for 1e302
		// attempts. A record written before holds a finite value too.
		rec.TotalCostUSD = k.base.TotalCostUSD + s.CostUSD - k.base.CostUSD
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
func (k *recordKeeper) save() error {
	if k.outputFailures != nil {
		k.facts.noteOutputs(k.outputFailures())
	}
	if err := k.records.Save(k.record(time.Now())); err != nil {
		if lost, ok := errors.AsType[*journal.LostError](err); ok {
			// Another malarun runs the issue now: exit 7, as if it had
			// held the issue from the start.
			return &RunError{Kind: outcome.Busy, Detail: lost.Error()}
		}
		return fmt.Errorf("record the run: %w", err) // malarun's own trouble: exit 1
	}
	return nil
}

// attemptStarted saves the attempt's session and process before it
// produces anything (runFacts.attemptStarted).
func (k *recordKeeper) attemptStarted(spec run.Attempt, child Child) error {
	k.facts.attemptStarted(spec, child.Pid(), child.StartTime(), time.Now())
	return k.save()
}

// progress saves, as they happen, what a later malarun needs if
// this one dies mid-attempt: that the session has talked (so it is worth
// resuming), the tool calls with side effects (so a fresh start is known to
// be unsafe), and the tool calls in flight (so the resume prompt names them).
// Without fsync: frequent, and only malarun's own death must be survived.
// The calls in flight are the machine's first record.MaxInFlight, taken
// at a cost that does not grow with the calls open (docs/design.md §D37).
func (k *recordKeeper) progress(ev stream.Event, m *attempt.State) {
	calls, more := m.FirstOutstanding(record.MaxInFlight)
	if !k.facts.progress(&ev, inFlight{calls, more, m.Running()}, m.Talked(), k.sideEffectFree) {
		return
	}
	if err := k.records.SaveQuick(k.record(time.Now())); err != nil {
		k.log.Error().Err(err).Msg("could not record the attempt's progress")
	}
}

// attemptDecided ends the attempt's facts once the run decided what
// follows it; the caller saves.
func (k *recordKeeper) attemptDecided(res *attemptResult) {
	k.facts.attemptDecided(attemptTold{resultsLost: res.log.ResultsLost, noResponse: res.noResponse, resumeReason: res.log.ResumeReason})
}
