// Package stream turns the Claude Code CLI's stream-json output into typed
// events, one per line, without ever holding a whole line in memory: a line
// can be hundreds of megabytes (a base64 image in a tool result), and all the
// supervisor needs from it is its type, ids, usage and a few short strings.
package stream

// Usage is the token usage of one API call (an assistant message) or, on a
// result line, of the whole session (cumulative; see docs/design.md §F5).
type Usage struct {
	InputTokens              int64
	OutputTokens             int64
	CacheCreationInputTokens int64
	CacheReadInputTokens     int64
}

// Occupancy is the context the conversation takes up after this call:
// everything sent (fresh, cache-created, cache-read) plus what was produced.
func (u Usage) Occupancy() int64 {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens + u.OutputTokens
}

// ToolUse is one tool call requested by an assistant message.
type ToolUse struct {
	ID   string
	Name string
	// Input is the tool input as compact JSON, cut to MaxInputBytes.
	Input          string
	InputTruncated bool
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

	Type            string // system, assistant, user, result, stream_event, rate_limit_event, ...
	Subtype         string // init, api_retry, compact_boundary, success, error_max_turns, ...
	SessionID       string
	ParentToolUseID string // non-empty for messages of a sub-agent

	// Model is the init line's model, or an assistant message's message.model.
	Model string
	// Usage is message.usage on assistant lines and usage on result lines.
	Usage    Usage
	HasUsage bool

	// ToolUses are the tool_use blocks of an assistant message.
	ToolUses []ToolUse
	// ToolResults are the tool_use_ids of the tool_result blocks of a user message.
	ToolResults []string
	// Texts are the text blocks of an assistant message, each cut to MaxTextBytes.
	Texts []string

	// Result line fields.
	IsError         bool
	Result          string // cut to MaxResultBytes
	ResultTruncated bool
	APIErrorStatus  int // 0 when null or absent
	Errors          []string
	TerminalReason  string
	TotalCostUSD    float64
	// ContextWindow is the largest modelUsage.*.contextWindow, 0 when absent.
	ContextWindow int64

	// api_retry fields.
	Attempt      int
	MaxRetries   int
	RetryDelayMS float64
	ErrorStatus  int
	// Error is api_retry's "error" or an assistant line's top-level "error".
	Error string

	// rate_limit_event fields (rate_limit_info).
	RateLimitStatus string
	RateLimitType   string
	ResetsAt        int64 // unix seconds, 0 when unknown

	// StreamEventType is event.type of a stream_event line (message_start, content_block_delta, ...).
	StreamEventType string
}

// Caps on the strings kept from a line; anything longer is cut and flagged.
const (
	MaxResultBytes = 1 << 20  // the final result text is printed to the user: keep a lot
	MaxTextBytes   = 64 << 10 // assistant text (checkpoints are read from it)
	MaxInputBytes  = 512      // tool input, for naming interrupted calls in a resume prompt
	MaxShortBytes  = 4 << 10  // ids, types, error strings
	MaxListItems   = 256      // tool uses, texts, results, errors per line
)
