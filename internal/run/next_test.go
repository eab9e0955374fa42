package run

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/usagelimit"
)

func policy() Policy {
	free := map[string]bool{}
	for _, t := range DefaultSideEffectFree() {
		free[t] = true
	}
	return Policy{MaxAttempts: 10, MaxIdleRetries: 2, Backoff: DefaultBackoff(), SideEffectFree: free}
}

// step is one attempt's outcome and the decision expected after it.
type step struct {
	o       Ended
	kind    DecisionKind
	backoff time.Duration
	failure outcome.Outcome
	reason  string // a substring of the action's reason
}

const sid = "s-1"

var (
	bash = stream.ToolUse{Name: "Bash", Input: "rm -rf build"}
	read = stream.ToolUse{Name: "Read", Input: "main.go"}
)

var t0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// TestNext is the retry decision, attempt after attempt (§D4, §D5, §D6).
func TestNext(t *testing.T) {
	cases := []struct {
		name   string
		policy func(*Policy)
		steps  []step
	}{
		{"success at once", nil, []step{
			{o: Ended{Ending: attempt.Success, SessionID: sid, Progress: true}, kind: Done},
		}},
		{"hang once then success: resume at once", nil, []step{
			{o: Ended{Ending: attempt.Hang, SessionID: sid, Progress: true, Reason: "no output for 3m"}, kind: Resume, backoff: 0},
			{o: Ended{Ending: attempt.Success, SessionID: sid, Progress: true}, kind: Done},
		}},
		{"backoff 0s, 5s, 15s, then 15s again", func(p *Policy) { p.MaxIdleRetries = 10 }, []step{
			{o: Ended{Ending: attempt.Hang, SessionID: sid, Progress: true}, kind: Resume, backoff: 0},
			{o: Ended{Ending: attempt.Crash, SessionID: sid}, kind: Resume, backoff: 5 * time.Second},
			{o: Ended{Ending: attempt.Hang, SessionID: sid}, kind: Resume, backoff: 15 * time.Second},
			{o: Ended{Ending: attempt.Hang, SessionID: sid}, kind: Resume, backoff: 15 * time.Second},
		}},
		{"hang more than max_idle_retries times after progress: exit 3", nil, []step{
			{o: Ended{Ending: attempt.Hang, SessionID: sid, Progress: true}, kind: Resume},
			{o: Ended{Ending: attempt.Hang, SessionID: sid}, kind: Resume, backoff: 5 * time.Second},
			{o: Ended{Ending: attempt.Hang, SessionID: sid}, kind: Resume, backoff: 15 * time.Second},
			{o: Ended{Ending: attempt.Hang, SessionID: sid, Reason: "no output for 3m"}, kind: Fail, failure: outcome.RetriesExhausted, reason: "3 attempts in a row without progress (max_idle_retries 2); last: no output for 3m"},
		}},
		{"progress resets the idle count", nil, []step{
			{o: Ended{Ending: attempt.Hang, SessionID: sid, Progress: true}, kind: Resume},
			{o: Ended{Ending: attempt.Hang, SessionID: sid}, kind: Resume, backoff: 5 * time.Second},
			{o: Ended{Ending: attempt.Hang, SessionID: sid}, kind: Resume, backoff: 15 * time.Second},
			{o: Ended{Ending: attempt.Crash, SessionID: sid, Progress: true}, kind: Resume, backoff: 15 * time.Second},
			{o: Ended{Ending: attempt.Hang, SessionID: sid}, kind: Resume, backoff: 15 * time.Second},
			{o: Ended{Ending: attempt.Success, SessionID: sid}, kind: Done},
		}},
		{"max_attempts caps progressing retries", func(p *Policy) { p.MaxAttempts = 3 }, []step{
			{o: Ended{Ending: attempt.Hang, SessionID: sid, Progress: true}, kind: Resume},
			{o: Ended{Ending: attempt.Hang, SessionID: sid, Progress: true}, kind: Resume, backoff: 5 * time.Second},
			{o: Ended{Ending: attempt.Crash, SessionID: sid, Progress: true, Reason: "exited"}, kind: Fail, failure: outcome.RetriesExhausted, reason: "3 attempts, the most max_attempts allows; last: exited"},
		}},
		{"hang before any message, no tool calls: fresh start", nil, []step{
			{o: Ended{Ending: attempt.Hang, SessionID: sid}, kind: Fresh, backoff: 0},
			{o: Ended{Ending: attempt.Success, SessionID: "s-2", Progress: true}, kind: Done},
		}},
		{"tool calls, then the session cannot be resumed: exit 4", nil, []step{
			{o: Ended{Ending: attempt.Hang, SessionID: sid, Progress: true, ToolCalls: []stream.ToolUse{bash, read, bash}}, kind: Resume},
			{o: Ended{Ending: attempt.ResumeNotFound, SessionID: sid}, kind: Fail, failure: outcome.NotSafeToRetry, reason: "repeat 2 tool call(s) with side effects (Bash ×2)"},
		}},
		{"only side-effect-free tools: fresh start after resume fails", nil, []step{
			{o: Ended{Ending: attempt.Crash, SessionID: sid, Progress: true, ToolCalls: []stream.ToolUse{read, {Name: "Grep"}}}, kind: Resume},
			{o: Ended{Ending: attempt.ResumeNotFound, SessionID: sid}, kind: Fresh, backoff: 5 * time.Second},
			{o: Ended{Ending: attempt.Success, SessionID: "s-2", Progress: true}, kind: Done},
		}},
		{"side-effect-free list is configurable", func(p *Policy) { p.SideEffectFree = map[string]bool{"Bash": true} }, []step{
			{o: Ended{Ending: attempt.Hang, SessionID: sid, Progress: true, ToolCalls: []stream.ToolUse{bash}}, kind: Resume},
			{o: Ended{Ending: attempt.ResumeNotFound, SessionID: sid}, kind: Fresh, backoff: 5 * time.Second},
		}},
		{"no session known after a crash with side effects: exit 4", nil, []step{
			{o: Ended{Ending: attempt.Crash, ToolCalls: []stream.ToolUse{{Name: "Write"}}}, kind: Fail, failure: outcome.NotSafeToRetry, reason: "(Write)"},
		}},
		{"cost cap", func(p *Policy) { p.MaxCostUSD = 1 }, []step{
			{o: Ended{Ending: attempt.Hang, SessionID: sid, Progress: true, CostUSD: 0.6}, kind: Resume},
			{o: Ended{Ending: attempt.Crash, SessionID: sid, Progress: true, CostUSD: 0.5}, kind: Fail, failure: outcome.Budget, reason: "$1.1000, at or above max_cost_usd $1.0000"},
		}},
		{"the CLI stopped at its budget", func(p *Policy) { p.MaxCostUSD = 1 }, []step{
			{o: Ended{Ending: attempt.BudgetExceeded, SessionID: sid, CostUSD: 1, Reason: "max budget"}, kind: Fail, failure: outcome.Budget, reason: "max budget"},
		}},
		{"context pressure: checkpoint, then continue in a new session", nil, []step{
			{o: Ended{Ending: attempt.ContextPressure, SessionID: sid, Progress: true}, kind: Checkpoint},
			{o: Ended{Ending: attempt.Success, SessionID: sid, Progress: true}, kind: Continue, reason: "checkpoint"},
			{o: Ended{Ending: attempt.Success, SessionID: "s-2", Progress: true}, kind: Done},
		}},
		{"the checkpoint request hangs: fall back", nil, []step{
			{o: Ended{Ending: attempt.ContextPressure, SessionID: sid, Progress: true}, kind: Checkpoint},
			{o: Ended{Ending: attempt.Hang, SessionID: sid, Reason: "no output"}, kind: Fallback, reason: "no checkpoint: no output"},
		}},
		{"the checkpoint request is interrupted: stop", nil, []step{
			{o: Ended{Ending: attempt.ContextPressure, SessionID: sid, Progress: true}, kind: Checkpoint},
			{o: Ended{Ending: attempt.Interrupted, SessionID: sid}, kind: Fail, failure: outcome.Interrupted},
		}},
		{"context full mid-session: fall back to a new session", nil, []step{
			{o: Ended{Ending: attempt.ContextFull, SessionID: sid, Progress: true, Reason: "Prompt is too long"}, kind: Fallback, reason: "Prompt is too long"},
		}},
		{"context full after a resume in a session that talked", nil, []step{
			{o: Ended{Ending: attempt.Hang, SessionID: sid, Progress: true}, kind: Resume},
			{o: Ended{Ending: attempt.ContextFull, SessionID: sid}, kind: Fallback},
		}},
		{"context full on the first exchange: exit 1", nil, []step{
			{o: Ended{Ending: attempt.ContextFull, SessionID: sid}, kind: Fail, failure: outcome.ErrorResult, reason: "first exchange"},
		}},
		{"a continuation forgets the old session's side effects and idle retries", nil, []step{
			{o: Ended{Ending: attempt.Hang, SessionID: sid, Progress: true, ToolCalls: []stream.ToolUse{bash}}, kind: Resume},
			{o: Ended{Ending: attempt.ContextFull, SessionID: sid}, kind: Fallback},
			{o: Ended{Ending: attempt.Hang, SessionID: "s-2"}, kind: Fresh, backoff: 5 * time.Second},
		}},
		{"max_continuations: exit 5", func(p *Policy) { p.MaxContinuations = 1 }, []step{
			{o: Ended{Ending: attempt.ContextPressure, SessionID: sid, Progress: true}, kind: Checkpoint},
			{o: Ended{Ending: attempt.Success, SessionID: sid}, kind: Continue},
			{o: Ended{Ending: attempt.ContextPressure, SessionID: "s-2", Progress: true}, kind: Fail, failure: outcome.ContextExhausted, reason: "after 1 continuation(s) (max_continuations 1)"},
		}},
		{"max_continuations 0 is unlimited", nil, []step{
			{o: Ended{Ending: attempt.ContextFull, SessionID: sid, Progress: true}, kind: Fallback},
			{o: Ended{Ending: attempt.ContextFull, SessionID: "s-2", Progress: true}, kind: Fallback},
			{o: Ended{Ending: attempt.ContextFull, SessionID: "s-3", Progress: true}, kind: Fallback},
		}},
		{"a session that cannot be resumed continues from the last checkpoint", nil, []step{
			{o: Ended{Ending: attempt.ContextPressure, SessionID: sid, Progress: true}, kind: Checkpoint},
			{o: Ended{Ending: attempt.Success, SessionID: sid}, kind: Continue},
			{o: Ended{Ending: attempt.Crash, SessionID: "s-2", Progress: true, ToolCalls: []stream.ToolUse{bash}}, kind: Resume},
			{o: Ended{Ending: attempt.ResumeNotFound, SessionID: "s-2"}, kind: Continue, reason: "continuing from the last checkpoint"},
		}},
		{"max_attempts also caps context restarts", func(p *Policy) { p.MaxAttempts = 3 }, []step{
			{o: Ended{Ending: attempt.ContextPressure, SessionID: sid, Progress: true}, kind: Checkpoint},
			{o: Ended{Ending: attempt.Success, SessionID: sid}, kind: Continue},
			{o: Ended{Ending: attempt.ContextFull, SessionID: "s-2", Progress: true}, kind: Fail, failure: outcome.RetriesExhausted, reason: "3 attempts"},
		}},
		{"the budget also stops a checkpoint and a continuation", func(p *Policy) { p.MaxCostUSD = 1 }, []step{
			{o: Ended{Ending: attempt.ContextPressure, SessionID: sid, Progress: true, CostUSD: 0.5}, kind: Checkpoint},
			{o: Ended{Ending: attempt.Success, SessionID: sid, CostUSD: 0.6}, kind: Fail, failure: outcome.Budget},
		}},
		{"429 after the CLI's retries: exit 75", nil, []step{
			{o: Ended{Ending: attempt.RateLimit, SessionID: sid, Reason: "resets at 14:00"}, kind: DecidedNone, failure: outcome.RateLimit, reason: "resets at 14:00"},
		}},
		{"auth failure is never retried", nil, []step{
			{o: Ended{Ending: attempt.Auth, SessionID: sid}, kind: Fail, failure: outcome.Auth},
		}},
		{"an unreachable API is a configuration error: never retried", nil, []step{
			{o: Ended{Ending: attempt.Unreachable, SessionID: sid, Reason: "cannot reach the API at http://h.invalid"}, kind: Fail, failure: outcome.APIUnreachable, reason: "h.invalid"},
		}},
		{"max turns is never retried", nil, []step{
			{o: Ended{Ending: attempt.MaxTurns, SessionID: sid, Progress: true}, kind: Fail, failure: outcome.ErrorResult},
		}},
		{"error result is never retried", nil, []step{
			{o: Ended{Ending: attempt.ErrorResult, SessionID: sid}, kind: Fail, failure: outcome.ErrorResult},
		}},
		{"exit before init is never retried", nil, []step{
			{o: Ended{Ending: attempt.EarlyExit}, kind: Fail, failure: outcome.ErrorResult},
		}},
		{"session timeout", nil, []step{
			{o: Ended{Ending: attempt.SessionTimeout, SessionID: sid, Progress: true}, kind: Fail, failure: outcome.SessionTimeout},
		}},
		{"interrupted", nil, []step{
			{o: Ended{Ending: attempt.Interrupted, SessionID: sid, Progress: true}, kind: Fail, failure: outcome.Interrupted},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := policy()
			if c.policy != nil {
				c.policy(&p)
			}
			s := State{Next: 1, LimitWait: usagelimit.Budget{Total: p.LimitWait}}
			now := t0
			for i, st := range c.steps {
				var a Action
				s, a = Next(p, s, st.o, now, Draws{NewSession: fmt.Sprintf("new-%d", i)})
				failure, reason := outcome.Outcome(""), a.Decision.Reason
				if a.Kind == End {
					reason = a.Reason
					if !a.Succeeded() {
						failure = a.Outcome
					}
				}
				if a.Decision.Kind != st.kind || a.Decision.Backoff != st.backoff || failure != st.failure {
					t.Fatalf("step %d (%v): got %v backoff %v failure %v (%s), want %v backoff %v failure %v",
						i+1, st.o.Ending, a.Decision.Kind, a.Decision.Backoff, failure, reason, st.kind, st.backoff, st.failure)
				}
				if !strings.Contains(reason, st.reason) {
					t.Errorf("step %d: reason %q lacks %q", i+1, reason, st.reason)
				}
				if k := a.Decision.Kind; (k == Resume || k == Checkpoint) && a.Decision.SessionID != st.o.SessionID {
					t.Errorf("step %d: resume session %q", i+1, a.Decision.SessionID)
				}
				if s.Attempts != i+1 {
					t.Errorf("step %d: attempts %d", i+1, s.Attempts)
				}
				if a.Kind == Sleep {
					// The backoff passes: the attempt decided on starts.
					now = a.Until
					if s, a = Woke(p, s, now); a.Kind != Start {
						t.Fatalf("step %d: after the backoff: %+v", i+1, a)
					}
				}
			}
		})
	}
}

func TestNextDoesNotShareStateMaps(t *testing.T) {
	p := policy()
	s0, _ := Next(p, State{}, Ended{Ending: attempt.Hang, SessionID: sid, Progress: true, ToolCalls: []stream.ToolUse{bash}}, t0, Draws{})
	s1, _ := Next(p, s0, Ended{Ending: attempt.Hang, SessionID: sid, Progress: true, ToolCalls: []stream.ToolUse{bash}}, t0, Draws{})
	if s0.SideEffects["Bash"] != 1 || s1.SideEffects["Bash"] != 2 {
		t.Errorf("state mutated in place: %v %v", s0.SideEffects, s1.SideEffects)
	}
}
