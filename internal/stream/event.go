// Package stream turns the Claude Code CLI's stream-json output into typed
// events, one per line, without ever holding a whole line in memory: a line
// can be hundreds of megabytes (a base64 image in a tool result), and all the
// supervisor needs from it is its type, ids, usage and a few short strings.
// It reads an io.Reader and opens no file: internal/transcript follows the
// transcript file and hands it to the Decoder.
package stream

import "strings"

// ToolUse is one tool call requested by an assistant message (a tool_use
// block): malarun's one type for a tool call, as the attempt follows it,
// the run's decisions and prompts name it (.Name, .Input) and the record
// keeps it (running). Its JSON is the record's form, which keeps what a
// resume prompt names, the tool and its input: the id and the flags are
// the stream's alone ("-"), so the file's format is the same as it was.
type ToolUse struct {
	ID   string `json:"-"`
	Name string `json:"name"`
	// Input is the tool input as compact JSON, cut to MaxInputBytes.
	Input          string `json:"input"`
	InputTruncated bool   `json:"-"`
	// Background is input.run_in_background == true: the call starts a
	// background task that outlives the turn (docs/design.md §F17). It is read
	// from the input object itself, so a cut Input does not hide it.
	Background bool `json:"-"`
}

// Task is a background task of the CLI (a Bash command run with
// run_in_background, a background agent, a Monitor watch): malarun's one
// type for it, from the decoder (an element of a background_tasks_changed
// snapshot: ID, Type, Description, Status) through the attempt machine
// that follows it by task_id (which adds Command, ToolUseID and
// OutputFile from other lines) to the record (tasks) and the --json
// report (cut_tasks), which share its JSON.
type Task struct {
	ID          string `json:"id"`                    // task_id
	Type        string `json:"type,omitempty"`        // task_type: local_bash, local_agent, ...
	Description string `json:"description,omitempty"` // cut to MaxInputBytes
	// Command is the input of the tool call that started it, when known
	// (cut short like every tool input malarun keeps).
	Command   string `json:"command,omitempty"`
	ToolUseID string `json:"tool_use_id,omitempty"`
	// OutputFile is where the CLI writes the task's output.
	OutputFile string `json:"output_file,omitempty"`
	// Status is a snapshot element's status: empty when the CLI does not
	// say (2.1.330 does not). A task malarun follows runs, so it keeps no
	// status: no output has one ("-").
	Status string `json:"-"`
}

// MCPServer is one element of the init line's mcp_servers: malarun's one
// type for an MCP server. Its JSON is the record's and the --json
// report's form (mcp_servers_not_connected).
type MCPServer struct {
	Name   string `json:"name"`
	Status string `json:"status"` // connected, failed, pending, needs-auth, ...
}

// ConfigFile is a start-up failure's invalid_config_file (2.1.332,
// startup_failure_reason config_file_invalid): the configuration file
// that is not valid JSON, and the backup the CLI's message names.
type ConfigFile struct {
	Path string
	// PathTruncated says Path was longer than MaxShortBytes and is cut.
	PathTruncated bool
	// IsGlobal: the CLI's global config file (~/.claude.json), the only
	// one with backups.
	IsGlobal   bool
	BackupPath string
}

// Kind says whether a line could be decoded at all.
type Kind int

const (
	// KindJSON is a line that held one JSON object.
	KindJSON Kind = iota
	// KindMalformed is a complete line that is not a JSON object.
	KindMalformed
	// KindCutShort is a last line without its newline at EOF that does not
	// parse: the writer died mid-line.
	KindCutShort
)

func (k Kind) String() string {
	switch k {
	case KindJSON:
		return "json"
	case KindMalformed:
		return "malformed"
	case KindCutShort:
		return "cut-short"
	}
	return "unknown"
}

// Event is what the supervisor learns from one line. Fields that the line
// does not carry are left at their zero value.
type Event struct {
	Kind Kind
	// Bytes is the length of the line, newline excluded.
	Bytes int64
	// Line is the 1-based line number in the stream.
	Line int64
	// Offset is where the line begins: its first byte's offset in the
	// stream (the transcript file), so that the line can be read again.
	Offset int64

	Type            string // system, assistant, user, result, stream_event, rate_limit_event, ...
	Subtype         string // init, api_retry, compact_boundary, success, error_max_turns, ...
	SessionID       string
	ParentToolUseID string // non-empty for messages of a sub-agent

	// Model is the init line's model, or an assistant message's message.model.
	Model string
	// Usage is message.usage on assistant lines and usage on result lines.
	Usage    Tokens
	HasUsage bool

	// ToolUses are the tool_use blocks of an assistant message.
	ToolUses []ToolUse
	// ToolResults are the tool_use_ids of the tool_result blocks of a user message.
	ToolResults []string
	// ToolResultDetails are those blocks' ids, is_error and content text
	// (toolresult.go), one for each of ToolResults, so at most MaxListItems;
	// nil unless Decoder.KeepToolResults was called.
	ToolResultDetails []ToolResult
	// Texts are the text blocks of an assistant message, each cut to maxTextBytes.
	Texts []string

	// Result line fields. Result is cut to MaxResultBytes; ResultTruncated
	// says it was, and ReadResult copies the whole of it from the
	// transcript (Offset).
	IsError         bool
	Result          string
	ResultTruncated bool
	APIErrorStatus  int // 0 when null or absent
	Errors          []string
	TerminalReason  string
	TotalCostUSD    float64
	// ContextWindow is the largest modelUsage.*.contextWindow, 0 when absent.
	ContextWindow int64
	// NumTurns is num_turns, the model round-trips of the turn (both
	// versions; 0 on a turn the model never saw: a local command, a start-up
	// failure). HasNumTurns tells 0 from a line without one.
	NumTurns    int
	HasNumTurns bool

	// Result fields of 2.1.332 that bear on how the run ended
	// (docs/design.md §F37). ResultIndex is result_index: how many results
	// the process wrote before this one, so a gap means one was lost;
	// HasResultIndex tells 0 from absent (2.1.197 has none).
	ResultIndex    int
	HasResultIndex bool
	// QueuedTurnCount is queued_turn_count: user sends still queued when
	// the result was written; above 0 another turn and result follow.
	QueuedTurnCount int
	// ResumeReason is resume_reason: the turn re-ran one a worker restart
	// interrupted (interrupted_turn, or the host's CLAUDE_CODE_RESUME_REASON).
	ResumeReason string
	// APIErrorCode is api_error_code (results and assistant lines): the
	// server's own error code, when it is an identifier.
	APIErrorCode string
	// StartupFailureReason is startup_failure_reason: why the CLI refused
	// to start (config_file_invalid, proxy_invalid, cwd_unavailable, ...),
	// on the zeroed error_during_execution result it writes before exiting.
	StartupFailureReason string
	// InvalidConfigFile is invalid_config_file (with config_file_invalid).
	InvalidConfigFile ConfigFile

	// api_retry fields.
	Attempt      int
	MaxRetries   int
	RetryDelayMS float64
	ErrorStatus  int
	// Error is api_retry's "error" or an assistant line's top-level "error".
	Error string
	// NoResponse is api_retry's no_response (2.1.332): the API sent no
	// response headers within the CLI's first-byte window, and the CLI
	// asks again. NoResponseWaitedMS is how long the failed request waited
	// for them, NoResponseRetryWaitMS how long the retry will.
	NoResponse            bool
	NoResponseWaitedMS    float64
	NoResponseRetryWaitMS float64

	// Reason is a system line's reason: turn_preempted's (rapid_followup),
	// worker_shutting_down's. SessionState is session_state_changed's state
	// (idle, running, requires_action; 2.1.332, only with
	// CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS).
	Reason       string
	SessionState string

	// rate_limit_event fields (rate_limit_info).
	RateLimitStatus string
	RateLimitType   string
	ResetsAt        int64 // unix seconds, 0 when unknown

	// RateLimitErrorCode is rate_limit_info.errorCode (credits_required, ...).
	RateLimitErrorCode string
	// RateLimitUsingOverage is rate_limit_info.isUsingOverage: the plan's
	// window is used up but usage credits pay, so nothing was refused.
	RateLimitUsingOverage bool
	// APIError is a result's (or assistant line's) api_error, the CLI's
	// own name for why the turn failed (2.1.332: usage_limit_reached,
	// model_requires_usage_credits, long_context_credits_required, ...).
	APIError string

	// StreamEventType is event.type of a stream_event line (message_start,
	// content_block_start, content_block_delta, ping, ...). With it, what the
	// model is writing (docs/design.md §F32): StreamBlockType is a
	// content_block_start's content_block.type (text, thinking, tool_use,
	// ...), StreamBlockName its name (the tool of a tool_use block), and
	// StreamDeltaType a content_block_delta's delta.type (text_delta,
	// thinking_delta, input_json_delta, signature_delta, ...).
	StreamEventType string
	StreamBlockType string
	StreamBlockName string
	StreamDeltaType string

	// MCPServers is the init line's mcp_servers: the MCP servers the CLI
	// was given and how each stands (§F28).
	MCPServers []MCPServer

	// ClaudeCodeVersion is the init line's claude_code_version (2.1.330 and later).
	ClaudeCodeVersion string

	// Background task fields (system task_started, task_updated,
	// task_progress, task_notification; docs/design.md §F17).
	TaskID string
	// ToolUseID is the top-level tool_use_id: the call that started the task.
	ToolUseID string
	// Backgrounded is task_started's is_backgrounded: a background task, not
	// the task every foreground Bash call also starts.
	Backgrounded bool
	// Status is the top-level status (task_notification: completed, failed,
	// stopped, ...; system/status: requesting), or task_updated's patch.status.
	Status      string
	TaskType    string
	Description string // cut to MaxInputBytes
	OutputFile  string
	// Summary is task_notification's summary, or task_updated's
	// patch.error (why the task failed: "Agent stalled: ...", §F35).
	Summary string
	// Tasks is the tasks list of background_tasks_changed: the whole set of
	// running tasks, not a change. HasTasks tells an empty list (no task
	// left) from a line without one.
	Tasks    []Task
	HasTasks bool

	// Hook fields (system hook_started, hook_progress, hook_response; the
	// CLI prints them with --include-hook-events, docs/design.md §F27).
	HookID    string
	HookName  string // PreToolUse:Bash, Stop, SessionStart:startup, ...
	HookEvent string // PreToolUse, Stop, SessionStart, ...
	// HookOutcome is hook_response's outcome: success, error, cancelled
	// (the hook's own timeout), ...
	HookOutcome string
	// HookExitCode is hook_response's exit_code; HasHookExitCode tells 0
	// from a line without one.
	HookExitCode    int
	HasHookExitCode bool

	// OriginKind is a result line's origin.kind: "task-notification" for a
	// turn that a finished background task started, empty for the prompt's.
	OriginKind string

	// Rejected lists the numbers of the line that were dropped (bounds.go),
	// at most one per field path; nil when every number was kept. The
	// number fields above are always finite and within their ranges.
	Rejected []Rejected
}

// Rejects reports whether the line's number at the key path field was
// rejected (FieldTotalCostUSD, ...).
func (ev *Event) Rejects(field string) bool {
	for _, r := range ev.Rejected {
		if r.Field == field {
			return true
		}
	}
	return false
}

// UsageRejected reports whether a token count of Usage was rejected: Usage
// then counts it as 0 and undercounts.
func (ev *Event) UsageRejected() bool {
	for _, r := range ev.Rejected {
		if strings.HasPrefix(r.Field, "usage.") || strings.HasPrefix(r.Field, "message.usage.") {
			return true
		}
	}
	return false
}

// Caps on the strings kept from a line; anything longer is cut and flagged.
const (
	MaxResultBytes = 1 << 20  // the final result text is printed to the user: keep a lot
	maxTextBytes   = 64 << 10 // assistant text (checkpoints are read from it)
	MaxInputBytes  = 512      // tool input, for naming interrupted calls in a resume prompt
	MaxShortBytes  = 4 << 10  // ids, types, error strings
	MaxListItems   = 256      // tool uses, texts, results, errors per line
)
