package supervisor

import (
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/journal"
)

// EventKind names what happened.
type EventKind string

// The events a run emits, in the order they usually come.
const (
	EvRunStarted     EventKind = "run_started"     // Issue, RunDir, Continued, PreviousTrace
	EvAttemptStarted EventKind = "attempt_started" // Attempt, Session, Pid, Resume, Purpose
	EvProgress       EventKind = "progress"        // after every line: the live numbers (not written to --events)
	EvToolStarted    EventKind = "tool_started"    // Tool, ToolInput
	EvToolFinished   EventKind = "tool_finished"   // Tool
	EvHookStarted    EventKind = "hook_started"    // Hook (its name: Stop, PreToolUse:Bash, ...)
	EvHookFinished   EventKind = "hook_finished"   // Hook, Outcome (the CLI's: success, error, cancelled), ExitCode (the hook's)
	EvTaskStarted    EventKind = "task_started"    // a background task: Task (its id), Reason (what it runs)
	EvTaskFinished   EventKind = "task_finished"   // Task, Reason
	EvAPIRetry       EventKind = "api_retry"       // Reason (status, error), Backoff (the CLI's wait)
	EvHangDetected   EventKind = "hang_detected"   // Reason, Limit, Silence, Phase, Doing
	EvKillSent       EventKind = "kill_sent"       // Reason (why the tree is stopped), Pid, Grace
	EvTreeGone       EventKind = "tree_gone"       // Termed, Killed, Took
	EvAttemptEnded   EventKind = "attempt_ended"   // Outcome, Ending, Reason, ExitCode of claude, ClaudeCodeVersion
	EvRetryDecided   EventKind = "retry_decided"   // Action, Reason, Backoff, Session
	EvCheckpoint     EventKind = "checkpoint"      // the session is asked for a checkpoint: Occupancy, Window
	EvRestart        EventKind = "restart"         // a new session after the context filled: Continuation, Occupancy, Window, CheckpointBytes
	EvLimitWait      EventKind = "limit_wait"      // waiting for a usage limit to reset: Until, RetryAt, LimitType, Reason
	EvRunFinished    EventKind = "finished"        // Outcome ("success" or the error kind), Reason, CostUSD
)

// AlsoEventField is the log field of a record that an event also reports;
// its value is that event's kind. An output that shows the events to a
// person can leave these records out, so that each fact is printed there
// once; logs read without the events (JSON lines in CI, a log file) keep
// them (docs/design.md §D15). A record is marked so only where the event is
// sure to follow: the hang, the limit wait and a retry of claude's that are
// emitted with it, and the cause of a stop (an API that cannot be reached,
// a usage limit claude would wait out), which the attempt_ended after the
// stop gives as its reason (unless a signal while stopping makes the
// attempt an interruption).
const AlsoEventField = "also_event"

// Event is one thing malarun did or saw. Fields that do not apply to a
// kind are zero. Its JSON form is Entry (the --events schema).
type Event struct {
	Time    time.Time
	Kind    EventKind
	Issue   string
	Attempt int
	Session string

	RunDir    string
	Continued bool // a recorded run taken over or resumed
	// PreviousTrace (run_started of a continued run) is the trace of the
	// malarun that ran it before, from the record (zero: none kept).
	PreviousTrace journal.TraceRef
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
	Tasks        []string  // background tasks running, as taskLabel names them
	Occupancy    int64     // context tokens
	Window       int64     // context window tokens
	CostUSD      float64   // the run so far
	IdleDeadline time.Time // when silence becomes a hang
	Continuation int
	// Usage limits (limit_wait, finished): when malarun resumes (the reset
	// plus jitter), the reset itself, and the limit's kind.
	Until           time.Time
	RetryAt         time.Time
	LimitType       string
	CheckpointBytes int
}

// emit records an event in the run folder's timeline and sends it to the
// observer, if there is one. The observer runs on the supervisor's
// goroutine: it must be quick and must not block.
func (r *runner) emit(e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Issue = r.cfg.IssueID
	r.timelineEvent(e)
	if r.deps.Observer != nil {
		r.deps.Observer(e)
	}
}

func taskIDs(tasks []attempt.Task) []string {
	out := make([]string, len(tasks))
	for i, tk := range tasks {
		out[i] = tk.ID
	}
	return out
}
