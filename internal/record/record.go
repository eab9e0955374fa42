// Package record is what malarun keeps of each issue, so that a run
// survives malarun's own death: the record (status, session, attempts,
// reclaims, owner, checkpoint, cost, process tree), its JSON form and the
// checks a record read back must pass. It does no I/O: internal/journal
// writes and reads the record file and holds the issue's lock, and the
// run's pure decisions (internal/run) read and build records without it.
package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/stream"
)

// Status is where an issue's latest run stands.
type Status string

const (
	// Processing: a malarun is running it, or died while it was (the lock tells which).
	Processing Status = "processing"
	// Interrupted: malarun stopped it on a signal (SIGINT, SIGTERM, SIGHUP,
	// SIGQUIT); the next run resumes it.
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

// Version is the version of the records this malarun writes, bumped when
// a field is added or changes meaning. Version 2 added the statuses
// "waiting" and "stopped", RetryAt, LimitType and Tasks. Version 3 added the owner's identity (start_time,
// boot_id, pid_ns) and OutputFailures. Version 4 added PromptSHA256,
// PromptChanges, RunReclaims and KilledAttempts, and Attempts counts an
// attempt cut short by malarun's death too. Version 5 added Trace.
// Version 6 added APIAnswered and MCPNotConnected. Version 7 added Cgroup
// and AttemptStartedAt. Version 8 added PhaseRoom. Version 9 added
// RunningMore and TasksMore: Running and Tasks name at most MaxInFlight
// each, and count the rest (docs/design.md §D37); ResultsLost, NoResponse
// and ResumeReason.
const Version = 9

// oldestRecordVersion is the oldest record this malarun still reads: the
// fields added since are zero in it, which is what they mean there.
const oldestRecordVersion = 1

// ProcRef names a process for later: the pid and its start time (clock ticks
// since boot), so that a reused pid is never mistaken for it.
type ProcRef struct {
	Pid       int    `json:"pid"`
	StartTime uint64 `json:"start_time"`
}

// Owner is the malarun that holds (or held) the issue. Its identity (since
// version 3) lets a later malarun tell, without the lock, whether it still
// runs: a pid means something only under the same boot and PID namespace,
// and only with its start time.
type Owner struct {
	Pid       int       `json:"pid"`
	Host      string    `json:"host"`
	StartedAt time.Time `json:"started_at"`
	// StartTime is the process's start in clock ticks since boot.
	StartTime uint64 `json:"start_time,omitempty"`
	BootID    string `json:"boot_id,omitempty"`
	PidNS     string `json:"pid_ns,omitempty"`
}

// InFlight are the tool calls and background tasks of an attempt that
// were running when it stopped (or run now), as a record names them: the
// run's state keeps them (run.State) and the driver its running attempt's,
// in this one shape.
type InFlight struct {
	// Running are the tool calls without a result yet (the CLI drops them
	// from the resumed history). At most MaxInFlight, the first in call
	// order; RunningMore counts the rest (since version 9). The record
	// keeps a call's name and input (stream.ToolUse's JSON), cut short,
	// for the resume prompt.
	Running     []stream.ToolUse `json:"running,omitempty"`
	RunningMore int              `json:"running_more,omitempty"`
	// Tasks are the CLI's background tasks still running: killed with the
	// attempt, they never notify the resumed session, so its prompt names
	// them. At most MaxInFlight, the first started; TasksMore counts the
	// rest (since version 9).
	Tasks     []stream.Task `json:"tasks,omitempty"`
	TasksMore int           `json:"tasks_more,omitempty"`
}

// UsageLimit is a usage limit a run waits for, or stopped on: one value
// from the run's decision (run.State) to the record, the report and the
// events, which embed it.
type UsageLimit struct {
	// RetryAt is when it resets (zero: none, or unknown); LimitType is its
	// kind (five_hour, seven_day, ...).
	RetryAt   time.Time `json:"retry_at,omitzero"`
	LimitType string    `json:"limit_type,omitempty"`
}

// OutputFailure is malarun's own output (its stderr, the --events file)
// that could not be written during the run: a terminal that hung up, a log
// reader that went away. The run went on without it; this says from when
// the output is missing.
type OutputFailure struct {
	Output string    `json:"output"` // "stderr", "events"
	Error  string    `json:"error"`
	At     time.Time `json:"at"`
}

// PromptChange is a rerun of the issue whose prompt differed from the
// recorded run's, and what the user chose to do (config prompt_change):
// continue the recorded run with its own prompt, or start a new run with
// the new one. The hashes are SHA-256, in hex.
type PromptChange struct {
	At       time.Time `json:"at"`
	Decision string    `json:"decision"` // PromptResume or PromptStartOver
	// RunID is the run whose prompt differed (the recorded one).
	RunID          string `json:"run_id"`
	RecordedSHA256 string `json:"recorded_sha256"`
	GivenSHA256    string `json:"given_sha256"`
}

// The decisions a PromptChange records.
const (
	PromptResume    = "resume"
	PromptStartOver = "start_over"
)

// MaxPromptChanges bounds the prompt changes a record keeps, the latest.
const MaxPromptChanges = 16

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
	// APIAnswered: the API answered this run at least once (a streamed
	// reply, a message, a success), even in an attempt that ended before a
	// whole message: a connection failure later is the network going away,
	// never a wrong address (docs/design.md §D17).
	APIAnswered bool `json:"api_answered,omitempty"`
	// MCPNotConnected are the MCP servers the last attempt's claude listed
	// as not connected in its init line: it works without their tools.
	MCPNotConnected []stream.MCPServer `json:"mcp_servers_not_connected,omitempty"`
	// SideEffects counts calls of tools with side effects in the current
	// session line (since the last context restart), by tool.
	SideEffects map[string]int `json:"side_effects,omitempty"`
	// InFlight are the tool calls and background tasks running now, or
	// cut off when the last attempt (or the last malarun) stopped: if
	// malarun dies now, the resume prompt names them.
	InFlight

	// Attempts are the claude processes the current run started: finished,
	// and one cut short by malarun's death (counted by the malarun that
	// reclaims the run, since version 4).
	Attempts int `json:"attempts"`
	// Reclaims are the malaruns that died on this run in a row (the poison
	// rule, max_reclaims; back to 0 when an invocation ends the run);
	// RunReclaims are all the reclaims of the current run (since version 4).
	Reclaims    int `json:"reclaims"`
	RunReclaims int `json:"run_reclaims"`
	// KilledAttempts are the attempts of Attempts that were killed with a
	// malarun that died: they use none of max_attempts (since version 4).
	KilledAttempts int     `json:"killed_attempts"`
	Continuations  int     `json:"continuations"`  // context restarts in the current run
	Checkpoint     string  `json:"checkpoint"`     // the last checkpoint text
	CostUSD        float64 `json:"cost_usd"`       // the current run
	TotalCostUSD   float64 `json:"total_cost_usd"` // every run of the issue

	Owner     Owner     `json:"owner"`
	StartedAt time.Time `json:"started_at"`
	UpdatedAt time.Time `json:"updated_at"`

	// Tree is the claude process of the attempt running now, with its
	// start time (one: the rest of its tree is found by the marker and the
	// cgroup): a malarun that reclaims the run ends it.
	Tree   []ProcRef `json:"tree,omitempty"`
	Marker string    `json:"marker"` // MALARUN_RUN=<marker> in the environment of every process of the run
	// Cgroup is the run's own cgroup v2 group, which holds every process of
	// the run whatever it does ("": none could be made; since version 7).
	// A malarun that reclaims the run ends what is in it and removes it.
	Cgroup string `json:"cgroup,omitempty"`
	// AttemptStartedAt is when the claude running now started (zero: none
	// runs, between attempts; since version 7): `malarun status` says since
	// when a run that is processing has been in its attempt.
	AttemptStartedAt time.Time `json:"attempt_started_at,omitzero"`

	// PhaseRoom is how many times the run doubled the silence allowed in
	// a phase of the stream (by phase name: tool_input, thinking, ...)
	// after attempts were killed there (docs/design.md §D30; since version
	// 8): a rerun of the run keeps it, so the same kill does not come back.
	PhaseRoom map[string]int `json:"phase_room,omitempty"`

	ExitCode int    `json:"exit_code"`
	Reason   string `json:"reason,omitempty"`

	// UsageLimit is the usage limit the run waits for (status Waiting;
	// since version 2).
	UsageLimit

	// OutputFailures are malarun's outputs that failed during the run, once
	// each (since version 3).
	OutputFailures []OutputFailure `json:"output_failures,omitempty"`

	// PromptSHA256 is the SHA-256 (hex) of the run's prompt (the run
	// folder's prompt.md): a rerun with another prompt is told apart from
	// one with the same even if the folder was tidied away. PromptChanges
	// are the reruns whose prompt differed, the latest MaxPromptChanges.
	// Both since version 4.
	PromptSHA256  string         `json:"prompt_sha256,omitempty"`
	PromptChanges []PromptChange `json:"prompt_changes,omitempty"`

	// ResultsLost counts the results claude numbered (result_index) that
	// never came, over the run's attempts: a result line lost (since
	// version 9; docs/design.md §D36).
	ResultsLost int `json:"results_lost,omitempty"`
	// NoResponse counts the run's requests the API never answered that
	// claude asked again itself, and what they cost (since version 9).
	NoResponse NoResponse `json:"no_response,omitzero"`
	// ResumeReason is the last resume_reason a result of the run carried:
	// claude re-ran a turn a restart of its worker interrupted (since
	// version 9).
	ResumeReason string `json:"resume_reason,omitempty"`

	// Trace is the run span of the last malarun that ran the issue with
	// OpenTelemetry traces exported: a malarun that continues the run
	// links its trace to it (since version 5).
	Trace TraceRef `json:"trace,omitzero"`

	// ReadVersion is the version the file said when the record was read:
	// Decode reads an older one into the current shape (Version is then
	// the current one; 0: not read). What an older malarun did not record
	// is unknown, not zero (malarun summary, docs/design.md §D39). Never
	// written.
	ReadVersion int `json:"-"`
}

// NoResponse counts requests the API never answered (api_retry with
// no_response, 2.1.332): Retries of them, WaitedMS what claude says it
// waited for their answers, and MS what they cost in all (WaitedMS, and the
// time from each retry's line to the next line of progress).
type NoResponse struct {
	Retries  int   `json:"retries"`
	WaitedMS int64 `json:"waited_ms"`
	MS       int64 `json:"ms"`
}

// TraceRef names an OpenTelemetry span: the W3C trace id and span id, in
// lower-case hex.
type TraceRef struct {
	TraceID string `json:"trace_id"`
	SpanID  string `json:"span_id"`
}

// IsZero reports whether t names no span.
func (t TraceRef) IsZero() bool { return t == TraceRef{} }

// Valid reports whether t names a span as W3C Trace Context spells one:
// 32 and 16 lower-case hex digits, neither all zero.
func (t TraceRef) Valid() bool {
	nonZeroHex := func(s string, n int) bool {
		return len(s) == n && isLowerHex(s) && strings.Trim(s, "0") != ""
	}
	return nonZeroHex(t.TraceID, 32) && nonZeroHex(t.SpanID, 16)
}

// Encode is the record as it is written to disk. It fails only for a
// record malarun should never build (one check refuses, a non-finite cost,
// a time outside years 0-9999): values from outside are checked where
// they enter, and FuzzRecordFromStream holds that no stream makes one.
func Encode(r Record) ([]byte, error) {
	r.Version = Version
	if err := check(r); err != nil {
		// Written, it would be read back as damaged.
		return nil, fmt.Errorf("refusing to write a record malarun could not read back: %w", err)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode the record: %w", err)
	}
	return append(data, '\n'), nil
}

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
	if r.Version < oldestRecordVersion || r.Version > Version {
		return Record{}, fmt.Errorf("record version %d, this malarun reads versions %d to %d", r.Version, oldestRecordVersion, Version)
	}
	switch r.Status {
	case Processing, Interrupted, Stopped, Succeeded, Failed, Waiting:
	default:
		return Record{}, fmt.Errorf("unknown status %q", r.Status)
	}
	if r.Version < 2 && (r.Status == Waiting || r.Status == Stopped || !r.RetryAt.IsZero() || r.LimitType != "" || len(r.Tasks) > 0) {
		return Record{}, fmt.Errorf("a version %d record cannot have status %s, retry_at, limit_type or tasks (version 2 added them)", r.Version, r.Status)
	}
	if r.Version < 3 && (r.Owner.StartTime != 0 || r.Owner.BootID != "" || r.Owner.PidNS != "" || len(r.OutputFailures) > 0) {
		return Record{}, fmt.Errorf("a version %d record cannot have the owner's start_time, boot_id or pid_ns, or output_failures (version 3 added them)", r.Version)
	}
	if r.Version < 4 && (r.RunReclaims != 0 || r.KilledAttempts != 0 || r.PromptSHA256 != "" || len(r.PromptChanges) > 0) {
		return Record{}, fmt.Errorf("a version %d record cannot have run_reclaims, killed_attempts, prompt_sha256 or prompt_changes (version 4 added them)", r.Version)
	}
	if r.Version < 5 && !r.Trace.IsZero() {
		return Record{}, fmt.Errorf("a version %d record cannot have trace (version 5 added it)", r.Version)
	}
	if r.Version < 6 && (r.APIAnswered || len(r.MCPNotConnected) > 0) {
		return Record{}, fmt.Errorf("a version %d record cannot have api_answered or mcp_servers_not_connected (version 6 added them)", r.Version)
	}
	if r.Version < 7 && (r.Cgroup != "" || !r.AttemptStartedAt.IsZero()) {
		return Record{}, fmt.Errorf("a version %d record cannot have cgroup or attempt_started_at (version 7 added them)", r.Version)
	}
	if r.Version < 8 && len(r.PhaseRoom) > 0 {
		return Record{}, fmt.Errorf("a version %d record cannot have phase_room (version 8 added it)", r.Version)
	}
	if r.Version < 9 {
		if r.RunningMore != 0 || r.TasksMore != 0 {
			return Record{}, fmt.Errorf("a version %d record cannot have running_more or tasks_more (version 9 added them)", r.Version)
		}
		// Earlier malaruns kept every call and task in flight: the first
		// MaxInFlight are named, the rest counted, as now.
		r.Running, r.RunningMore = Named(r.Running, 0)
		r.Tasks, r.TasksMore = Named(r.Tasks, 0)
	}
	r.ReadVersion, r.Version = r.Version, Version
	if err := check(r); err != nil {
		return Record{}, err
	}
	// Earlier malaruns could record $PWD as spelled ("/src/app/"): the
	// same directory, which the CLI names by its clean path.
	r.Cwd = filepath.Clean(r.Cwd)
	return r, nil
}
