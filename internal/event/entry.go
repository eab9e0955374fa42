package event

import (
	"time"

	"github.com/malarun/malarun/internal/timeline"
	"github.com/malarun/malarun/internal/usd"
)

// Entry is the event's one wire form: a line of --events and of the run
// folder's timeline (docs/design.md §D20), which replay reads back.
func (e Event) Entry() timeline.Entry {
	j := timeline.Entry{
		Time: e.Time.UTC(), Event: string(e.Kind), Issue: e.Issue, Attempt: e.Attempt, Session: e.Session,
		RunDir: e.RunDir, Continued: e.Continued, Pid: e.Pid, Resume: e.Resume, Purpose: e.Purpose,
		Tool: e.Tool, ToolInput: e.ToolInput, Task: e.Task, Hook: e.Hook, Outcome: e.Outcome, Action: e.Action, Reason: e.Reason,
		BackoffMS: e.Backoff.Milliseconds(), LimitMS: e.Limit.Milliseconds(), GraceMS: e.Grace.Milliseconds(),
		TookMS: e.Took.Milliseconds(), Termed: e.Termed, Killed: e.Killed,
		ToolsRunning: e.ToolsRunning, Phase: e.Phase, Doing: e.Doing, Occupancy: e.Occupancy, Window: e.Window,
		Continuation: e.Continuation, CheckpointBytes: e.CheckpointBytes,
		Until: utcOrZero(e.Until), RetryAt: utcOrZero(e.RetryAt), LimitType: e.LimitType,
	}
	switch e.Kind {
	case AttemptEnded, RunFinished:
		code := e.ExitCode
		j.ExitCode = &code
	case HookFinished:
		j.ExitCode = e.HookExitCode
	}
	if n := e.NoResponse; n != nil {
		j.NoResponse = &timeline.NoResponse{Retries: n.Retries, WaitedMS: n.Waited.Milliseconds(), MS: n.Cost.Milliseconds()}
	}
	j.ResultsLost = e.ResultsLost
	if e.Kind == RunFinished {
		cost := usd.Round(e.CostUSD) // printed: --events and the timeline
		j.CostUSD = &cost
		tokens := e.Tokens
		j.Tokens = &tokens
	}
	return j
}

func utcOrZero(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}
