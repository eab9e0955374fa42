// Package timeline is the run folder's record of what malarun saw and did,
// for `malarun show`: its decisions (the lines of --events) and a receive
// time for each whole message the CLI printed. The CLI's transcript has no
// times of its own, so without this file a replay cannot tell how long a
// tool ran or where a silence was (docs/design.md §D20). It opens no file:
// Entry is the line, Reader reads lines from any reader, and
// internal/timelinefile appends them to the run folder's file.
package timeline

import (
	"time"

	"github.com/malarun/malarun/internal/stream"
)

// FileName is the file in each run folder: one Entry per line, appended by
// every malarun that runs the run (timelinefile.Writer), 0600.
const FileName = "timeline.jsonl"

// EventLine is the event of an Entry that gives a transcript line's receive
// time; every other event is one of malarun's decisions (the --events kinds).
const EventLine = "line"

// Entry is one line of the timeline and of --events (which never has line
// entries). Fields that do not apply are left out; durations are in
// milliseconds. New fields may be added; none is renamed or removed without
// a new report version.
type Entry struct {
	Time    time.Time `json:"time"`
	Event   string    `json:"event"`
	Issue   string    `json:"issue"`
	Attempt int       `json:"attempt,omitempty"`
	Session string    `json:"session,omitempty"`

	RunDir    string `json:"run_dir,omitempty"`
	Continued bool   `json:"continued,omitempty"`
	Pid       int    `json:"pid,omitempty"`
	Resume    bool   `json:"resume,omitempty"`
	Purpose   string `json:"purpose,omitempty"`

	Tool      string `json:"tool,omitempty"`
	ToolInput string `json:"tool_input,omitempty"`
	Task      string `json:"task,omitempty"` // a background task's id
	Hook      string `json:"hook,omitempty"` // a hook's name: Stop, PreToolUse:Bash, ...

	Outcome   string `json:"outcome,omitempty"`
	Action    string `json:"action,omitempty"`
	Reason    string `json:"reason,omitempty"`
	BackoffMS int64  `json:"backoff_ms,omitempty"`
	LimitMS   int64  `json:"limit_ms,omitempty"`
	GraceMS   int64  `json:"grace_ms,omitempty"`
	TookMS    int64  `json:"took_ms,omitempty"`
	Termed    int    `json:"termed,omitempty"`
	Killed    int    `json:"killed,omitempty"`
	// ExitCode is claude's (attempt_ended), malarun's (finished) or the
	// hook's (hook_finished); always present on the first two, 0 included.
	ExitCode *int `json:"exit_code,omitempty"`

	ToolsRunning []string `json:"tools_running,omitempty"`
	// Phase and Doing (hang_detected): what claude was doing when it was
	// silent, as a name (text, thinking, tool_input, tool, ...) and in
	// words ("while writing text"; docs/design.md §D30).
	Phase     string   `json:"phase,omitempty"`
	Doing     string   `json:"doing,omitempty"`
	Occupancy int64    `json:"occupancy,omitempty"`
	Window    int64    `json:"window,omitempty"`
	CostUSD   *float64 `json:"cost_usd,omitempty"` // on finished: the run's cost
	// Tokens (finished) are what this malarun's attempts used, as their
	// result lines reported: a run continued by several malaruns has one
	// finished line each, and its tokens are their sum.
	Tokens          *stream.Tokens `json:"tokens,omitempty"`
	Continuation    int            `json:"continuation,omitempty"`
	CheckpointBytes int            `json:"checkpoint_bytes,omitempty"`
	// limit_wait (and finished with exit 75): when malarun resumes, when the
	// limit resets, and its kind.
	Until     time.Time `json:"until,omitzero"`
	RetryAt   time.Time `json:"retry_at,omitzero"`
	LimitType string    `json:"limit_type,omitempty"`

	// NoResponse: requests the API never answered that claude asked again
	// itself (api_retry with no_response, docs/design.md §D36): on an
	// api_retry entry that retry (retries 1, waited_ms claude's wait); on
	// attempt_ended the attempt's, on finished this malarun's attempts',
	// with ms, what they cost. ResultsLost (attempt_ended, finished): results
	// claude numbered (result_index) that never came.
	NoResponse  *NoResponse `json:"no_response,omitempty"`
	ResultsLost int         `json:"results_lost,omitempty"`

	// Line entries (the timeline only): the transcript line of Attempt that
	// begins at Offset (a pointer: the first line's is 0) was read at Time.
	Offset *int64 `json:"offset,omitempty"`
}

// NoResponse counts requests the API never answered: Retries of them,
// WaitedMS what claude says it waited for their answers, and MS what they
// cost in all (WaitedMS, and the time from each retry's line to the next
// line of progress; absent on an api_retry entry).
type NoResponse struct {
	Retries  int   `json:"retries"`
	WaitedMS int64 `json:"waited_ms"`
	MS       int64 `json:"ms,omitempty"`
}
