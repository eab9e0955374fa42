// Package journal keeps the state of each issue on disk, so that a run
// survives malarun's own death: a record per issue (status, session,
// attempts, reclaims, owner, checkpoint, cost, process tree), written
// atomically and durably, and a lock that allows one malarun per issue.
package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/retry"
)

// Status is where an issue's latest run stands.
type Status string

const (
	// Processing: a malarun is running it, or died while it was (the lock tells which).
	Processing Status = "processing"
	// Interrupted: malarun stopped it on SIGINT/SIGTERM; the next run resumes it.
	Interrupted Status = "interrupted"
	// Stopped: the run gave up for now on a limit of this invocation
	// (retries exhausted, session timeout); the next run resumes it with
	// fresh limits, so an orchestrator's retry continues the work.
	Stopped Status = "stopped"
	// Succeeded: claude reported success.
	Succeeded Status = "succeeded"
	// Failed: the run ended with an error (see ExitCode and Reason).
	Failed Status = "failed"
	// Waiting: a usage limit stopped the run and its session is kept:
	// RetryAt says when a request can pass again (zero: unknown). Either
	// the malarun holding the lock sleeps until then, or it exited 75 and a
	// later run resumes the session.
	Waiting Status = "waiting"
)

// recordVersion is bumped when a field is added or changes meaning.
// Version 2 added the statuses "waiting" and "stopped", RetryAt,
// LimitType and Tasks.
const recordVersion = 2

// oldestRecordVersion is the oldest record this malarun still reads: the
// fields added since are zero in it, which is what they mean there.
const oldestRecordVersion = 1

// ProcRef names a process for later: the pid and its start time (clock ticks
// since boot), so that a reused pid is never mistaken for it.
type ProcRef struct {
	Pid       int    `json:"pid"`
	StartTime uint64 `json:"start_time"`
}

// Owner is the malarun that holds (or held) the issue.
type Owner struct {
	Pid       int       `json:"pid"`
	Host      string    `json:"host"`
	StartedAt time.Time `json:"started_at"`
}

// Record is the state of one issue. It holds no secrets: paths, ids,
// counts and texts the agent wrote, never environment values.
type Record struct {
	Version int    `json:"version"`
	Issue   string `json:"issue"`
	Status  Status `json:"status"`
	// Poisoned: the issue's malarun died too many times in a row
	// (max_reclaims); it is not run again until --reset.
	Poisoned bool `json:"poisoned,omitempty"`

	// Cwd and Home are where the CLI ran: resuming its session needs both
	// (the session file lives under $HOME/.claude/projects/<cwd>).
	Cwd  string `json:"cwd"`
	Home string `json:"home"`

	RunID    string   `json:"run_id"`
	RunDir   string   `json:"run_dir"`
	Runs     []string `json:"runs"` // every run id, oldest first
	Sessions []string `json:"sessions"`
	// SessionID is the session to resume ("" = none).
	SessionID string `json:"session_id"`
	// SessionTalked: that session has at least one assistant message.
	SessionTalked bool `json:"session_talked"`
	// SideEffects counts calls of tools with side effects in the current
	// session line (since the last context restart), by tool.
	SideEffects map[string]int `json:"side_effects,omitempty"`
	// Running are the tool calls without a result yet: if malarun dies now,
	// the resume prompt names them (the CLI drops them from the history).
	Running []retry.ToolCall `json:"running,omitempty"`
	// Tasks are the CLI's background tasks still running: killed with the
	// attempt, they never notify the resumed session, so its prompt names them.
	Tasks []attempt.Task `json:"tasks,omitempty"`

	Attempts      int     `json:"attempts"`       // in the current run
	Reclaims      int     `json:"reclaims"`       // malaruns that died on this run in a row
	Continuations int     `json:"continuations"`  // context restarts in the current run
	Checkpoint    string  `json:"checkpoint"`     // the last checkpoint text
	CostUSD       float64 `json:"cost_usd"`       // the current run
	TotalCostUSD  float64 `json:"total_cost_usd"` // every run of the issue

	Owner     Owner     `json:"owner"`
	StartedAt time.Time `json:"started_at"`
	UpdatedAt time.Time `json:"updated_at"`

	// Tree is the process tree of the attempt running now: the CLI, and
	// every process started with the run's marker in its environment.
	Tree   []ProcRef `json:"tree,omitempty"`
	Marker string    `json:"marker"` // MALARUN_RUN=<marker> in the environment of every process of the run

	ExitCode int    `json:"exit_code"`
	Reason   string `json:"reason,omitempty"`

	// RetryAt is when the usage limit that stopped the run resets (zero:
	// none, or unknown); LimitType is its kind (five_hour, seven_day, ...).
	// Set with status Waiting; since version 2.
	RetryAt   time.Time `json:"retry_at,omitzero"`
	LimitType string    `json:"limit_type,omitempty"`
}

// DecodeError says a record cannot be read, naming the file.
type DecodeError struct {
	Path string
	Err  error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("issue record %s is damaged (%v); move it away or run with --reset to start the issue over", e.Path, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Decode parses a record. A truncated, edited or foreign file is an error,
// never a partial record. An older record is read into the current shape
// (its Version becomes the current one); a newer one is refused, since its
// fields may mean what this malarun does not know.
func Decode(data []byte) (Record, error) {
	var r Record
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Record{}, err
	}
	if dec.More() {
		return Record{}, errors.New("trailing data after the record")
	}
	if r.Version < oldestRecordVersion || r.Version > recordVersion {
		return Record{}, fmt.Errorf("record version %d, this malarun reads versions %d to %d", r.Version, oldestRecordVersion, recordVersion)
	}
	switch r.Status {
	case Processing, Interrupted, Stopped, Succeeded, Failed, Waiting:
	default:
		return Record{}, fmt.Errorf("unknown status %q", r.Status)
	}
	if r.Version < 2 && (r.Status == Waiting || r.Status == Stopped || !r.RetryAt.IsZero() || r.LimitType != "" || len(r.Tasks) > 0) {
		return Record{}, fmt.Errorf("a version %d record cannot have status %s, retry_at, limit_type or tasks (version 2 added them)", r.Version, r.Status)
	}
	r.Version = recordVersion
	if r.Issue == "" {
		return Record{}, errors.New("no issue id")
	}
	return r, nil
}

// ReadRecord reads and decodes the record at path.
func ReadRecord(path string) (Record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Record{}, err
	}
	r, err := Decode(b)
	if err != nil {
		return Record{}, &DecodeError{Path: path, Err: err}
	}
	return r, nil
}
