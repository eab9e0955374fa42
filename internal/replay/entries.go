package replay

import (
	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/timeline"
)

// beganAfter is how an attempt begins after a retry decision's action.
func beganAfter(action string) string {
	switch action {
	case "resume":
		return BeganResume
	case "fresh":
		return BeganFresh
	case "checkpoint":
		return BeganCheckpoint
	case "continue":
		return BeganContinuation
	case "fallback":
		return BeganFallback
	}
	return ""
}

// entry tells one timeline entry: a line's time brings the transcript up to
// that line; a decision becomes an item.
func (w *walk) entry(e timeline.Entry) error {
	n := e.Attempt
	if n == 0 {
		n = w.current
	}
	it := &Item{Attempt: n, Time: e.Time, Reason: e.Reason}
	switch event.Kind(e.Event) {
	case timeline.EventLine:
		a, err := w.attemptOf(e.Attempt, e)
		if err != nil || a == nil {
			return err
		}
		return w.lines(a, *e.Offset, e.Time)
	case event.RunStarted:
		it.Kind, it.Attempt, it.Continued = event.RunStarted, 0, e.Continued
		w.began = BeganNew
		if e.Continued {
			w.began = BeganReclaim
		}
	case event.AttemptStarted:
		began := w.began
		switch {
		case e.Purpose == "checkpoint":
			began = BeganCheckpoint
		case began == "" && e.Resume:
			began = BeganResume
		case began == "":
			began = BeganNew
		}
		w.began = ""
		it.Kind, it.Pid = event.AttemptStarted, e.Pid
		it.Info = &Attempt{Session: e.Session}
		return w.startAttempt(it, began)
	case event.AttemptEnded:
		a, err := w.attemptOf(e.Attempt, e)
		if err != nil || a == nil {
			return err
		}
		if err := w.lines(a, -1, e.Time); err != nil {
			return err
		}
		return w.endAttempt(e.Attempt, e.Time, &e)
	case event.ToolStarted, event.ToolFinished:
		return nil // the transcript's tool calls and results say it, with their lines' times
	case event.TaskStarted:
		it.Kind, it.Task, it.Summary, it.Reason = event.TaskStarted, e.Task, e.Reason, ""
		if a := w.attempts[n]; a != nil && e.Task != "" {
			a.taskStarted(e.Task, e.Time)
		}
	case event.TaskFinished:
		it.Kind, it.Task, it.Summary, it.Reason = event.TaskFinished, e.Task, e.Reason, ""
		if a := w.attempts[n]; a != nil {
			it.TookMS = a.taskFinished(e.Task, e.Time)
		}
	case event.APIRetry:
		it.Kind, it.BackoffMS = event.APIRetry, e.BackoffMS
	case event.HangDetected:
		it.Kind, it.SilenceMS, it.ToolsRunning, it.Phase, it.Doing = event.HangDetected, e.LimitMS, e.ToolsRunning, e.Phase, e.Doing
	case event.KillSent:
		it.Kind, it.Pid, it.GraceMS = event.KillSent, e.Pid, e.GraceMS
	case event.TreeGone:
		it.Kind, it.Termed, it.Killed, it.TookMS = event.TreeGone, e.Termed, e.Killed, e.TookMS
	case event.RetryDecided:
		it.Kind, it.Action, it.BackoffMS = event.RetryDecided, e.Action, e.BackoffMS
		w.began = beganAfter(e.Action)
	case event.LimitWait:
		it.Kind, it.Until, it.RetryAt, it.LimitType = event.LimitWait, e.Until, e.RetryAt, e.LimitType
		w.began = BeganResume
	case event.Checkpoint:
		it.Kind, it.Occupancy, it.Window = event.Checkpoint, e.Occupancy, e.Window
		w.setWindow(e.Window)
	case event.Restart:
		it.Kind, it.Continuation, it.Occupancy, it.Window, it.Action = event.Restart, e.Continuation, e.Occupancy, e.Window, e.Action
		w.setWindow(e.Window)
	case event.RunFinished:
		it.Kind, it.Attempt, it.Outcome, it.ExitCode = event.RunFinished, 0, e.Outcome, e.ExitCode
		if e.CostUSD != nil {
			it.RunCostUSD = *e.CostUSD
		}
		w.sum.Outcome, w.sum.ExitCode, w.sum.Reason = e.Outcome, e.ExitCode, e.Reason
	default:
		return nil // a kind from a later malarun
	}
	return w.emit(it)
}

func (w *walk) setWindow(n int64) {
	if n > 0 {
		w.window = n
	}
}

// attemptOf is the reader of an attempt a timeline entry names; one the
// timeline never started (a damaged timeline) is started here, without
// knowing how it began.
func (w *walk) attemptOf(n int, e timeline.Entry) (*attemptReader, error) {
	if n < 1 {
		return nil, nil // not an entry malarun writes: skipped
	}
	if a := w.attempts[n]; a != nil {
		return a, nil
	}
	if err := w.startAttempt(&Item{Kind: event.AttemptStarted, Attempt: n, Time: e.Time}, BeganUnknown); err != nil {
		return nil, err
	}
	return w.attempts[n], nil
}
