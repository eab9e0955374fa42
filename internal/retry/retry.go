// Package retry decides what to do after each attempt: resume the same
// session, start fresh, or stop, and how long to wait first. It is a pure
// state machine (no I/O, no clock) so that every transition is a row in a
// table test. The supervisor feeds it an Outcome and carries out the Action.
package retry

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/outcome"
)

// Kind is how an attempt ended, as the supervisor observed it.
type Kind int

const (
	Success         Kind = iota // result success, is_error false
	Hang                        // silent past idle_timeout or tool_timeout; tree killed
	Crash                       // died without a result line (or with a line cut short)
	ResumeNotFound              // --resume answered "No conversation found"
	ErrorResult                 // an error result retrying cannot fix
	MaxTurns                    // result error_max_turns
	Auth                        // 401/403, or api_retry reporting authentication_failed
	RateLimit                   // 429 after the CLI's own retries, or a rejected rate-limit event
	EarlyExit                   // the CLI exited before its init line: bad arguments, broken install
	SessionTimeout              // session_timeout elapsed
	Interrupted                 // malarun got a shutdown signal
	BudgetExceeded              // the CLI stopped at the --max-budget-usd malarun gave it
	ContextPressure             // malarun stopped the attempt: the context window is nearly full
	ContextFull                 // the CLI says the context is full (prompt too long, blocking limit)
	APIError                    // a transient API or model failure the CLI gave up on (5xx, 529, aborted stream)
	Unreachable                 // the API cannot be reached and never was in this run: a name, a port, a certificate
)

func (k Kind) String() string {
	return [...]string{"success", "hang", "crash", "resume-not-found", "error-result", "max-turns",
		"auth", "rate-limit", "early-exit", "session-timeout", "interrupted", "budget-exceeded", "context-pressure", "context-full", "api-error", "api-unreachable"}[k]
}

// ToolCall is one tool call seen in an attempt.
type ToolCall struct {
	Name  string `json:"name"`
	Input string `json:"input"` // short, for messages
}

// Outcome is what one attempt did.
type Outcome struct {
	Kind Kind
	// SessionID is the session the attempt ran in ("" if none is known).
	SessionID string
	// Progress: the attempt produced new assistant messages.
	Progress bool
	// ToolCalls are the calls the attempt made (completed or not).
	ToolCalls []ToolCall
	// CostUSD is what the attempt cost, as its result line reported.
	CostUSD float64
	// Reason is a sentence for messages: "no output for 3m0s (idle_timeout)".
	Reason string
}

// Policy holds the limits, from the configuration.
type Policy struct {
	MaxAttempts    int             // attempts in all, first included
	MaxIdleRetries int             // retries in a row without progress
	Backoff        []time.Duration // wait before retry N (1-based); the last repeats
	MaxCostUSD     float64         // 0 = no cap
	// MaxContinuations caps the fresh sessions started because the context
	// filled up; 0 = unlimited.
	MaxContinuations int
	// SideEffectFree names tools whose calls are safe to repeat.
	SideEffectFree map[string]bool
}

// State is what the machine remembers between attempts.
type State struct {
	Attempts int // attempts finished
	// AttemptsAtStart are the attempts of an earlier invocation that
	// stopped on its limits: max_attempts counts from here.
	AttemptsAtStart int
	Retries         int    // retries decided so far
	IdleRetries     int    // retries in a row after attempts without progress
	SessionID       string // the current session ("" = none known)
	// SessionTalked: the current session has at least one assistant message,
	// so resuming it carries work forward. A session that never got a reply
	// holds nothing a fresh start with the original prompt would not.
	SessionTalked bool
	CostUSD       float64 // summed over every attempt
	// SideEffects counts calls of tools not in SideEffectFree, by tool name,
	// over the whole run: a fresh start would repeat them.
	SideEffects map[string]int
	LastReason  string
	// Checkpointing: the last attempt resumed the session to ask for a
	// checkpoint before a context restart.
	Checkpointing bool
	// Continuations counts fresh sessions started because the context filled.
	Continuations int
	// HasCheckpoint: a checkpoint of this run exists, so a session that
	// cannot be resumed can be continued from it instead.
	HasCheckpoint bool
}

// ActionKind is what the supervisor does next.
type ActionKind int

const (
	Done       ActionKind = iota // success: finish with exit 0
	Resume                       // --resume SessionID with the resume prompt
	Fresh                        // a new session with the original prompt
	Fail                         // stop with Fail
	Checkpoint                   // --resume SessionID with the checkpoint request prompt
	Continue                     // a new session seeded with the checkpoint from the last attempt
	Fallback                     // a new session with the fallback prompt (original task; inspect the tree)
)

func (a ActionKind) String() string {
	return [...]string{"done", "resume", "fresh", "fail", "checkpoint", "continue", "fallback"}[a]
}

// Action is the decision.
type Action struct {
	Kind      ActionKind
	SessionID string          // for Resume
	Backoff   time.Duration   // wait before the next attempt
	Failure   outcome.Outcome // for Fail: why the run stops
	Reason    string          // why, in a sentence
}

// Next folds one attempt's outcome into the state and decides what follows.
func Next(p Policy, s State, o Outcome) (State, Action) {
	s = s.clone()
	s.Attempts++
	s.CostUSD += o.CostUSD
	switch {
	case o.Kind == ResumeNotFound:
		s.SessionID, s.SessionTalked = "", false
	case o.SessionID != "" && o.SessionID != s.SessionID:
		s.SessionID, s.SessionTalked = o.SessionID, o.Progress
	default:
		s.SessionTalked = s.SessionTalked || o.Progress
	}
	for _, c := range o.ToolCalls {
		if !p.SideEffectFree[c.Name] {
			s.SideEffects[c.Name]++
		}
	}
	if o.Reason != "" {
		s.LastReason = o.Reason
	}

	checkpointing := s.Checkpointing
	s.Checkpointing = false
	if fail, ok := final(o.Kind); ok && (!checkpointing || stopsCheckpoint(o.Kind)) {
		return s, Action{Kind: Fail, Failure: fail, Reason: o.Reason}
	}
	if o.Kind == ContextFull && !s.SessionTalked && !checkpointing {
		return s, Action{Kind: Fail, Failure: outcome.ErrorResult, Reason: o.Reason +
			" (on the first exchange of a session: a fresh session cannot help; shorten the prompt)"}
	}
	if o.Kind != Success || checkpointing {
		// Every way on starts another attempt: the caps apply to all of them.
		if p.MaxCostUSD > 0 && s.CostUSD >= p.MaxCostUSD {
			return s, Action{Kind: Fail, Failure: outcome.Budget, Reason: fmt.Sprintf(
				"the run has cost $%.4f, at or above max_cost_usd $%.4f", s.CostUSD, p.MaxCostUSD)}
		}
		if n := s.Attempts - s.AttemptsAtStart; n >= p.MaxAttempts {
			return s, Action{Kind: Fail, Failure: outcome.RetriesExhausted, Reason: fmt.Sprintf(
				"%d attempts, the most max_attempts allows; last: %s", n, s.LastReason)}
		}
	}
	switch {
	case checkpointing && o.Kind == Success:
		return s.restart(p, Continue, "the checkpoint is written")
	case checkpointing:
		// The checkpoint request failed (hung, crashed, or the context was
		// too full even for it): go on without one.
		return s.restart(p, Fallback, "no checkpoint: "+o.Reason)
	case o.Kind == Success:
		return s, Action{Kind: Done, Reason: "claude reported success"}
	case o.Kind == ContextPressure:
		if p.MaxContinuations > 0 && s.Continuations >= p.MaxContinuations {
			return s, Action{Kind: Fail, Failure: outcome.ContextExhausted, Reason: fmt.Sprintf(
				"the context filled up again after %d continuation(s) (max_continuations %d)", s.Continuations, p.MaxContinuations)}
		}
		s.Checkpointing = true
		return s, Action{Kind: Checkpoint, SessionID: s.SessionID, Reason: o.Reason}
	case o.Kind == ContextFull:
		return s.restart(p, Fallback, o.Reason)
	}
	// A hang, a crash, an API failure, or a session that cannot be resumed:
	// retry if allowed.
	if o.Progress && o.Kind != ResumeNotFound {
		s.IdleRetries = 0
	} else {
		s.IdleRetries++
	}
	if s.IdleRetries > p.MaxIdleRetries {
		return s, Action{Kind: Fail, Failure: outcome.RetriesExhausted, Reason: fmt.Sprintf(
			"%d attempts in a row without progress (max_idle_retries %d); last: %s", s.IdleRetries, p.MaxIdleRetries, s.LastReason)}
	}
	if o.Kind == ResumeNotFound && s.HasCheckpoint {
		return s.restart(p, Continue, o.Reason+"; continuing from the last checkpoint")
	}
	if s.SessionID != "" && s.SessionTalked {
		s.Retries++
		return s, Action{Kind: Resume, SessionID: s.SessionID, Backoff: p.backoff(s.Retries), Reason: o.Reason}
	}
	if n := s.sideEffectCount(); n > 0 {
		return s, Action{Kind: Fail, Failure: outcome.NotSafeToRetry, Reason: fmt.Sprintf(
			"no session to resume, and a fresh start would repeat %d tool call(s) with side effects (%s)", n, s.sideEffectTools())}
	}
	s.Retries++
	s.SessionID, s.SessionTalked = "", false
	return s, Action{Kind: Fresh, Backoff: p.backoff(s.Retries), Reason: o.Reason}
}

// restart starts a new session because the context filled: the
// continuation prompt carries the work forward, so the new session starts
// with a clean slate (no idle retries, no side effects it would repeat).
func (s State) restart(p Policy, kind ActionKind, reason string) (State, Action) {
	if p.MaxContinuations > 0 && s.Continuations >= p.MaxContinuations {
		return s, Action{Kind: Fail, Failure: outcome.ContextExhausted, Reason: fmt.Sprintf(
			"the context filled up again after %d continuation(s) (max_continuations %d)", s.Continuations, p.MaxContinuations)}
	}
	s.Continuations++
	s.HasCheckpoint = s.HasCheckpoint || kind == Continue
	s.SessionID, s.SessionTalked, s.IdleRetries = "", false, 0
	s.SideEffects = map[string]int{}
	return s, Action{Kind: kind, Reason: reason}
}

// stopsCheckpoint: outcomes that end the run even while a checkpoint is
// being asked for; any other failure of the checkpoint request falls back.
func stopsCheckpoint(k Kind) bool {
	switch k {
	case Auth, RateLimit, SessionTimeout, Interrupted, BudgetExceeded, Unreachable:
		return true
	}
	return false
}

// final maps outcomes that retrying cannot fix to their failure.
func final(k Kind) (outcome.Outcome, bool) {
	switch k {
	case ErrorResult, MaxTurns, EarlyExit:
		return outcome.ErrorResult, true
	case Auth:
		return outcome.Auth, true
	case Unreachable:
		return outcome.APIUnreachable, true
	case RateLimit:
		return outcome.RateLimit, true
	case SessionTimeout:
		return outcome.SessionTimeout, true
	case Interrupted:
		return outcome.Interrupted, true
	case BudgetExceeded:
		return outcome.Budget, true
	}
	return "", false
}

// backoff is the wait before retry n (1-based); the last entry repeats.
func (p Policy) backoff(n int) time.Duration {
	if len(p.Backoff) == 0 {
		return 0
	}
	return p.Backoff[min(n, len(p.Backoff))-1]
}

func (s State) clone() State {
	m := make(map[string]int, len(s.SideEffects))
	for k, v := range s.SideEffects {
		m[k] = v
	}
	s.SideEffects = m
	return s
}

func (s State) sideEffectCount() int {
	n := 0
	for _, v := range s.SideEffects {
		n += v
	}
	return n
}

// sideEffectTools lists the tools as "Bash ×3, Write".
func (s State) sideEffectTools() string {
	names := make([]string, 0, len(s.SideEffects))
	for k := range s.SideEffects {
		names = append(names, k)
	}
	sort.Strings(names)
	for i, k := range names {
		if n := s.SideEffects[k]; n > 1 {
			names[i] = fmt.Sprintf("%s ×%d", k, n)
		}
	}
	return strings.Join(names, ", ")
}

// DefaultSideEffectFree are the tools that only read.
func DefaultSideEffectFree() []string {
	return []string{"Read", "Glob", "Grep", "LS", "WebSearch", "WebFetch", "TodoWrite"}
}

// DefaultBackoff is the wait before each retry: at once, then 5s, then 15s.
func DefaultBackoff() []time.Duration {
	return []time.Duration{0, 5 * time.Second, 15 * time.Second}
}
