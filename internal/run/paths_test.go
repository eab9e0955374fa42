package run

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/usagelimit"
)

// A run, step by step, in fake time: every path the supervisor's loop
// takes is a row here (issue 30). Each step is one call of Begin, Next or
// Woke at an offset from t0, and the Action it must return, spelled by
// show below so that a row reads like the run it describes.

// show spells an Action, with the state it leaves: "start 2 resume s1
// resume.md", "sleep 5s", "sleep 30s limit five_hour", "end
// retries_exhausted: <reason>".
func show(st State, a Action, now time.Time) string {
	switch a.Kind {
	case Start:
		at := a.Attempt
		how := "new"
		if at.Resume {
			how = "resume"
		}
		s := fmt.Sprintf("start %d %s %s %s", at.N, how, at.SessionID, templateName(at.Prompt))
		if at.Checkpoint {
			s += " checkpoint"
		}
		if at.BudgetUSD > 0 {
			s += fmt.Sprintf(" budget $%.2f", at.BudgetUSD)
		}
		return s
	case Sleep:
		s := "sleep " + a.Until.Sub(now).String()
		if st.Waiting() {
			s += " limit " + st.Limit.LimitType
		}
		return s
	}
	if a.Succeeded() {
		return "end success"
	}
	return "end " + string(a.Outcome) + ": " + a.Reason
}

// stood spells how the run stands (what the record, the report and the
// events read): "processing", "waiting limit five_hour 12:00:30", "...
// cut 1+0 calls 1+0 tasks", "... reclaims 2".
func stood(s Standing) string {
	w := string(s.Status)
	if l := s.Limit; l != (record.UsageLimit{}) {
		w += " limit " + l.LimitType
		if !l.RetryAt.IsZero() {
			w += " " + l.RetryAt.UTC().Format("15:04:05")
		}
	}
	if c := s.Cut; len(c.Running)+c.RunningMore+len(c.Tasks)+c.TasksMore > 0 {
		w += fmt.Sprintf(" cut %d+%d calls %d+%d tasks", len(c.Running), c.RunningMore, len(c.Tasks), c.TasksMore)
	}
	if s.Reclaims > 0 {
		w += fmt.Sprintf(" reclaims %d", s.Reclaims)
	}
	return w
}

func templateName(p Prompt) string {
	switch p.Template {
	case NoTemplate:
		if p.Written == 0 {
			return "prompt.md"
		}
		return fmt.Sprintf("attempt-%d.prompt.md", p.Written)
	case ResumeTemplate:
		return "resume.md"
	case CheckpointTemplate:
		return "checkpoint.md"
	case ContinuationTemplate:
		return "continuation.md"
	}
	return "fallback.md"
}

// pathStep is one call: begin (the case's Beginning), an attempt's end, or
// woke. want is show's spelling; an "end" may be followed by a prefix of
// the reason only. stands, when set, is stood's spelling of the state
// after the step.
type pathStep struct {
	at     time.Duration
	ended  *Ended // nil: Begin for the first step, Woke for later ones
	want   string
	stands string
	check  func(t *testing.T, s State, a Action)
}

func ended(e attempt.Ending, session string, progress bool, more ...func(*Ended)) *Ended {
	x := &Ended{Ending: e, SessionID: session, Progress: progress, Reason: e.String() + " happened"}
	for _, f := range more {
		f(x)
	}
	return x
}

func withCalls(calls ...stream.ToolUse) func(*Ended) { return func(e *Ended) { e.ToolCalls = calls } }
func withCut(calls ...stream.ToolUse) func(*Ended)   { return func(e *Ended) { e.CutCalls = calls } }
func withCost(usd float64) func(*Ended)              { return func(e *Ended) { e.CostUSD = usd } }
func withReply(text string) func(*Ended)             { return func(e *Ended) { e.Reply = text } }
func withLimit(l usagelimit.Limit) func(*Ended) {
	return func(e *Ended) { e.Limit = l }
}
func withTasks(tasks ...stream.Task) func(*Ended) { return func(e *Ended) { e.CutTasks = tasks } }

// of says which attempt ended: its number, session, whether it resumed
// and its prompt.
func of(n int, session string, resume bool, p Prompt) func(*Ended) {
	return func(e *Ended) { e.Attempt = Attempt{N: n, SessionID: session, Resume: resume, Prompt: p} }
}
func hungIn(p attempt.Phase, what string) func(*Ended) {
	return func(e *Ended) { e.Hung = &attempt.Doing{Phase: p, What: what} }
}

// firstByteHang: the attempt hung waiting for a request's first byte.
func firstByteHang(e *Ended) { e.Hung = &attempt.Doing{Phase: attempt.PhaseWaiting, FirstByte: true} }

func TestRunPaths(t *testing.T) {
	fiveHour := usagelimit.Limit{RetryAt: t0.Add(30 * time.Second), Type: "five_hour", Waitable: true}
	credits := usagelimit.Limit{Type: "overage", Reason: "the account needs credits"}
	cases := []struct {
		name   string
		policy func(*Policy)
		begin  Beginning
		steps  []pathStep
	}{
		{"a new run: one attempt, success", nil, Beginning{FirstAttempt: 1}, []pathStep{
			{want: "start 1 new new-0 prompt.md"},
			{ended: ended(attempt.Success, "new-0", true), want: "end success"},
		}},
		{"hang, then the session is resumed naming the cut-off call", nil, Beginning{FirstAttempt: 1}, []pathStep{
			{want: "start 1 new new-0 prompt.md"},
			{ended: ended(attempt.Hang, "new-0", true, withCut(bash)), want: "start 2 resume new-0 resume.md", stands: "processing cut 1+0 calls 0+0 tasks",
				check: func(t *testing.T, s State, a Action) {
					if d := a.Attempt.Prompt.Data; len(d.Interrupted) != 1 || d.Interrupted[0] != bash || d.Reason != "hang happened" {
						t.Errorf("resume prompt data %+v", d)
					}
					if a.Decision.Kind != Resume || a.Attempt.Because.Kind != Resume {
						t.Errorf("decision %+v, because %+v", a.Decision, a.Attempt.Because)
					}
				}},
			{ended: ended(attempt.Success, "new-0", true), want: "end success", stands: "processing"},
		}},
		{"a hang in a tool call's input gives the next attempts room there, up to MaxRoom, and tells the model", nil, Beginning{FirstAttempt: 1}, []pathStep{
			{want: "start 1 new new-0 prompt.md"},
			{ended: ended(attempt.Hang, "new-0", true, hungIn(attempt.PhaseToolInput, "Write")), want: "start 2 resume new-0 resume.md",
				check: func(t *testing.T, s State, a Action) {
					if s.Room[attempt.PhaseToolInput] != 1 {
						t.Errorf("room %v, want the tool input's doubled once", s.Room)
					}
					if d := a.Attempt.Prompt.Data; !strings.Contains(d.CutReply, "writing the input of a Write call: that call never ran") {
						t.Errorf("resume prompt data %+v", d)
					}
				}},
			{ended: ended(attempt.Hang, "new-0", true, hungIn(attempt.PhaseToolInput, "Write")), want: "sleep 5s"},
			{at: 5 * time.Second, want: "start 3 resume new-0 resume.md"},
			{at: time.Hour, ended: ended(attempt.Hang, "new-0", true, hungIn(attempt.PhaseToolInput, "Write")), want: "sleep 15s",
				check: func(t *testing.T, s State, a Action) {
					if s.Room[attempt.PhaseToolInput] != attempt.MaxRoom {
						t.Errorf("room %v, want the tool input's at MaxRoom", s.Room)
					}
				}},
		}},
		{"a request never answered gives no room; the same wait hung twice in a row does", nil, Beginning{FirstAttempt: 1}, []pathStep{
			{want: "start 1 new new-0 prompt.md"},
			{ended: ended(attempt.Hang, "new-0", true, firstByteHang), want: "start 2 resume new-0 resume.md",
				check: func(t *testing.T, s State, a Action) {
					if s.Room != (attempt.Room{}) {
						t.Errorf("room %v after one request never answered, want none", s.Room)
					}
				}},
			{ended: ended(attempt.Success, "new-0", true), want: "end success"},
		}},
		{"a slow first byte twice in a row", nil, Beginning{FirstAttempt: 1}, []pathStep{
			{want: "start 1 new new-0 prompt.md"},
			{ended: ended(attempt.Hang, "new-0", true, firstByteHang), want: "start 2 resume new-0 resume.md"},
			{ended: ended(attempt.Hang, "new-0", true, firstByteHang), want: "sleep 5s",
				check: func(t *testing.T, s State, a Action) {
					if s.Room[attempt.PhaseWaiting] != 1 {
						t.Errorf("room %v, want the wait doubled once", s.Room)
					}
				}},
		}},
		{"a hang mid-text or in a tool gives no room", nil, Beginning{FirstAttempt: 1}, []pathStep{
			{want: "start 1 new new-0 prompt.md"},
			{ended: ended(attempt.Hang, "new-0", true, hungIn(attempt.PhaseText, "")), want: "start 2 resume new-0 resume.md",
				check: func(t *testing.T, s State, a Action) {
					if d := a.Attempt.Prompt.Data; !strings.Contains(d.CutReply, "while you were writing text") {
						t.Errorf("resume prompt data %+v", d)
					}
				}},
			{ended: ended(attempt.Hang, "new-0", true, hungIn(attempt.PhaseTool, "Bash"), withCut(bash)), want: "sleep 5s",
				check: func(t *testing.T, s State, a Action) {
					if s.Room != (attempt.Room{}) || s.Pending.Prompt.Data.CutReply != "" || len(s.Pending.Prompt.Data.Interrupted) != 1 {
						t.Errorf("room %v, prompt data %+v: want no room, no cut reply, the cut call", s.Room, s.Pending.Prompt.Data)
					}
				}},
		}},
		{"a second hang waits the backoff first", nil, Beginning{FirstAttempt: 1}, []pathStep{
			{want: "start 1 new new-0 prompt.md"},
			{ended: ended(attempt.Hang, "new-0", true), want: "start 2 resume new-0 resume.md"},
			{at: time.Minute, ended: ended(attempt.Crash, "new-0", false), want: "sleep 5s"},
			{at: time.Minute + 5*time.Second, want: "start 3 resume new-0 resume.md"},
		}},
		{"a hang before any reply starts afresh with the task", nil, Beginning{FirstAttempt: 1}, []pathStep{
			{want: "start 1 new new-0 prompt.md"},
			{ended: ended(attempt.Hang, "new-0", false), want: "start 2 new new-1 prompt.md"},
		}},
		{"side effects and no session: not safe to retry", nil, Beginning{FirstAttempt: 1}, []pathStep{
			{want: "start 1 new new-0 prompt.md"},
			{ended: ended(attempt.Hang, "new-0", true, withCalls(bash)), want: "start 2 resume new-0 resume.md"},
			{ended: ended(attempt.ResumeNotFound, "new-0", false), want: "end not_safe_to_retry: no session to resume, and a fresh start would repeat 1 tool call(s) with side effects (Bash)"},
		}},
		{"context pressure: checkpoint, then a continuation seeded with it", nil, Beginning{FirstAttempt: 1}, []pathStep{
			{want: "start 1 new new-0 prompt.md"},
			{ended: ended(attempt.ContextPressure, "new-0", true, withCalls(bash)), want: "start 2 resume new-0 checkpoint.md checkpoint"},
			{ended: ended(attempt.Success, "new-0", true, withReply("done so far <checkpoint>state</checkpoint>")), want: "start 3 new new-2 continuation.md",
				check: func(t *testing.T, s State, a Action) {
					if s.Checkpoint != "state" || a.Attempt.Prompt.Data.Checkpoint != "state" || s.Continuations != 1 || len(s.SideEffects) != 0 {
						t.Errorf("state %+v, prompt %+v", s, a.Attempt.Prompt.Data)
					}
				}},
			// The new session hangs before its first reply: a fresh start
			// repeats the prompt it began with, the continuation.
			{ended: ended(attempt.Hang, "new-2", false), want: "start 4 new new-3 attempt-3.prompt.md"},
			{ended: ended(attempt.Success, "new-3", true), want: "end success"},
		}},
		{"a checkpoint request that hangs falls back to the task", nil, Beginning{FirstAttempt: 1}, []pathStep{
			{want: "start 1 new new-0 prompt.md"},
			{ended: ended(attempt.ContextPressure, "new-0", true), want: "start 2 resume new-0 checkpoint.md checkpoint"},
			{ended: ended(attempt.Hang, "new-0", false), want: "start 3 new new-2 fallback.md",
				check: func(t *testing.T, s State, a Action) {
					if a.Decision.Kind != Fallback || !strings.HasPrefix(a.Decision.Reason, "no checkpoint: ") || s.Checkpoint != "" {
						t.Errorf("decision %+v, checkpoint %q", a.Decision, s.Checkpoint)
					}
				}},
		}},
		{"a refused checkpoint (usage limit) is waited out and asked again", func(p *Policy) { p.LimitWait = time.Minute }, Beginning{FirstAttempt: 1}, []pathStep{
			{want: "start 1 new new-0 prompt.md"},
			{ended: ended(attempt.ContextPressure, "new-0", true), want: "start 2 resume new-0 checkpoint.md checkpoint"},
			{ended: ended(attempt.RateLimit, "new-0", false, withLimit(fiveHour)), want: "sleep 30s limit five_hour", stands: "waiting limit five_hour 12:00:30",
				check: func(t *testing.T, s State, a Action) {
					if !s.Waiting() || !s.Limit.RetryAt.Equal(fiveHour.RetryAt) || s.Limit.LimitType != "five_hour" || a.Met == nil {
						t.Errorf("state while waiting: %+v (met %v)", s, a.Met)
					}
				}},
			{at: 30 * time.Second, want: "start 3 resume new-0 checkpoint.md checkpoint", stands: "processing",
				check: func(t *testing.T, s State, a Action) {
					if s.Waiting() || s.Limit != (record.UsageLimit{}) || !s.Checkpointing || s.AttemptsAtStart != 1 {
						t.Errorf("state after the wait: %+v", s)
					}
					if !strings.Contains(a.Attempt.Prompt.Data.LimitNote, "usage limit (five_hour)") {
						t.Errorf("no limit note: %+v", a.Attempt.Prompt.Data)
					}
				}},
			{ended: ended(attempt.Success, "new-0", true, withReply("<checkpoint>c</checkpoint>")), want: "start 4 new new-4 continuation.md"},
		}},
		{"a usage limit beyond limit_wait: exit 75 with the reset", func(p *Policy) { p.LimitWait = 10 * time.Second }, Beginning{FirstAttempt: 1}, []pathStep{
			{want: "start 1 new new-0 prompt.md"},
			{ended: ended(attempt.RateLimit, "new-0", false, withLimit(fiveHour)), want: "end rate_limit: usage limit (five_hour) until 12:00 UTC; the five_hour limit resets at 2026-11-26T12:00:30Z, in 30s, beyond what is left of limit_wait (10s)",
				// The limit the run stops on; Close makes the status.
				stands: "processing limit five_hour 12:00:30",
				check: func(t *testing.T, s State, a Action) {
					if !s.Limit.RetryAt.Equal(fiveHour.RetryAt) || s.Limit.LimitType != "five_hour" || a.Met == nil {
						t.Errorf("end %+v, limit %+v", a, s.Limit)
					}
				}},
		}},
		{"limit_wait 0 never waits, not even for a reset already past", nil, Beginning{FirstAttempt: 1}, []pathStep{
			{want: "start 1 new new-0 prompt.md"},
			{at: time.Minute, ended: ended(attempt.RateLimit, "new-0", true, withLimit(fiveHour)), want: "end rate_limit: usage limit (five_hour) until 12:00 UTC; limit_wait is 0"},
		}},
		{"a limit that needs credits is not waited for", func(p *Policy) { p.LimitWait = time.Hour }, Beginning{FirstAttempt: 1}, []pathStep{
			{want: "start 1 new new-0 prompt.md"},
			{ended: ended(attempt.RateLimit, "new-0", true, withLimit(credits)), want: "end rate_limit: usage limit (overage); the account needs credits",
				stands: "processing limit overage"},
		}},
		{"the same limit again after its reset stops", func(p *Policy) { p.LimitWait = time.Hour }, Beginning{FirstAttempt: 1}, []pathStep{
			{want: "start 1 new new-0 prompt.md"},
			{ended: ended(attempt.RateLimit, "new-0", true, withLimit(fiveHour)), want: "sleep 30s limit five_hour"},
			{at: 30 * time.Second, want: "start 2 resume new-0 resume.md"},
			{at: 31 * time.Second, ended: ended(attempt.RateLimit, "new-0", false, withLimit(fiveHour)), want: "end rate_limit: usage limit (five_hour) until 12:00 UTC; the limit was still in force after its reset at 2026-11-26T12:00:30Z"},
		}},
		{"a limit known before the first attempt is waited out", func(p *Policy) { p.LimitWait = time.Minute },
			Beginning{FirstAttempt: 1, Shared: fiveHour}, []pathStep{
				{want: "sleep 30s limit five_hour", stands: "waiting limit five_hour 12:00:30"},
				{at: 30 * time.Second, want: "start 1 new new-0 prompt.md", stands: "processing"},
			}},
		{"session_timeout ends a backoff, and the run", func(p *Policy) { p.Deadline = t0.Add(2 * time.Minute) }, Beginning{FirstAttempt: 1}, []pathStep{
			{want: "start 1 new new-0 prompt.md"},
			{ended: ended(attempt.Hang, "new-0", true), want: "start 2 resume new-0 resume.md"},
			{at: 118 * time.Second, ended: ended(attempt.Hang, "new-0", false), want: "sleep 2s"},
			{at: 2 * time.Minute, want: "end session_timeout: session_timeout elapsed while waiting to retry"},
		}},
		{"session_timeout past before a retry at once", func(p *Policy) { p.Deadline = t0.Add(time.Minute) }, Beginning{FirstAttempt: 1}, []pathStep{
			{want: "start 1 new new-0 prompt.md"},
			{at: time.Minute, ended: ended(attempt.Hang, "new-0", true), want: "end session_timeout: session_timeout elapsed before the next attempt"},
		}},
		{"the cost cap: each attempt gets what is left, then the run stops", func(p *Policy) { p.MaxCostUSD = 1 }, Beginning{FirstAttempt: 1}, []pathStep{
			{want: "start 1 new new-0 prompt.md budget $1.00"},
			{ended: ended(attempt.Hang, "new-0", true, withCost(0.75)), want: "start 2 resume new-0 resume.md budget $0.25"},
			{ended: ended(attempt.Crash, "new-0", true, withCost(0.25)), want: "end budget: the run has cost $1.0000, at or above max_cost_usd $1.0000"},
		}},
		{"a reclaimed run resumes its session naming the calls in flight",
			nil, Beginning{Continued: true, FirstAttempt: 3, Record: Recorded{Attempts: 2, NotCounted: 1, SessionID: "s-1", SessionTalked: true,
				InFlight: record.InFlight{Running: []stream.ToolUse{bash}}, SideEffects: map[string]int{"Bash": 1}, Reclaims: 2}}, []pathStep{
				{want: "start 3 resume s-1 resume.md", stands: "processing cut 1+0 calls 0+0 tasks reclaims 2", check: func(t *testing.T, s State, a Action) {
					d := a.Attempt.Prompt.Data
					if len(d.Interrupted) != 1 || d.Interrupted[0] != bash || d.Reason != "the previous malarun stopped before the run ended" || s.AttemptsAtStart != 1 {
						t.Errorf("data %+v, state %+v", d, s)
					}
				}},
			}},
		{"a reclaimed run with more calls in flight than it names says how many more",
			nil, Beginning{Continued: true, FirstAttempt: 2, Record: Recorded{Attempts: 1, SessionID: "s-1", SessionTalked: true,
				InFlight: record.InFlight{Running: []stream.ToolUse{bash}, RunningMore: 19_968, Tasks: []stream.Task{{ID: "b1"}}, TasksMore: 7}}}, []pathStep{
				{want: "start 2 resume s-1 resume.md", check: func(t *testing.T, s State, a Action) {
					if d := a.Attempt.Prompt.Data; len(d.Interrupted) != 1 || d.InterruptedMore != 19_968 || len(d.Tasks) != 1 || d.TasksMore != 7 {
						t.Errorf("data %+v", d)
					}
				}},
			}},
		{"a recorded run with only a checkpoint continues from it",
			nil, Beginning{Continued: true, FirstAttempt: 5, Record: Recorded{Attempts: 4, Checkpoint: "cp"}}, []pathStep{
				{want: "start 5 new new-0 continuation.md"},
				{ended: ended(attempt.Hang, "new-0", false), want: "start 6 new new-1 attempt-5.prompt.md"},
			}},
		{"a recorded run with no session and side effects is not safe",
			nil, Beginning{Continued: true, FirstAttempt: 2, Record: Recorded{Attempts: 1, SideEffects: map[string]int{"Write": 1}}}, []pathStep{
				{want: "end not_safe_to_retry: the recorded run has no session to resume"},
			}},
		{"a recorded run waiting for a reset still ahead waits for it again, then resumes told why", func(p *Policy) { p.LimitWait = time.Minute },
			Beginning{Continued: true, FirstAttempt: 2, Record: Recorded{Attempts: 1, SessionID: "s-1", Limited: true,
				Limit: record.UsageLimit{RetryAt: fiveHour.RetryAt, LimitType: "five_hour"}}}, []pathStep{
				{want: "sleep 30s limit five_hour", stands: "waiting limit five_hour 12:00:30"},
				{at: 30 * time.Second, want: "start 2 resume s-1 resume.md", stands: "processing", check: func(t *testing.T, s State, a Action) {
					if !strings.Contains(a.Attempt.Prompt.Data.LimitNote, "five_hour") {
						t.Errorf("no limit note: %+v", a.Attempt.Prompt.Data)
					}
				}},
			}},
		{"a recorded run stopped by a usage limit is told why when resumed",
			nil, Beginning{Continued: true, FirstAttempt: 2, Record: Recorded{Attempts: 1, SessionID: "s-1", Limited: true,
				Limit: record.UsageLimit{RetryAt: t0.Add(-time.Minute), LimitType: "five_hour"}}}, []pathStep{
				// The recorded reset is past (no Pending): no limit in force.
				{want: "start 2 resume s-1 resume.md", stands: "processing", check: func(t *testing.T, s State, a Action) {
					if !strings.Contains(a.Attempt.Prompt.Data.LimitNote, "five_hour") {
						t.Errorf("no limit note: %+v", a.Attempt.Prompt.Data)
					}
				}},
			}},
		{"background tasks cut off: resumed, the prompt names them", nil, Beginning{FirstAttempt: 1}, []pathStep{
			{want: "start 1 new new-0 prompt.md"},
			{ended: ended(attempt.Hang, "new-0", true, withTasks(stream.Task{ID: "b1", Command: "make test"})), want: "start 2 resume new-0 resume.md",
				stands: "processing cut 0+0 calls 1+0 tasks",
				check: func(t *testing.T, s State, a Action) {
					if tk := a.Attempt.Prompt.Data.Tasks; len(tk) != 1 || tk[0].ID != "b1" {
						t.Errorf("tasks %+v", tk)
					}
				}},
		}},
		{"a prompt lost in a new session: a fresh session with the same prompt, until max_idle_retries", nil, Beginning{FirstAttempt: 1}, []pathStep{
			{want: "start 1 new new-0 prompt.md"},
			{ended: ended(attempt.PromptLost, "new-0", false, of(1, "new-0", false, Prompt{Template: NoTemplate})), want: "start 2 new new-1 prompt.md",
				check: func(t *testing.T, s State, a Action) {
					if a.Decision.Kind != Fresh || s.IdleRetries != 1 || s.SessionPrompt != 0 {
						t.Errorf("decision %+v, state %+v", a.Decision, s)
					}
				}},
			{ended: ended(attempt.PromptLost, "new-1", false, of(2, "new-1", false, Prompt{Template: NoTemplate})), want: "sleep 5s"},
			{at: 5 * time.Second, want: "start 3 new new-2 prompt.md"},
			{at: 6 * time.Second, ended: ended(attempt.PromptLost, "new-2", false, of(3, "new-2", false, Prompt{Template: NoTemplate})),
				want: "end retries_exhausted: 3 attempts in a row without progress (max_idle_retries 2); last: prompt-lost happened"},
		}},
		{"a resume prompt lost: the session resumed with that very prompt, not a new one", nil, Beginning{FirstAttempt: 1}, []pathStep{
			{want: "start 1 new new-0 prompt.md"},
			{ended: ended(attempt.Hang, "new-0", true, withCut(bash)), want: "start 2 resume new-0 resume.md"},
			{ended: ended(attempt.PromptLost, "new-0", false, of(2, "new-0", true, Prompt{Template: ResumeTemplate})), want: "sleep 5s",
				check: func(t *testing.T, s State, a Action) {
					if s.Pending.Prompt.Template != NoTemplate || s.Pending.Prompt.Written != 2 || !s.Pending.Resume || s.SessionID != "new-0" {
						t.Errorf("pending %+v, session %q: want attempt 2's own prompt, resumed", s.Pending, s.SessionID)
					}
				}},
			{at: 5 * time.Second, want: "start 3 resume new-0 attempt-2.prompt.md"},
			{ended: ended(attempt.Success, "new-0", true), want: "end success"},
		}},
		{"a continuation's prompt lost: a fresh session with the continuation again", nil, Beginning{FirstAttempt: 1}, []pathStep{
			{want: "start 1 new new-0 prompt.md"},
			{ended: ended(attempt.ContextPressure, "new-0", true), want: "start 2 resume new-0 checkpoint.md checkpoint"},
			{ended: ended(attempt.Success, "new-0", true, withReply("<checkpoint>state</checkpoint>")), want: "start 3 new new-2 continuation.md"},
			{ended: ended(attempt.PromptLost, "new-2", false, of(3, "new-2", false, Prompt{Template: ContinuationTemplate})), want: "start 4 new new-3 attempt-3.prompt.md"},
			// The new session hangs before its first reply: a fresh start
			// repeats the prompt it began with, the continuation still.
			{ended: ended(attempt.Hang, "new-3", false), want: "sleep 5s"},
			{at: 5 * time.Second, want: "start 5 new new-4 attempt-3.prompt.md"},
		}},
		{"a checkpoint request's prompt lost: asked again, still a checkpoint", nil, Beginning{FirstAttempt: 1}, []pathStep{
			{want: "start 1 new new-0 prompt.md"},
			{ended: ended(attempt.ContextPressure, "new-0", true), want: "start 2 resume new-0 checkpoint.md checkpoint"},
			{ended: ended(attempt.PromptLost, "new-0", false, of(2, "new-0", true, Prompt{Template: CheckpointTemplate}),
				func(e *Ended) { e.Attempt.Checkpoint = true }), want: "start 3 resume new-0 attempt-2.prompt.md checkpoint"},
			{ended: ended(attempt.Success, "new-0", true, withReply("<checkpoint>c</checkpoint>")), want: "start 4 new new-3 continuation.md"},
		}},
		{"a start-up failure that can pass is tried again like a crash before any reply", nil, Beginning{FirstAttempt: 1}, []pathStep{
			{want: "start 1 new new-0 prompt.md"},
			{ended: ended(attempt.StartupFailed, "new-0", false), want: "start 2 new new-1 prompt.md"},
			{ended: ended(attempt.StartupFailed, "new-1", false), want: "sleep 5s"},
			{at: 5 * time.Second, want: "start 3 new new-2 prompt.md"},
			{at: 6 * time.Second, ended: ended(attempt.StartupFailed, "new-2", false),
				want: "end retries_exhausted: 3 attempts in a row without progress (max_idle_retries 2); last: startup-failed happened"},
		}},
		{"the CLI's own limit sleeps come out of limit_wait", func(p *Policy) { p.LimitWait = time.Minute }, Beginning{FirstAttempt: 1}, []pathStep{
			{want: "start 1 new new-0 prompt.md"},
			{ended: ended(attempt.RateLimit, "new-0", true, withLimit(fiveHour), func(e *Ended) { e.CLIWaited = 40 * time.Second }),
				want: "end rate_limit: usage limit (five_hour) until 12:00 UTC; the five_hour limit resets at 2026-11-26T12:00:30Z, in 30s, beyond what is left of limit_wait (20s)"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Policy{MaxAttempts: 10, MaxIdleRetries: 2, Backoff: DefaultBackoff(), SideEffectFree: map[string]bool{"Read": true}}
			if c.policy != nil {
				c.policy(&p)
			}
			var s State
			for i, st := range c.steps {
				now, d := t0.Add(st.at), Draws{NewSession: fmt.Sprintf("new-%d", i)}
				var a Action
				switch {
				case i == 0:
					s, a = Begin(p, c.begin, now, d)
				case st.ended != nil:
					s, a = Next(p, s, *st.ended, now, d)
				default:
					s, a = Woke(p, s, now)
				}
				got := show(s, a, now)
				if got != st.want && !(strings.HasPrefix(st.want, "end ") && strings.HasPrefix(got, st.want)) {
					t.Fatalf("step %d:\n got %s\nwant %s", i+1, got, st.want)
				}
				if got := stood(s.Standing); st.stands != "" && got != st.stands {
					t.Errorf("step %d stands %q, want %q", i+1, got, st.stands)
				}
				if st.check != nil {
					st.check(t, s, a)
				}
			}
		})
	}
}

// What a record says of the calls and tasks in flight reaches Begin: the
// ones named and how many more (record.MaxInFlight, docs/design.md §D37).
func TestRecordedOfKeepsTheCountsInFlight(t *testing.T) {
	rec := record.Record{InFlight: record.InFlight{Running: []stream.ToolUse{{Name: "Bash", Input: "make"}}, RunningMore: 12,
		Tasks: []stream.Task{{ID: "b1", Command: "make test"}}, TasksMore: 3}, PhaseRoom: map[string]int{"thinking": 2}}
	r := recordedOf(rec).InFlight
	if len(r.Running) != 1 || r.Running[0] != (stream.ToolUse{Name: "Bash", Input: "make"}) || r.RunningMore != 12 ||
		len(r.Tasks) != 1 || r.Tasks[0].Command != "make test" || r.TasksMore != 3 || recordedOf(rec).Room[attempt.PhaseThinking] != 2 {
		t.Errorf("RecordedOf = %+v", recordedOf(rec))
	}
	s, a := Begin(Policy{MaxAttempts: 1}, Beginning{Continued: true, FirstAttempt: 2, Record: recordedOf(rec)}, t0, Draws{NewSession: "n"})
	if d := a.Attempt.Prompt.Data; len(d.Interrupted) != 1 || d.Interrupted[0] != (stream.ToolUse{Name: "Bash", Input: "make"}) || d.InterruptedMore != 12 ||
		len(d.Tasks) != 1 || d.Tasks[0].Command != "make test" || d.TasksMore != 3 {
		t.Errorf("the resume prompt's data %+v", d)
	}
	if got := stood(s.Standing); got != "processing cut 1+12 calls 1+3 tasks" {
		t.Errorf("stands %q: the record keeps what is cut off until an attempt ends", got)
	}
}
