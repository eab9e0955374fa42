package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/event"
)

// maxInput bounds how much of a tool's input an event line quotes.
const maxInput = 160

// eventLine is the permanent line a terminal shows for an event that
// matters, and false for the others (progress, a tool finishing, an attempt
// that ended well). st gives the context (the run's start for the final
// line); the line is cleaned (see Clean), quoted text cut. Lines start
// with the local time: "12:04:05 attempt 1: Bash: go test ./...".
func eventLine(e event.Event, st *Status) (string, bool) {
	var s string
	at := ""
	if e.Attempt > 0 { // limit_wait names none: a wait comes between attempts, or before the first
		at = fmt.Sprintf("attempt %d: ", e.Attempt)
	}
	switch e.Kind {
	case event.RunStarted:
		s = "run started; transcripts in " + e.RunDir
		if e.Continued {
			s = "continuing the recorded run; transcripts in " + e.RunDir
		}
		s = e.Issue + ": " + s
	case event.AttemptStarted:
		switch {
		case e.Purpose == "checkpoint":
			s = at + "asking session " + ShortSession(e.Session) + " for a checkpoint"
		case e.Resume:
			s = at + "resuming session " + ShortSession(e.Session)
		default:
			s = at + "new session " + ShortSession(e.Session)
		}
		s += fmt.Sprintf(" (claude pid %d)", e.Pid)
	case event.ToolStarted:
		s = at + Clean(e.Tool, 40)
		if in := Clean(e.ToolInput, maxInput); in != "" {
			s += ": " + in
		}
	case event.HookStarted:
		if strings.HasPrefix(e.Hook, "PreToolUse") || strings.HasPrefix(e.Hook, "PostToolUse") {
			return "", false // part of the tool call's line; the status line shows it running
		}
		s = at + "hook " + Clean(e.Hook, 60) + " started"
	case event.HookFinished:
		if e.Outcome == "success" && (e.HookExitCode == nil || *e.HookExitCode == 0) {
			return "", false // the status line showed it running; a hook that passed is no news
		}
		s = at + "hook " + Clean(e.Hook, 60) + " did not succeed: " + Clean(e.Outcome, 40)
		if e.HookExitCode != nil {
			s += fmt.Sprintf(" (exit %d)", *e.HookExitCode)
		}
	case event.TaskStarted:
		s = at + "background task " + Clean(e.Task, 40) + " started: " + Clean(e.Reason, maxInput)
	case event.TaskFinished:
		s = at + "background task " + Clean(e.Task, 40) + " finished: " + Clean(e.Reason, maxInput)
	case event.APIRetry:
		s = at + "claude is retrying an API request: " + Clean(e.Reason, maxInput)
		if e.Backoff > 0 {
			s += ", next try in " + Duration(e.Backoff)
		}
	case event.HangDetected:
		s = at + "hang detected: " + Clean(e.Reason, maxInput)
		if e.Doing != "" {
			s += " " + Clean(e.Doing, 80)
		} else if len(e.ToolsRunning) > 0 {
			s += " while " + Clean(strings.Join(e.ToolsRunning, ", "), 60) + " ran"
		}
	case event.KillSent:
		s = fmt.Sprintf("%sstopping claude's process tree (%s); SIGKILL after %s", at, e.Reason, Duration(e.Grace))
	case event.TreeGone:
		s = fmt.Sprintf("%sprocess tree gone in %s (%d terminated, %d killed)", at, Duration(e.Took), e.Termed, e.Killed)
	case event.AttemptEnded:
		if !endedLine(e.Outcome) {
			return "", false
		}
		s = at + "ended: " + e.Outcome + ": " + Clean(e.Reason, maxInput)
	case event.RetryDecided:
		s = retryLine(e, st)
		if s == "" {
			return "", false
		}
		s = at + s
	case event.Checkpoint:
		s = fmt.Sprintf("context at %s: asking session %s for a checkpoint before a fresh session",
			Occupancy(e.Occupancy, e.Window), ShortSession(e.Session))
	case event.Restart:
		s = fmt.Sprintf("context restart %d: a new session continues", e.Continuation)
		if e.CheckpointBytes > 0 {
			s += fmt.Sprintf(" from the checkpoint (%d bytes)", e.CheckpointBytes)
		} else {
			s += " with the original task (no checkpoint)"
		}
	case event.LimitWait:
		s = at + "usage limit"
		if e.LimitType != "" {
			s += " (" + Clean(e.LimitType, 40) + ")" // the CLI's word
		}
		s += fmt.Sprintf(": waiting until %s, then resuming the session", e.Until.Local().Format(time.TimeOnly))
	case event.RunFinished:
		s = finishedLine(e, st)
	default:
		return "", false
	}
	// Every field is cleaned whoever set it: a line is one line, and
	// nothing in it can drive the terminal.
	return e.Time.Local().Format(time.TimeOnly) + " " + Clean(s, 0), true
}

// endedLine reports whether an attempt that ended so has a line: not one
// that went well, and not a hang or an interruption, which have their own.
func endedLine(ending string) bool {
	switch ending {
	case attempt.Success.String(), attempt.Hang.String(), attempt.Interrupted.String():
		return false
	}
	return true
}

func retryLine(e event.Event, st *Status) string {
	in := ""
	if e.Backoff > 0 {
		in = " in " + Duration(e.Backoff)
	}
	switch e.Action {
	case "resume":
		return "will resume session " + ShortSession(e.Session) + in
	case "fresh":
		return "will start a fresh session" + in
	case "checkpoint":
		return "context nearly full: will ask for a checkpoint" + in
	case "continue", "fallback":
		return "will continue in a new session" + in
	case "fail":
		if st != nil && e.Reason != "" && e.Reason == st.endedReason {
			// What is never retried (auth, an unreachable API, ...): the
			// "ended" line above gave this very reason.
			return "giving up"
		}
		return "giving up: " + Clean(e.Reason, maxInput)
	}
	return ""
}

func finishedLine(e event.Event, st *Status) string {
	s := fmt.Sprintf("%s %s (exit %d)", e.Issue, EndWord(e.Outcome), e.ExitCode)
	if !e.RetryAt.IsZero() {
		s += ", retry at " + e.RetryAt.Local().Format(time.DateTime)
	}
	if st != nil {
		if n := st.Attempt(); n > 0 {
			s += fmt.Sprintf(" at attempt %d", n)
		}
		if !st.Started().IsZero() {
			s += ", " + Duration(e.Time.Sub(st.Started()))
		}
	}
	return s + ", " + Cost(e.CostUSD)
}
