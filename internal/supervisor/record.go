package supervisor

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/environ"
	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/run"
	"github.com/malarun/malarun/internal/stream"
)

// save writes the issue's record. A record that cannot be saved means a
// later malarun could not continue the run: that ends the run.
func (r *runner) save() error {
	r.rec.UpdatedAt = time.Now()
	r.noteOutputFailures()
	if err := r.records.Save(r.rec); err != nil {
		if lost, ok := errors.AsType[*journal.LostError](err); ok {
			// Another malarun runs the issue now: exit 7, as if it had
			// held the issue from the start.
			return &RunError{Kind: outcome.Busy, Detail: lost.Error()}
		}
		return fmt.Errorf("record the run: %w", err) // malarun's own trouble: exit 1
	}
	return nil
}

// maxOutputFailures bounds the failures a record keeps: one per output per
// invocation, over as many invocations as resume the run.
const maxOutputFailures = 16

// noteOutputFailures copies into the record the outputs that failed since
// the last save, once each (Deps.OutputFailures).
func (r *runner) noteOutputFailures() {
	if r.deps.OutputFailures == nil {
		return
	}
	for _, f := range r.deps.OutputFailures() {
		if r.notedOutputs[f.Output] {
			continue
		}
		if r.notedOutputs == nil {
			r.notedOutputs = map[string]bool{}
		}
		r.notedOutputs[f.Output] = true
		r.rec.OutputFailures = append(r.rec.OutputFailures, f)
		if n := len(r.rec.OutputFailures); n > maxOutputFailures {
			r.rec.OutputFailures = slices.Clone(r.rec.OutputFailures[n-maxOutputFailures:])
		}
	}
}

// recordAttemptStart notes the session and the CLI's process before the
// attempt produces anything, so a malarun killed from here on can be
// followed by one that resumes this session and ends this process.
func (r *runner) recordAttemptStart(spec run.Attempt, child Child) error {
	r.rec.SessionID = spec.SessionID
	if !spec.Resume {
		r.rec.SessionTalked = false
	}
	if len(r.rec.Sessions) == 0 || r.rec.Sessions[len(r.rec.Sessions)-1] != spec.SessionID {
		r.rec.Sessions = append(r.rec.Sessions, spec.SessionID)
	}
	r.rec.Tree = nil
	if st := child.StartTime(); st != 0 {
		// A pid is recorded only with its start time (unknown if /proc could
		// not be read): the marker still finds the process.
		r.rec.Tree = []journal.ProcRef{{Pid: child.Pid(), StartTime: st}}
	}
	r.rec.Running, r.rec.Tasks = nil, nil
	r.rec.AttemptStartedAt = time.Now().UTC()
	return r.save()
}

// recordProgress notes, as they happen, what a later malarun needs if
// this one dies mid-attempt: that the session has talked (so it is worth
// resuming), the tool calls with side effects (so a fresh start is known to
// be unsafe), and the tool calls in flight (so the resume prompt names them).
// Without fsync: frequent, and only malarun's own death must be survived.
func (r *runner) recordProgress(ev stream.Event, outstanding []stream.ToolUse, tasks []attempt.Task, answered bool) {
	changed := false
	if answered && !r.rec.APIAnswered {
		r.rec.APIAnswered, changed = true, true
	}
	if ev.Type == "system" && ev.Subtype == "init" {
		if down := recordMCP(attempt.MCPDown(ev.MCPServers)); !slices.Equal(down, r.rec.MCPNotConnected) {
			r.rec.MCPNotConnected, changed = down, true
		}
	}
	if ev.Type == "assistant" && ev.Model != "<synthetic>" && !r.rec.SessionTalked {
		r.rec.SessionTalked, changed = true, true
	}
	for _, tu := range ev.ToolUses {
		if !r.policy.SideEffectFree[tu.Name] {
			if r.rec.SideEffects == nil {
				r.rec.SideEffects = map[string]int{}
			}
			r.rec.SideEffects[tu.Name]++
			changed = true
		}
	}
	if calls := recordCalls(outstanding); !slices.Equal(calls, r.rec.Running) {
		r.rec.Running, changed = calls, true
	}
	if rt := recordTasks(tasks); !slices.Equal(rt, r.rec.Tasks) {
		r.rec.Tasks, changed = rt, true
	}
	if !changed {
		return
	}
	r.rec.UpdatedAt = time.Now()
	if err := r.records.SaveQuick(r.rec); err != nil {
		r.log.Error().Err(err).Msg("could not record the attempt's progress")
	}
}

// The record has its own types for tool calls and tasks (journal owns its
// file format); these convert to and from them.

func recordCalls(tus []stream.ToolUse) []journal.ToolCall {
	if len(tus) == 0 {
		return nil
	}
	calls := make([]journal.ToolCall, len(tus))
	for i, tu := range tus {
		calls[i] = journal.ToolCall{Name: tu.Name, Input: tu.Input}
	}
	return calls
}

func recordTasks(tasks []attempt.Task) []journal.Task {
	if len(tasks) == 0 {
		return nil
	}
	out := make([]journal.Task, len(tasks))
	for i, tk := range tasks {
		out[i] = journal.Task{ID: tk.ID, Type: tk.Type, Description: tk.Description, Command: tk.Command,
			ToolUseID: tk.ToolUseID, OutputFile: tk.OutputFile}
	}
	return out
}

func callsOfRecord(calls []journal.ToolCall) []run.ToolCall {
	out := make([]run.ToolCall, len(calls))
	for i, c := range calls {
		out[i] = run.ToolCall{Name: c.Name, Input: c.Input}
	}
	return out
}

func tasksOfRecord(tasks []journal.Task) []attempt.Task {
	out := make([]attempt.Task, len(tasks))
	for i, tk := range tasks {
		out[i] = attempt.Task{ID: tk.ID, Type: tk.Type, Description: tk.Description, Command: tk.Command,
			ToolUseID: tk.ToolUseID, OutputFile: tk.OutputFile}
	}
	return out
}

// recordDecision mirrors the run's decision state, and what the attempt
// cut off, into the record; the caller saves it.
func (r *runner) recordDecision(res *attemptResult) {
	s := r.state
	r.rec.Attempts = s.Attempts
	r.rec.AttemptStartedAt = time.Time{} // none runs until the next starts
	r.rec.SessionID = s.SessionID
	r.rec.SessionTalked = s.SessionTalked
	// A copy: recordProgress counts the next attempt's calls into the
	// record's map as they come, and the run's state is internal/run's alone.
	r.rec.SideEffects = maps.Clone(s.SideEffects)
	r.rec.Continuations = s.Continuations
	// Finite whatever the CLI printed, so the record can always be encoded:
	// an attempt's cost is within [0, stream.MaxCostUSD] (the decoder's
	// bound; a rejected cost keeps the last good one), so the run's cost
	// (run.State.CostUSD) and the issue's total grow by at most that per
	// attempt, which a float64 absorbs for 1e302 attempts. A record written
	// before holds a finite value too (JSON has no Inf).
	r.rec.TotalCostUSD += s.CostUSD - r.rec.CostUSD
	r.rec.CostUSD = s.CostUSD
	r.rec.Checkpoint = s.Checkpoint
	r.rec.PhaseRoom = roomToRecord(s.Room)
	r.rec.Tree = nil
	cutCalls, cutTasks := res.machine.CutOff()
	r.rec.Running = recordCalls(cutCalls)
	r.rec.Tasks = recordTasks(cutTasks)
}

// finishRecord records how the run ended. An interrupted, stopped or
// waiting (usage-limited) run stays resumable and costs no reclaim: cancelled CI jobs never poison an
// issue, and an orchestrator's retry of exit 3 or 124 continues the work.
// A record that cannot be saved is an error of its own: the exit code must
// not say the run ended cleanly while record.json still says processing
// (the next invocation would reclaim a finished run).
func (r *runner) finishRecord(err error) error {
	r.rec.ExitCode = r.exitCode(err)
	r.rec.Reason = ""
	r.rec.Tree = nil
	var re *RunError
	waiting := true
	switch {
	case errors.Is(err, outcome.RateLimit) && errors.As(err, &re):
		// The session is kept for the next run; retry_at says when.
		r.rec.RetryAt, r.rec.LimitType = re.RetryAt, re.LimitType
	case errors.Is(err, outcome.Interrupted) && r.state.Waiting():
		// Stopped during a limit wait: still waiting for the same reset.
	default:
		waiting = false
		r.rec.RetryAt, r.rec.LimitType = time.Time{}, ""
	}
	r.rec.Status = journal.StatusFor(outcome.Of(err))
	switch {
	case waiting:
		r.rec.Status = journal.Waiting
		r.rec.Reason = err.Error()
	case err == nil:
		r.rec.Running, r.rec.Tasks = nil, nil
	default:
		r.rec.Reason = err.Error()
	}
	if err == nil || !errors.Is(err, outcome.Interrupted) {
		r.rec.Reclaims = 0
	}
	if r.deps.FlushOutputs != nil {
		r.deps.FlushOutputs() // the last save notes every output that failed
	}
	if serr := r.save(); serr != nil {
		if errors.Is(serr, outcome.Busy) {
			return serr // the record is another malarun's to write now
		}
		ended := "succeeded"
		if err != nil {
			ended = "ended: " + err.Error()
		}
		return fmt.Errorf("the run %s, but %w; record.json may still say %q, so fix the state directory before running issue %s again",
			ended, serr, journal.Processing, r.cfg.IssueID)
	}
	return nil
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

// roomToRecord is the run's room by phase name, for the record (nil:
// none given).
func roomToRecord(room attempt.Room) map[string]int {
	var out map[string]int
	for _, p := range attempt.Phases() {
		if room[p] > 0 {
			if out == nil {
				out = map[string]int{}
			}
			out[p.String()] = room[p]
		}
	}
	return out
}

// roomOfRecord reads the record's room back: names malarun does not know
// are left out, and each count is bounded by attempt.MaxRoom (the record
// is checked, but a newer malarun may know more phases).
func roomOfRecord(m map[string]int) attempt.Room {
	var room attempt.Room
	for _, p := range attempt.Phases() {
		room[p] = min(max(m[p.String()], 0), attempt.MaxRoom)
	}
	return room
}

func recordMCP(down []stream.MCPServer) []journal.MCPServer {
	var out []journal.MCPServer
	for _, s := range down {
		out = append(out, journal.MCPServer{Name: s.Name, Status: s.Status})
	}
	return out
}
