package fakeapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"unicode/utf8"
)

// reply is a step made concrete for one request: ids allocated, input
// encoded, model chosen. It is what gets written, as events or as JSON.
type reply struct {
	msgID  string
	model  string
	blocks []block
	usage  Usage
	stop   string
}

// block is one content block of a reply, in the API's JSON shape.
type block struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
}

// fakeSignature is the signature of every thinking block (the CLI sends it
// back with the history; nothing checks it here).
const fakeSignature = "fakeapi-signature"

// payload is what a block's deltas carry.
func (b block) payload() string {
	switch {
	case b.Type == "tool_use":
		return string(b.Input)
	case b.Thinking != nil:
		return *b.Thinking
	case b.Text != nil:
		return *b.Text
	}
	return ""
}

// apiUsage is the usage object of the API. All four counts are always
// present, as in the real API, because the CLI's cost and context
// accounting read each of them.
type apiUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

func toAPIUsage(u Usage) apiUsage {
	return apiUsage{
		InputTokens:              u.Input,
		OutputTokens:             u.Output,
		CacheCreationInputTokens: u.CacheCreation,
		CacheReadInputTokens:     u.CacheRead,
	}
}

// apiMessage is a whole message: the non-streaming response body, and
// (with empty content and null stop reason) the payload of message_start.
type apiMessage struct {
	ID           string   `json:"id"`
	Type         string   `json:"type"`
	Role         string   `json:"role"`
	Model        string   `json:"model"`
	Content      []block  `json:"content"`
	StopReason   *string  `json:"stop_reason"`
	StopSequence *string  `json:"stop_sequence"`
	Usage        apiUsage `json:"usage"`
}

type apiError struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	RequestID string `json:"request_id,omitempty"`
}

func newAPIError(errType, message, requestID string) apiError {
	e := apiError{Type: "error", RequestID: requestID}
	e.Error.Type = errType
	e.Error.Message = message
	return e
}

// writeJSONError answers with status and an Anthropic-style error body.
func writeJSONError(w http.ResponseWriter, status int, header http.Header, errType, message, requestID string) {
	for k, vs := range header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	writeJSON(w, status, newAPIError(errType, message, requestID))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Only our own types are encoded here; failing is a bug in this package.
		panic(fmt.Sprintf("fakeapi: encoding response: %v", err))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeMessage answers a non-streaming request with the whole message.
func writeMessage(w http.ResponseWriter, rep reply) {
	stop := rep.stop
	writeJSON(w, http.StatusOK, apiMessage{
		ID: rep.msgID, Type: "message", Role: "assistant", Model: rep.model,
		Content: rep.blocks, StopReason: &stop, Usage: toAPIUsage(rep.usage),
	})
}

// eventWriter writes server-sent events in the API's framing, flushing
// after each so the client sees every event as soon as it is written (the
// point of a stall is that message_start arrives and then nothing).
type eventWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func startEvents(w http.ResponseWriter) *eventWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &eventWriter{w: w, rc: http.NewResponseController(w)}
}

// send writes one event. A write error means the client went away; the
// caller stops at the first one, there is nobody left to answer.
func (e *eventWriter) send(name string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		panic(fmt.Sprintf("fakeapi: encoding event: %v", err))
	}
	if _, err := fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", name, b); err != nil {
		return err
	}
	return e.rc.Flush()
}

// messageStart sends message_start and a ping, as the real API does before
// the first content block.
func (e *eventWriter) messageStart(rep reply) error {
	msg := apiMessage{
		ID: rep.msgID, Type: "message", Role: "assistant", Model: rep.model,
		Content: []block{}, Usage: toAPIUsage(rep.usage),
	}
	if err := e.send("message_start", map[string]any{"type": "message_start", "message": msg}); err != nil {
		return err
	}
	return e.send("ping", map[string]string{"type": "ping"})
}

// rest sends the content blocks, message_delta and message_stop, paced
// by pace (waiting with p); stalled is called, and nothing more is sent,
// once pace.StallAfter deltas went out.
func (e *eventWriter) rest(rep reply, pace Pace, p pacer, stalled func()) error {
	sent := 0
	for i, b := range rep.blocks {
		more, err := e.block(i, b, pace, p, &sent)
		if err != nil || !more {
			if err == nil {
				stalled()
			}
			return err
		}
	}
	delta := map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": rep.stop, "stop_sequence": nil},
		"usage": toAPIUsage(rep.usage),
	}
	if err := e.send("message_delta", delta); err != nil {
		return err
	}
	return e.send("message_stop", map[string]string{"type": "message_stop"})
}

// block streams one content block: a start carrying an empty shell, the
// payload in deltas, a stop. Tool input goes as input_json_delta fragments
// that only parse once joined, like the real API's, so a client that
// forgets to concatenate them fails here rather than in production. It
// reports false (and no error) when the stream must stall here.
func (e *eventWriter) block(index int, b block, pace Pace, p pacer, sent *int) (bool, error) {
	var start block
	var deltas []map[string]any
	parts := chunks(b.payload())
	switch {
	case b.Type == "tool_use":
		start = block{Type: "tool_use", ID: b.ID, Name: b.Name, Input: json.RawMessage("{}")}
		for _, part := range parts {
			deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": part})
		}
	case b.Type == "thinking":
		empty := ""
		start = block{Type: "thinking", Thinking: &empty, Signature: &empty}
		for _, part := range parts {
			deltas = append(deltas, map[string]any{"type": "thinking_delta", "thinking": part})
		}
		deltas = append(deltas, map[string]any{"type": "signature_delta", "signature": *b.Signature})
	default:
		empty := ""
		start = block{Type: "text", Text: &empty}
		for _, part := range parts {
			deltas = append(deltas, map[string]any{"type": "text_delta", "text": part})
		}
	}
	if err := e.send("content_block_start", map[string]any{
		"type": "content_block_start", "index": index, "content_block": start,
	}); err != nil {
		return false, err
	}
	for i, d := range deltas {
		silence := pace.gapFor(b.Type)
		switch {
		case b.Type == "tool_use" && i == 0:
			silence = pace.InputAfter
		case i == 0 || d["type"] == "signature_delta":
			silence = 0
		}
		if !p.wait(silence) {
			return false, errClientGone
		}
		if err := e.send("content_block_delta", map[string]any{
			"type": "content_block_delta", "index": index, "delta": d,
		}); err != nil {
			return false, err
		}
		if *sent++; pace.StallAfter > 0 && *sent == pace.StallAfter {
			return false, nil
		}
	}
	return true, e.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
}

// errClientGone ends a paced answer whose client left (or whose server is
// closing) during a silence.
var errClientGone = errors.New("fakeapi: the client went away")

// errorEvent sends an in-stream error, the API's way to fail after the
// 200 status has gone out.
func (e *eventWriter) errorEvent(errType, message string) error {
	return e.send("error", newAPIError(errType, message, ""))
}

// maxChunk bounds one delta, so a multi-megabyte reply is streamed in many
// events as the real API would, not in one huge line.
const maxChunk = 4096

// chunks splits s into at least two pieces when it has two or more runes
// (so the client must join deltas) and at most maxChunk bytes each, cutting
// only on rune boundaries.
func chunks(s string) []string {
	if s == "" {
		return nil
	}
	size := min(maxChunk, (len(s)+1)/2)
	var out []string
	for len(s) > 0 {
		n := min(size, len(s))
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}
