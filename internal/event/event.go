// Package event is what a run tells its observers (docs/design.md §D13,
// §D20): the events as they happen, each of a Kind whose name is the one
// --events, the timeline and malarun show use, and the Report at its end.
// It imports no engine: the supervisor emits, and ui, telemetry and
// replay read, without knowing one another.
package event

import (
	"time"

	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/stream"
)

// Kind names what happened.
type Kind string

// The events a run emits, in the order they usually come.
const (
	RunStarted     Kind = "run_started"     // Issue, RunDir, Continued, PreviousTrace
	AttemptStarted Kind = "attempt_started" // Attempt, Session, Pid, Resume, Purpose
	Progress       Kind = "progress"        // after every line: the live numbers (not written to --events)
	ToolStarted    Kind = "tool_started"    // Tool, ToolInput
	ToolFinished   Kind = "tool_finished"   // Tool
	HookStarted    Kind = "hook_started"    // Hook (its name: Stop, PreToolUse:Bash, ...)
	HookFinished   Kind = "hook_finished"   // Hook, Outcome (the CLI's: success, error, cancelled), ExitCode (the hook's)
	TaskStarted    Kind = "task_started"    // a background task: Task (its id), Reason (what it runs)
	TaskFinished   Kind = "task_finished"   // Task, Reason
	APIRetry       Kind = "api_retry"       // Reason (status, error), Backoff (the CLI's wait)
	HangDetected   Kind = "hang_detected"   // Reason, Limit, Silence, Phase, Doing
	KillSent       Kind = "kill_sent"       // Reason (why the tree is stopped), Pid, Grace
	TreeGone       Kind = "tree_gone"       // Termed, Killed, Took
	AttemptEnded   Kind = "attempt_ended"   // Outcome, Ending, Reason, ExitCode of claude, ClaudeCodeVersion
	RetryDecided   Kind = "retry_decided"   // Action, Reason, Backoff, Session
	Checkpoint     Kind = "checkpoint"      // the session is asked for a checkpoint: Occupancy, Window
	Restart        Kind = "restart"         // a new session after the context filled: Continuation, Occupancy, Window, CheckpointBytes
	LimitWait      Kind = "limit_wait"      // waiting for a usage limit to reset: Until, RetryAt, LimitType, Reason
	RunFinished    Kind = "finished"        // Outcome ("success" or the error kind), Reason, CostUSD
)

// AlsoField is the log field of a record that an event also reports;
// its value is that event's kind. An output that shows the events to a
// person can leave these records out, so that each fact is printed there
// once; logs read without the events (JSON lines in CI, a log file) keep
// them (docs/design.md §D15). A record is marked so only where the event is
// sure to follow: the hang, the limit wait and a retry of claude's that are
// emitted with it, and the cause of a stop (an API that cannot be reached,
// a usage limit claude would wait out), which the attempt_ended after the
// stop gives as its reason (unless a signal while stopping makes the
// attempt an interruption).
const AlsoField = "also_event"

// Event is one thing malarun did or saw. Fields that do not apply to a
// kind are zero. Its JSON form is Entry (the --events schema).
type Event struct {
	Time    time.Time
	Kind    Kind
	Issue   string
	Attempt int
	Session string

	RunDir    string
	Continued bool // a recorded run taken over or resumed
	// PreviousTrace (run_started of a continued run) is the trace of the
	// malarun that ran it before, from the record (zero: none kept).
	PreviousTrace record.TraceRef
	Pid           int
	Resume        bool
	Purpose       string // "work", "checkpoint"

	Tool      string
	Task      string
	ToolInput string
	Hook      string
	// HookExitCode (hook_finished) is the hook's exit code, when the CLI said it.
	HookExitCode *int

	Outcome string
	// Ending (attempt_ended) is why the attempt's process stopped, as AttemptReport.Ended.
	Ending  string
	Action  string
	Reason  string
	Backoff time.Duration
	Limit   time.Duration
	// Silence (hang_detected) is how long claude had been silent: the
	// limit, and the time it took to notice.
	Silence time.Duration
	// Phase (hang_detected, progress) is what claude's stream shows it
	// doing, by name (attempt.Phase: text, thinking, tool_input, tool, ...),
	// and Doing the same in words ("while writing the input of a Write
	// call"); PhaseSince (progress) is when that began, and Limit there the
	// silence allowed in it (docs/design.md §D30).
	Phase      string
	Doing      string
	PhaseSince time.Time
	Grace      time.Duration
	Took       time.Duration
	Termed     int
	Killed     int

	ExitCode int
	// ClaudeCodeVersion (attempt_ended) is the CLI's version from its init line.
	ClaudeCodeVersion string

	// Live numbers (progress, and some others).
	Messages     int // assistant messages in this attempt
	ToolsRunning []string
	Tasks        []string      // background tasks running, as taskLabel names them
	Occupancy    int64         // context tokens
	Window       int64         // context window tokens
	CostUSD      float64       // the run so far
	Tokens       stream.Tokens // finished: this malarun's attempts' tokens
	IdleDeadline time.Time     // when silence becomes a hang
	Continuation int
	// Usage limits (limit_wait, finished): when malarun resumes (the reset
	// plus jitter), and the limit (its reset, RetryAt, and its kind,
	// LimitType).
	Until time.Time
	record.UsageLimit
	CheckpointBytes int

	// NoResponse (api_retry, attempt_ended, finished): requests the API
	// never answered that claude asked again itself, and what they cost;
	// nil: none. ResultsLost (attempt_ended, finished): results claude
	// numbered that never came (docs/design.md §D36).
	NoResponse  *NoResponse
	ResultsLost int
}

// NoResponse counts requests the API never answered (api_retry with
// no_response): Retries of them, the Waited claude says it waited for
// their answers, and their Cost (Waited and the time from each retry's
// line to the next line of progress; unknown on an api_retry event).
type NoResponse struct {
	Retries int
	Waited  time.Duration
	Cost    time.Duration
}

// Add sums two counts, either of which may be nil.
func (n *NoResponse) Add(o *NoResponse) *NoResponse {
	switch {
	case o == nil || o.Retries == 0:
		return n
	case n == nil:
		c := *o
		return &c
	}
	return &NoResponse{Retries: n.Retries + o.Retries, Waited: n.Waited + o.Waited, Cost: n.Cost + o.Cost}
}
