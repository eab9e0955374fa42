package supervisor

import (
	"syscall"
	"time"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/proc"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/run"
)

// endedOf is what an attempt did, as the run's decisions need it: how it
// ended (attempt.Classify), what it cost and called, what it cut off.
func (r *runner) endedOf(res *attemptResult) run.Ended {
	m := res.machine
	ending, reason := attempt.Classify(attempt.Ended{Machine: m, Log: res.log,
		Exit: exitOf(res.exit), StderrTail: res.stderrTail, APIAt: res.apiAt,
		PromptNotSeen: r.folder.promptNotSeen(res, r.cfg.Env)})
	cutCalls, cutTasks := m.CutOff()
	e := run.Ended{Attempt: res.spec, Ending: ending, Reason: reason, SessionID: res.log.SessionID, Progress: res.log.Assistants > 0,
		ToolCalls: res.log.ToolCalls, CostUSD: res.log.CostUSD, CutCalls: cutCalls, CutTasks: cutTasks, CutHooks: hookLabels(m.HooksCutOff()),
		Reply: res.log.LastReply(), CLIWaited: m.CLIWaited(res.ended), Talked: m.Talked()}
	if ending == attempt.Hang && res.stop == attempt.StopHang {
		d := m.HangPhase()
		e.Hung = &d
	}
	if ending == attempt.RateLimit {
		e.Limit = attempt.LimitOf(m, res.log, time.Now(), childZone(r.cfg.Env))
	}
	return e
}

func hookLabels(hooks []attempt.Hook) []string {
	labels := make([]string, len(hooks))
	for i, h := range hooks {
		labels[i] = h.Label()
	}
	return labels
}

// attemptReport is the report's entry for an attempt.
func attemptReport(res *attemptResult, e run.Ended) event.AttemptReport {
	_, cutTasks := res.machine.CutOff()
	return event.AttemptReport{N: res.spec.N, Session: e.SessionID, Resume: res.spec.Resume, Purpose: res.spec.Purpose(), Start: res.started, End: res.ended,
		Ended: res.stop.String(), Outcome: e.Ending.String(), Reason: e.Reason, CostUSD: e.CostUSD, Transcript: res.stdoutPath,
		ClaudeCodeVersion: res.log.CLIVersion, Results: res.log.Results, CutTasks: cutTasks, MCPDown: res.log.MCPDown,
		NoResponse: noResponseOf(res), ResultsLost: res.log.ResultsLost}
}

// noResponseOf is the attempt's requests never answered, as events say
// them (nil: none).
func noResponseOf(res *attemptResult) *event.NoResponse {
	n := res.noResponse
	if n.Retries == 0 {
		return nil
	}
	return &event.NoResponse{Retries: n.Retries, Waited: n.Waited, Cost: n.Cost}
}

// exitOf is how the CLI's process ended, as attempt reads it: the code, or
// the signal's number and the system's name for it.
func exitOf(e proc.Exit) attempt.Exit {
	x := attempt.Exit{Code: e.Code}
	switch s := e.Signal.(type) {
	case nil:
	case syscall.Signal:
		x.Signal, x.SignalName = int(s), s.String()
	default:
		x.SignalName = s.String()
	}
	return x
}
