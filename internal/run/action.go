package run

import (
	"time"

	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/usagelimit"
)

// ActionKind is what the driver does next.
type ActionKind int

const (
	Start ActionKind = iota // start Action.Attempt now
	Sleep                   // sleep until Action.Until, then call Woke
	End                     // end the run: Action.Outcome
)

// Action is the one thing a step asks of the driver.
type Action struct {
	Kind ActionKind
	// Attempt (Start) is the attempt to start.
	Attempt Attempt
	// Until (Sleep) is when to wake. A sleep for a usage limit's reset is
	// the one the state says is Waiting; its limit is State.Limit.
	Until time.Time
	// Outcome (End) is how the run ends ("" or outcome.Success: it
	// succeeded; a usage limit's is in State.Limit). Reason is the
	// sentence: the error's, or why a usage limit is waited for.
	Outcome outcome.Outcome
	Reason  string
	// Decision is what was decided about the attempt that ended, for the
	// retry_decided event and the log (DecidedNone: no such decision, as
	// at the start or when a usage limit decides).
	Decision Decision
	// Met is the usage limit this step acted on (nil: none): the driver
	// shares it with the other malaruns of the account (limitstore.Store).
	Met *usagelimit.Limit
}

// Succeeded reports whether the action ends the run in success.
func (a Action) Succeeded() bool {
	return a.Kind == End && (a.Outcome == "" || a.Outcome == outcome.Success)
}

// Attempt is one claude process to start.
type Attempt struct {
	N         int
	SessionID string
	Resume    bool // --resume SessionID instead of --session-id SessionID
	// Checkpoint: the attempt asks for a checkpoint; context pressure is not
	// acted on (the request itself adds to the context).
	Checkpoint bool
	Prompt     Prompt
	// BudgetUSD is what max_cost_usd leaves for this attempt (0 = no cap):
	// the CLI's own --max-budget-usd counts one process only.
	BudgetUSD float64
	// Because is the decision that started it (DecidedNone: the
	// invocation's first attempt, or one after a usage limit's reset): the
	// driver says so when it starts (the checkpoint and restart events).
	Because Decision
}

// Purpose names what the attempt is for, as the events and the report do.
func (a Attempt) Purpose() string {
	if a.Checkpoint {
		return "checkpoint"
	}
	return "work"
}

// Decision is what the run decided after an attempt.
type Decision struct {
	Kind      DecisionKind
	SessionID string        // the session resumed, or the new one
	Backoff   time.Duration // the wait before the next attempt
	Reason    string
}

// DecisionKind names a decision; its String is retry_decided's "action".
type DecisionKind int

const (
	DecidedNone DecisionKind = iota
	Done                     // success: finish with exit 0
	Resume                   // --resume the session with the resume prompt
	Fresh                    // a new session with the prompt the session started with
	Fail                     // stop: Action.Outcome
	Checkpoint               // --resume the session with the checkpoint request
	Continue                 // a new session seeded with the checkpoint
	Fallback                 // a new session with the fallback prompt (the task; inspect the tree)
)

func (k DecisionKind) String() string {
	return [...]string{"none", "done", "resume", "fresh", "fail", "checkpoint", "continue", "fallback"}[k]
}

// Restart reports whether the decision starts a new session because the
// context filled (a restart event).
func (k DecisionKind) Restart() bool { return k == Continue || k == Fallback }

// Prompt is what an attempt reads on stdin: a template rendered with Data,
// or (NoTemplate) a prompt already in the run folder.
type Prompt struct {
	Template Template
	// Written (NoTemplate): 0 the run's prompt.md, n attempt n's prompt.
	Written int
	Data    PromptData
}

// Template names a prompt template (configs/prompts, or prompts_dir).
type Template int

const (
	NoTemplate           Template = iota // no template: a prompt already written
	ResumeTemplate                       // resume.md
	CheckpointTemplate                   // checkpoint.md
	ContinuationTemplate                 // continuation.md
	FallbackTemplate                     // fallback.md
)

// PromptData is what a template sees, but the issue and the task, which the
// driver adds.
type PromptData struct {
	// Interrupted are the tool calls still running when the attempt was cut
	// off: the CLI drops them from the resumed history (docs/design.md §F16),
	// so only malarun can tell the agent about them. InterruptedMore are
	// more of them, not named: a record names at most record.MaxInFlight.
	Interrupted     []stream.ToolUse
	InterruptedMore int
	// Tasks are the background tasks killed with the attempt: the CLI will
	// never notify the resumed session of them. TasksMore, as
	// InterruptedMore.
	Tasks     []stream.Task
	TasksMore int
	// Hooks name the hooks cut off with the attempt: what they check or do
	// was not done.
	Hooks []string
	// CutReply (resume) says what the model was writing when its reply was
	// cut off: the CLI keeps no part of a block that did not end, so the
	// model would not know (docs/design.md §D30).
	CutReply   string
	Reason     string // why the last attempt ended
	Checkpoint string // the previous session's checkpoint (continuation)
	// LimitNote (resume) says the session was stopped by a usage limit
	// that has since reset, so the agent does not look for a fault of its own.
	LimitNote string
}
