package run

import (
	"maps"
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/usagelimit"
)

// Policy holds the run's limits, from the configuration.
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
	// LimitWait is limit_wait: how long the run may sleep, in all, for
	// usage limits to reset (0: exit 75 at once).
	LimitWait time.Duration
	// Deadline is when session_timeout ends the run (zero: never).
	Deadline time.Time
}

// State is what the run's decisions remember between steps. Only this
// package changes it; the driver reads it (the record mirrors it).
type State struct {
	// Standing is how the run stands, as the record, the report and the
	// events tell it.
	Standing

	// Next is the number of the next attempt (attempt-N in the run folder).
	Next     int
	Attempts int // attempts finished, this run's earlier invocations included
	// AttemptsAtStart are the attempts that max_attempts does not count:
	// an earlier invocation's that stopped on its own limits, attempts a
	// dead malarun cut, and attempts stopped by a usage limit.
	AttemptsAtStart int
	Retries         int    // retries decided so far (they pick the backoff)
	IdleRetries     int    // retries in a row after attempts without progress
	SessionID       string // the current session ("" = none known)
	// SessionTalked: the current session has at least one assistant message,
	// so resuming it carries work forward. A session that never got a reply
	// holds nothing a fresh start with the same prompt would not.
	SessionTalked bool
	// SessionPrompt is the prompt the current session started with, which a
	// fresh start repeats: 0 the run's own prompt, n attempt n's.
	SessionPrompt int
	CostUSD       float64 // summed over every attempt
	// SideEffects counts calls of tools not in SideEffectFree, by tool name,
	// since the run (or its last context restart) began: a fresh start
	// would repeat them.
	SideEffects map[string]int
	LastReason  string
	// Checkpointing: the last attempt resumed the session to ask for a
	// checkpoint before a context restart.
	Checkpointing bool
	// Continuations counts fresh sessions started because the context filled.
	Continuations int
	// Checkpoint is the run's last checkpoint ("" none); HasCheckpoint says
	// a checkpoint attempt succeeded, so a session that cannot be resumed
	// continues instead (with the fallback prompt if its text was empty).
	Checkpoint    string
	HasCheckpoint bool
	// Talked: the run has had an answer from the API (§D17), so a
	// connection failure is the network going away, not a mistake.
	Talked bool

	// Room is how many times each phase's allowance of silence is doubled:
	// attempts of this run were killed there (docs/design.md §D30).
	Room attempt.Room
	// FirstByteHangs counts the attempts in a row that hung waiting for a
	// request's first byte: the second gives the wait room (§D33).
	FirstByteHangs int
	// LimitWait is what is spent of limit_wait; LastReset the last reset
	// waited for (a limit that resets no later is a loop).
	LimitWait usagelimit.Budget
	LastReset time.Time
	// Sleeping is why the driver sleeps now (SleepNone: it does not);
	// Pending is the attempt that starts when the sleep is over.
	Sleeping SleepKind
	Pending  Attempt
}

// Standing is how a run stands: every fact of its waits and its end that
// the record, the --json report and the events read (docs/design.md
// §D7, §D10, §D13). Taken, Begin, Next, Woke and Close set it; the driver
// reads it and copies none of it, so each fact is decided in one place.
type Standing struct {
	// Status is the record's: processing while the run goes on, waiting
	// while it sleeps for a usage limit's reset, and how it ended once
	// Close ran.
	Status record.Status
	// Limit is the usage limit in force (zero: none): the one the run
	// waits for, stopped on (exit 75), or was stopped waiting for.
	Limit record.UsageLimit
	// Reclaims are the malarun deaths in a row, as the run was taken (the
	// poison rule, §D7): Close sets them back to 0 unless the run was
	// interrupted, which is no death and no end.
	Reclaims int
	// Cut are the tool calls and background tasks the last attempt (or the
	// last malarun) left running, named as the record names them: a
	// malarun that dies between attempts leaves them for the resume
	// prompt. Close forgets them when the run succeeds.
	Cut record.InFlight
	// Outcome, Reason and ExitCode are how the run ended (Close; zero while
	// it runs): the outcome, the error's sentence ("" on success) and the
	// exit code the command line gives it.
	Outcome  outcome.Outcome
	Reason   string
	ExitCode int
}

// StoppedBy is the usage limit that ended the run (exit 75), for the
// report and the finished event; zero for any other end, even a wait that
// was interrupted (the record's retry_at still says when it resets).
func (s Standing) StoppedBy() record.UsageLimit {
	if s.Outcome != outcome.RateLimit {
		return record.UsageLimit{}
	}
	return s.Limit
}

// SleepKind says what a sleep waits for.
type SleepKind int

const (
	SleepNone    SleepKind = iota
	SleepBackoff           // the backoff before a retry
	SleepLimit             // a usage limit's reset (the record says waiting)
)

// What says what a sleep of this kind waits for, in messages ("to retry").
func (k SleepKind) What() string {
	if k == SleepLimit {
		return "for a usage limit to reset"
	}
	return "to retry"
}

// Waiting reports whether a usage-limit wait is under way: a run stopped
// now is still waiting for the same reset (status waiting, its retry_at).
func (s State) Waiting() bool { return s.Sleeping == SleepLimit }

// LimitWaitLeft is what is left of limit_wait, for the attempt machine.
func (s State) LimitWaitLeft() time.Duration { return s.LimitWait.Left() }

func (s State) clone() State {
	s.SideEffects = maps.Clone(s.SideEffects)
	if s.SideEffects == nil {
		s.SideEffects = map[string]int{}
	}
	return s
}

// Ended is what one attempt did, as the run's decisions need it.
type Ended struct {
	// Attempt is the attempt as it was started: a prompt that never
	// reached the model is sent again as it was (attempt.PromptLost).
	Attempt Attempt
	Ending  attempt.Ending
	// Reason is a sentence for messages: "no output for 3m0s (idle_timeout)".
	Reason string
	// SessionID is the session the attempt ran in ("" if none is known).
	SessionID string
	// Progress: the attempt produced new assistant messages.
	Progress bool
	// ToolCalls are the calls the attempt made (completed or not).
	ToolCalls []stream.ToolUse
	// CostUSD is what the attempt cost, as its result line reported.
	CostUSD float64
	// CutCalls and CutTasks were still running when the attempt ended: the
	// resume prompt names them.
	CutCalls []stream.ToolUse
	CutTasks []stream.Task
	// CutHooks name the hooks that were running (attempt.Hook.Label): they
	// never finished.
	CutHooks []string
	// Reply is the agent's last text: a checkpoint request's answer.
	Reply string
	// Limit is what the attempt said about the usage limit that stopped it
	// (Ending RateLimit).
	Limit usagelimit.Limit
	// CLIWaited is how long the CLI slept through usage limits of its own
	// accord: limit_wait pays for it.
	CLIWaited time.Duration
	// Talked: the attempt had an answer from the API.
	Talked bool
	// Hung is, for a hang malarun found (not a background_timeout), what
	// claude was doing when it was silent (nil: no such hang).
	Hung *attempt.Doing
}

// Draws are the random values a step may use, drawn by the driver so that
// the decisions stay pure: a session id for a new session, and a value in
// [0, 1) for a usage-limit wait's jitter.
type Draws struct {
	NewSession string
	Jitter     float64
}
