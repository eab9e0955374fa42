package ui

import (
	"encoding/json"
	"io"
	"time"

	"github.com/malarun/malarun/internal/supervisor"
)

// EventJSON is one line of --events: malarun's own decisions, as they
// happen. Fields that do not apply to an event are left out; durations are
// in milliseconds. New fields may be added; none is renamed or removed
// without a new report version.
type EventJSON struct {
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

	Outcome   string `json:"outcome,omitempty"`
	Action    string `json:"action,omitempty"`
	Reason    string `json:"reason,omitempty"`
	BackoffMS int64  `json:"backoff_ms,omitempty"`
	LimitMS   int64  `json:"limit_ms,omitempty"`
	GraceMS   int64  `json:"grace_ms,omitempty"`
	TookMS    int64  `json:"took_ms,omitempty"`
	Termed    int    `json:"termed,omitempty"`
	Killed    int    `json:"killed,omitempty"`
	// ExitCode is claude's (attempt_ended) or malarun's (finished); always
	// present on those two, 0 included.
	ExitCode *int `json:"exit_code,omitempty"`

	ToolsRunning    []string `json:"tools_running,omitempty"`
	Occupancy       int64    `json:"occupancy,omitempty"`
	Window          int64    `json:"window,omitempty"`
	CostUSD         *float64 `json:"cost_usd,omitempty"` // on finished: the run's cost
	Continuation    int      `json:"continuation,omitempty"`
	CheckpointBytes int      `json:"checkpoint_bytes,omitempty"`
	// limit_wait (and finished with exit 75): when malarun resumes, when the
	// limit resets, and its kind.
	Until     time.Time `json:"until,omitzero"`
	RetryAt   time.Time `json:"retry_at,omitzero"`
	LimitType string    `json:"limit_type,omitempty"`
}

// NewEventJSON converts a supervisor event.
func NewEventJSON(e supervisor.Event) EventJSON {
	j := EventJSON{
		Time: e.Time.UTC(), Event: string(e.Kind), Issue: e.Issue, Attempt: e.Attempt, Session: e.Session,
		RunDir: e.RunDir, Continued: e.Continued, Pid: e.Pid, Resume: e.Resume, Purpose: e.Purpose,
		Tool: e.Tool, ToolInput: e.ToolInput, Task: e.Task, Outcome: e.Outcome, Action: e.Action, Reason: e.Reason,
		BackoffMS: e.Backoff.Milliseconds(), LimitMS: e.Limit.Milliseconds(), GraceMS: e.Grace.Milliseconds(),
		TookMS: e.Took.Milliseconds(), Termed: e.Termed, Killed: e.Killed,
		ToolsRunning: e.ToolsRunning, Occupancy: e.Occupancy, Window: e.Window,
		Continuation: e.Continuation, CheckpointBytes: e.CheckpointBytes,
		Until: utcOrZero(e.Until), RetryAt: utcOrZero(e.RetryAt), LimitType: e.LimitType,
	}
	switch e.Kind {
	case supervisor.EvAttemptEnded, supervisor.EvRunFinished:
		code := e.ExitCode
		j.ExitCode = &code
	}
	if e.Kind == supervisor.EvRunFinished {
		cost := e.CostUSD
		j.CostUSD = &cost
	}
	return j
}

func utcOrZero(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}

// EventLog writes every event but progress to w as one JSON line (see
// InertJSON), in one Write: on a file that is unbuffered, so a reader
// following the file sees each line whole as soon as it happens.
type EventLog struct {
	w   io.Writer
	err error // the first write error; later events are dropped
}

// NewEventLog writes to w.
func NewEventLog(w io.Writer) *EventLog { return &EventLog{w: w} }

// Event writes e (not progress: that is for the status line).
func (l *EventLog) Event(e supervisor.Event) {
	if e.Kind == supervisor.EvProgress || l.err != nil {
		return
	}
	b, err := json.Marshal(NewEventJSON(e))
	if err == nil {
		// "-" writes the lines among the logs, and people tail the file:
		// what a terminal acts on is escaped (the same JSON to a program).
		_, err = l.w.Write(InertJSON(append(b, '\n')))
	}
	l.err = err
}

// Err is the first error writing the log.
func (l *EventLog) Err() error { return l.err }
