// Package replay tells the story of a run from its run folder: the CLI's
// transcripts (attempt-N.jsonl), the prompts malarun sent, and malarun's
// timeline (decisions and receive times, internal/timeline), merged in the
// order malarun saw them (docs/design.md §D20). A Renderer turns the story
// into text, Markdown, JSON or HTML. A transcript is read as a stream,
// never whole: memory does not grow with its size.
package replay

import (
	"time"

	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/timeline"

	"github.com/malarun/malarun/internal/event"
)

// version is the version of the JSON form (docs/show.schema.json). Version
// 2 names malarun's decisions as --events does: hang_detected, kill_sent,
// retry_decided (1 said hang, kill, retry).
const version = 2

// An Item's Kind says what it is. malarun's own decisions come from the
// timeline and are named as their events are (event.HangDetected, ...:
// one name per kind everywhere); the agent's work (text, tool calls and
// results, results), which only the transcripts tell, and the replay's
// own notes are these kinds, of the same type.
const (
	KindPrompt      event.Kind = "prompt"       // what the attempt was sent: Text (its first lines), Bytes, Path
	KindText        event.Kind = "text"         // the assistant's text: Text
	KindToolCall    event.Kind = "tool_call"    // Tool, ToolID, Summary, Input, Background
	KindToolResult  event.Kind = "tool_result"  // Tool, ToolID, IsError, Bytes, Head, Tail, Images, TookMS
	KindToolRunning event.Kind = "tool_running" // --follow only: a call still running: Tool, ToolID, Summary, TookMS (so far)
	KindHook        event.Kind = "hook"         // a hook of the CLI's ended: Hook, Outcome, ExitCode, IsError, TookMS
	KindResult      event.Kind = "result"       // Subtype, IsError, Text, CostUSD, RunCostUSD, Tokens
	KindNote        event.Kind = "note"         // the replay's own remark (a missing file, damaged lines): Text
)

// The fields malarun's decisions fill: run_started: Continued;
// attempt_started: Info (the attempt as far as it is known when it
// starts); task_started: Task, Summary; task_finished: Task, Summary,
// TookMS; api_retry: Reason, BackoffMS; hang_detected: SilenceMS,
// ToolsRunning, Phase, Doing, Reason; kill_sent: Reason, Pid, GraceMS;
// tree_gone: Termed, Killed, TookMS; attempt_ended: Info, complete;
// retry_decided: Action, Reason, BackoffMS; limit_wait: Until, RetryAt,
// LimitType; checkpoint: Occupancy, Window; restart: Continuation,
// Occupancy, Window; finished: Outcome, ExitCode, Reason, RunCostUSD.

// ByMalarun reports whether an item of kind k is malarun's decision, not
// the agent's work.
func ByMalarun(k event.Kind) bool {
	switch k {
	case KindText, KindToolCall, KindToolResult, KindToolRunning, KindResult, KindPrompt, KindHook:
		return false
	}
	return true
}

// Item is one step of the story. Fields that do not apply are zero.
// Strings are outside text (the model's, the CLI's, a record's): a renderer
// makes them safe for its medium; they are valid UTF-8.
type Item struct {
	Seq     int        `json:"seq"` // 1-based position in the story: the HTML anchor is item-<seq>
	Kind    event.Kind `json:"kind"`
	Attempt int        `json:"attempt,omitempty"`
	Time    time.Time  `json:"time,omitzero"`  // when malarun read or decided it; zero when not recorded
	Line    int64      `json:"line,omitempty"` // the transcript line it came from (1-based)
	// Agent is the tool call id of the sub-agent that wrote it; empty for the main agent.
	Agent string `json:"agent,omitempty"`

	Text       string `json:"text,omitempty"`
	Path       string `json:"path,omitempty"` // a prompt's file, relative to the run folder
	Tool       string `json:"tool,omitempty"`
	ToolID     string `json:"tool_id,omitempty"`
	Summary    string `json:"summary,omitempty"` // one line: a tool call's gist (Bash: its command), a task's label
	Input      string `json:"input,omitempty"`   // a tool call's input as compact JSON, cut
	Background bool   `json:"background,omitempty"`
	IsError    bool   `json:"is_error,omitempty"`
	Bytes      int64  `json:"bytes,omitempty"`  // a tool result's or prompt's size
	Head       string `json:"head,omitempty"`   // a tool result's first bytes
	Tail       string `json:"tail,omitempty"`   // its last bytes, when it is longer than Head
	Images     int    `json:"images,omitempty"` // image blocks of a tool result
	Task       string `json:"task,omitempty"`   // a background task's id
	Hook       string `json:"hook,omitempty"`   // a hook's name: Stop, PreToolUse:Bash, ...
	Subtype    string `json:"subtype,omitempty"`

	Reason       string   `json:"reason,omitempty"`
	Action       string   `json:"action,omitempty"`
	Outcome      string   `json:"outcome,omitempty"`
	ExitCode     *int     `json:"exit_code,omitempty"`
	Continued    bool     `json:"continued,omitempty"`
	Pid          int      `json:"pid,omitempty"`
	ToolsRunning []string `json:"tools_running,omitempty"`
	// Phase and Doing (hang) are what claude was doing when it was silent,
	// as a name and in words (docs/design.md §D30).
	Phase        string         `json:"phase,omitempty"`
	Doing        string         `json:"doing,omitempty"`
	TookMS       int64          `json:"took_ms,omitempty"` // a tool call's or task's run time; a tree stop's
	SilenceMS    int64          `json:"silence_ms,omitempty"`
	BackoffMS    int64          `json:"backoff_ms,omitempty"`
	GraceMS      int64          `json:"grace_ms,omitempty"`
	Termed       int            `json:"termed,omitempty"`
	Killed       int            `json:"killed,omitempty"`
	Until        time.Time      `json:"until,omitzero"`
	RetryAt      time.Time      `json:"retry_at,omitzero"`
	LimitType    string         `json:"limit_type,omitempty"`
	Occupancy    int64          `json:"occupancy,omitempty"` // context tokens after this message (assistant items, checkpoint, restart)
	Window       int64          `json:"window,omitempty"`
	Continuation int            `json:"continuation,omitempty"`
	CostUSD      float64        `json:"cost_usd,omitempty"`     // a result's: its CLI process so far
	RunCostUSD   float64        `json:"run_cost_usd,omitempty"` // the run so far (results, finished)
	Tokens       *stream.Tokens `json:"tokens,omitempty"`

	Info *Attempt `json:"info,omitempty"` // attempt_started, attempt_ended
}

// How an attempt began (Attempt.Began).
const (
	BeganNew          = "new"          // the run's first attempt: a new session with the task
	BeganResume       = "resume"       // --resume of the session after a hang, crash or limit
	BeganFresh        = "fresh"        // a new session with the same prompt (nothing to resume)
	BeganCheckpoint   = "checkpoint"   // the session is asked for a checkpoint (context nearly full)
	BeganContinuation = "continuation" // a new session from the checkpoint
	BeganFallback     = "fallback"     // a new session from the task (no usable checkpoint)
	BeganReclaim      = "reclaim"      // a malarun took over a run whose malarun had stopped
	BeganUnknown      = "unknown"      // no timeline says
)

// Attempt is one claude process of the run. At attempt_started only what
// is known then is set; at attempt_ended and in the Summary, everything
// the timeline and transcript say.
type Attempt struct {
	N          int       `json:"n"`
	Session    string    `json:"session,omitempty"`
	Began      string    `json:"began"`
	Prompt     string    `json:"prompt,omitempty"` // its prompt's file in the run folder
	Pid        int       `json:"pid,omitempty"`
	Started    time.Time `json:"started,omitzero"`
	Ended      time.Time `json:"ended,omitzero"`
	DurationMS int64     `json:"duration_ms,omitempty"`
	// Outcome is how it ended (success, hang, crash, ...: the attempt_ended
	// outcome), Reason why; empty while it runs or when no timeline says.
	Outcome    string        `json:"outcome,omitempty"`
	Reason     string        `json:"reason,omitempty"`
	ExitCode   *int          `json:"exit_code,omitempty"` // claude's
	CostUSD    float64       `json:"cost_usd"`
	Tokens     stream.Tokens `json:"tokens"`
	CLIVersion string        `json:"cli_version,omitempty"`
	Model      string        `json:"model,omitempty"`
	// Counts from the transcript.
	ToolCalls   int   `json:"tool_calls"`
	ToolResults int   `json:"tool_results"`
	Results     int   `json:"results"`
	Lines       int64 `json:"lines"`
	Damaged     int64 `json:"damaged_lines,omitempty"` // not JSON, or cut short
	// NoResponse and ResultsLost are what its attempt_ended entry says:
	// requests the API never answered that claude asked again, and
	// results claude numbered that never came (docs/design.md §D36).
	NoResponse  *timeline.NoResponse `json:"no_response,omitempty"`
	ResultsLost int                  `json:"results_lost,omitempty"`
}

// Header is what is known before the story.
type Header struct {
	Version int    `json:"-"` // the JSON form has it once, at its top
	Issue   string `json:"issue"`
	RunID   string `json:"run_id"`
	RunDir  string `json:"run_dir"`
	// Status is the record's, when this is the issue's current run
	// (processing, waiting, succeeded, ...); empty for an older run.
	Status string `json:"status,omitempty"`
	// Timed: the run folder has a timeline, so items have times and
	// malarun's decisions are in the story. Without one (a run recorded
	// before malarun kept it), only the transcripts are shown.
	Timed     bool `json:"timed"`
	Following bool `json:"following,omitempty"`
	// Attempt is the one attempt asked for (--attempt), 0 for all.
	Attempt int `json:"attempt,omitempty"`
}

// Summary is what the story added up to.
type Summary struct {
	Outcome   string        `json:"outcome,omitempty"` // the run's, from the last finished item; empty if none
	ExitCode  *int          `json:"exit_code,omitempty"`
	Reason    string        `json:"reason,omitempty"`
	Started   time.Time     `json:"started,omitzero"`
	Ended     time.Time     `json:"ended,omitzero"`
	CostUSD   float64       `json:"cost_usd"`
	Tokens    stream.Tokens `json:"tokens"`
	Attempts  []Attempt     `json:"attempts"`
	ToolCalls int           `json:"tool_calls"`
	Results   int           `json:"results"`
	Items     int           `json:"items"`
	// DamagedTimeline counts timeline lines that were not entries.
	DamagedTimeline int `json:"damaged_timeline_lines,omitempty"`
	// Stopped says why --follow stopped ("the run ended", "the run's
	// malarun is gone: ..."); empty without --follow.
	Stopped string `json:"stopped,omitempty"`
}

// Renderer writes a story as it is told: Begin once, Item for each item in
// order, End once. It may keep a bounded summary of the items (the HTML
// timeline does) but never the story itself.
type Renderer interface {
	Begin(Header) error
	Item(*Item) error
	End(Summary) error
}
