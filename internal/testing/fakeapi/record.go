package fakeapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// Kind is how the server classified a request, which decides how it is
// answered and whether it consumes a scripted step.
type Kind int

const (
	// KindOther is anything that is not a Messages request: the CLI's
	// `HEAD /` connectivity probe, unknown paths (answered 404) and bodies
	// that are not JSON (answered 400).
	KindOther Kind = iota
	// KindConversation is a streaming request of the agent's main loop. It
	// consumes the next scripted step.
	KindConversation
	// KindSide is a request the CLI makes for itself (a session title, a
	// summary): answered with a short canned reply, never from the script.
	KindSide
	// KindCompaction is the CLI summarising its own conversation. It is
	// answered with a canned summary, never from the script, so that an
	// unexpected compaction cannot shift every later step; a test can see it
	// happened with [Server.Requests].
	KindCompaction
)

func (k Kind) String() string {
	switch k {
	case KindOther:
		return "other"
	case KindConversation:
		return "conversation"
	case KindSide:
		return "side"
	case KindCompaction:
		return "compaction"
	}
	return "unknown"
}

// Request is one HTTP request the server received, recorded before it was
// answered. A recorded Request is never modified afterwards, so it can be
// read without locking; callers must not modify it either.
type Request struct {
	// Seq is the 1-based position of the request in arrival order, over all
	// requests the server received.
	Seq      int
	Time     time.Time
	Method   string
	Path     string
	RawQuery string
	Header   http.Header
	// SessionID is the X-Claude-Code-Session-Id header, or the session_id
	// inside metadata.user_id when the header is missing.
	SessionID string
	// AgentID is the X-Claude-Code-Agent-Id header: the CLI sends it on a
	// sub-agent's requests ("" for the main agent's; §F35).
	AgentID string
	// Stream is whether the body asked for server-sent events.
	Stream bool
	Kind   Kind
	// Body is the raw request body.
	Body []byte
	// Parsed is the decoded Messages body, nil when the body is not JSON.
	Parsed *MessagesRequest
	// Reply is what the server answered (or began to answer).
	Reply Reply
}

// Reply records how the server answered a request.
type Reply struct {
	// Step describes the step served, e.g. `text "done"`, `tool_use Bash`,
	// `stall`, `http 429 rate_limit_error`, or `side`.
	Step string
	// Status is the HTTP status code sent.
	Status int
	// MessageID is the id of the message sent, if any.
	MessageID string
	// ToolUseIDs are the ids given to the tool_use blocks sent, in order.
	ToolUseIDs []string
	// Exhausted is true when the script had no step left for this
	// conversation request and the fallback was served instead.
	Exhausted bool
}

// MessagesRequest is the part of a Messages API request body that tests
// look at. Fields the CLI sends that are not listed here stay in
// [Request.Body].
type MessagesRequest struct {
	Model    string    `json:"model"`
	System   Blocks    `json:"system"`
	Messages []Message `json:"messages"`
	Tools    []Tool    `json:"tools"`
	// MaxTokens is max_tokens: 64000 for both conversation and side
	// requests in CLI 2.1.197, so it does not tell them apart.
	MaxTokens    int             `json:"max_tokens"`
	Stream       bool            `json:"stream"`
	Thinking     json.RawMessage `json:"thinking,omitempty"`
	OutputConfig json.RawMessage `json:"output_config,omitempty"`
	Metadata     json.RawMessage `json:"metadata,omitempty"`
}

// Tool is a tool definition offered to the model; only its name is kept.
type Tool struct {
	Name string `json:"name"`
	Type string `json:"type,omitempty"`
}

// Message is one conversation turn. Role is "user" or "assistant", and with
// the CLI's mid-conversation-system beta also "system".
type Message struct {
	Role    string `json:"role"`
	Content Blocks `json:"content"`
}

// ContentBlock is one block of a message, a system prompt or a tool result.
// Only the fields of its Type are set.
type ContentBlock struct {
	Type string `json:"type"`
	// Text is set for "text" blocks.
	Text string `json:"text,omitempty"`
	// ID, Name and Input are set for "tool_use" blocks.
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// ToolUseID, Content and IsError are set for "tool_result" blocks.
	ToolUseID string `json:"tool_use_id,omitempty"`
	Content   Blocks `json:"content,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
}

// Blocks is a list of content blocks. The API accepts a plain string
// wherever a list of blocks may appear (message content, system, tool result
// content); such a string is decoded as one text block, so tests need not
// care which form the CLI chose.
type Blocks []ContentBlock

// UnmarshalJSON accepts a string, null, or an array of blocks.
func (b *Blocks) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	switch {
	case bytes.Equal(data, []byte("null")):
		*b = nil
		return nil
	case len(data) > 0 && data[0] == '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*b = Blocks{{Type: "text", Text: s}}
		return nil
	}
	var list []ContentBlock
	if err := json.Unmarshal(data, &list); err != nil {
		return err
	}
	*b = list
	return nil
}

// Text is the text of all text blocks, and of the content of tool results,
// joined by newlines.
func (b Blocks) Text() string {
	var parts []string
	for _, c := range b {
		switch c.Type {
		case "text":
			parts = append(parts, c.Text)
		case "tool_result":
			if t := c.Content.Text(); t != "" {
				parts = append(parts, t)
			}
		}
	}
	return strings.Join(parts, "\n")
}

// SystemText is the whole system prompt as one string.
func (r *Request) SystemText() string {
	if r.Parsed == nil {
		return ""
	}
	return r.Parsed.System.Text()
}

// LastUserText is the text of the last message with role "user" (its text
// blocks and tool result contents), or "" if there is none. On the first
// request of a run it holds the prompt, after a <system-reminder> block the
// CLI adds.
func (r *Request) LastUserText() string {
	if r.Parsed == nil {
		return ""
	}
	msgs := r.Parsed.Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i].Content.Text()
		}
	}
	return ""
}

// AllText is the text of every message of the conversation, in order and
// whatever its role, joined by newlines: for assertions such as "the
// resumed conversation still contains the original task". The system
// prompt is not included (see [Request.SystemText]).
func (r *Request) AllText() string {
	if r.Parsed == nil {
		return ""
	}
	var parts []string
	for _, m := range r.Parsed.Messages {
		if t := m.Content.Text(); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n")
}

// HasToolUse reports whether the conversation sent contains an assistant
// tool_use block with this id.
func (r *Request) HasToolUse(id string) bool {
	_, ok := r.find("tool_use", id)
	return ok
}

// HasToolResult reports whether the conversation sent contains a
// tool_result block for the tool_use with this id.
func (r *Request) HasToolResult(id string) bool {
	_, ok := r.find("tool_result", id)
	return ok
}

// ToolResult returns the tool_result block for the tool_use with this id.
// Its Content.Text() is what the tool printed (e.g. "hi" for `echo hi`).
func (r *Request) ToolResult(id string) (ContentBlock, bool) {
	return r.find("tool_result", id)
}

func (r *Request) find(typ, id string) (ContentBlock, bool) {
	if r.Parsed == nil {
		return ContentBlock{}, false
	}
	for _, m := range r.Parsed.Messages {
		for _, c := range m.Content {
			if c.Type != typ {
				continue
			}
			if (typ == "tool_use" && c.ID == id) || (typ == "tool_result" && c.ToolUseID == id) {
				return c, true
			}
		}
	}
	return ContentBlock{}, false
}

// parseRequest builds the record of one HTTP request. A body that is not a
// JSON object leaves Parsed nil; it is still recorded.
func parseRequest(r *http.Request, body []byte, now time.Time) *Request {
	req := &Request{
		Time:      now,
		Method:    r.Method,
		Path:      r.URL.Path,
		RawQuery:  r.URL.RawQuery,
		Header:    r.Header.Clone(),
		SessionID: r.Header.Get("X-Claude-Code-Session-Id"),
		AgentID:   r.Header.Get("X-Claude-Code-Agent-Id"),
		Body:      body,
	}
	if len(body) > 0 {
		var p MessagesRequest
		if err := json.Unmarshal(body, &p); err == nil {
			req.Parsed = &p
			req.Stream = p.Stream
		}
	}
	if req.SessionID == "" && req.Parsed != nil {
		req.SessionID = sessionFromMetadata(req.Parsed.Metadata)
	}
	return req
}

// sessionFromMetadata digs the session id out of metadata.user_id, which
// the CLI sends as a JSON object encoded in a string (docs/design.md §F12).
func sessionFromMetadata(raw json.RawMessage) string {
	var md struct {
		UserID string `json:"user_id"`
	}
	if json.Unmarshal(raw, &md) != nil || md.UserID == "" {
		return ""
	}
	var uid struct {
		SessionID string `json:"session_id"`
	}
	if json.Unmarshal([]byte(md.UserID), &uid) != nil {
		return ""
	}
	return uid.SessionID
}
