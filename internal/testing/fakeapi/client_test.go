package fakeapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// This file is a minimal Messages API client for the tests: enough to send
// a request the way the CLI does and to parse the server-sent events back.

type sseEvent struct {
	Name string
	Data map[string]any
}

// readEvents parses an event stream until EOF (or a read error, returned
// with what was read so far: a dropped connection is something tests look
// for).
func readEvents(r io.Reader) ([]sseEvent, error) {
	var out []sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var name, data string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data += strings.TrimPrefix(line, "data: ")
		case line == "":
			if name == "" && data == "" {
				continue
			}
			ev := sseEvent{Name: name}
			if err := json.Unmarshal([]byte(data), &ev.Data); err != nil {
				return out, err
			}
			out = append(out, ev)
			name, data = "", ""
		}
	}
	return out, sc.Err()
}

// assembled is a streamed message put back together.
type assembled struct {
	ID         string
	Model      string
	Text       string
	Thinking   string
	Signature  string
	ToolUses   []toolUse
	StopReason string
	StartUsage map[string]any
	DeltaUsage map[string]any
	Names      []string
}

type toolUse struct {
	ID, Name string
	Input    map[string]any
}

func assemble(t *testing.T, evs []sseEvent) assembled {
	t.Helper()
	var a assembled
	partial := map[int]*strings.Builder{}
	tools := map[int]*toolUse{}
	for _, ev := range evs {
		a.Names = append(a.Names, ev.Name)
		if ev.Data["type"] != ev.Name {
			t.Errorf("event %q carries type %v", ev.Name, ev.Data["type"])
		}
		idx := 0
		if f, ok := ev.Data["index"].(float64); ok {
			idx = int(f)
		}
		switch ev.Name {
		case "message_start":
			m := ev.Data["message"].(map[string]any)
			a.ID, _ = m["id"].(string)
			a.Model, _ = m["model"].(string)
			a.StartUsage, _ = m["usage"].(map[string]any)
		case "content_block_start":
			cb := ev.Data["content_block"].(map[string]any)
			if cb["type"] == "tool_use" {
				tools[idx] = &toolUse{ID: cb["id"].(string), Name: cb["name"].(string)}
				partial[idx] = &strings.Builder{}
			}
		case "content_block_delta":
			d := ev.Data["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				a.Text += d["text"].(string)
			case "input_json_delta":
				partial[idx].WriteString(d["partial_json"].(string))
			case "thinking_delta":
				a.Thinking += d["thinking"].(string)
			case "signature_delta":
				a.Signature += d["signature"].(string)
			default:
				t.Errorf("unknown delta %v", d)
			}
		case "content_block_stop":
			if tu, ok := tools[idx]; ok {
				if err := json.Unmarshal([]byte(partial[idx].String()), &tu.Input); err != nil {
					t.Errorf("tool input %q: %v", partial[idx].String(), err)
				}
				a.ToolUses = append(a.ToolUses, *tu)
			}
		case "message_delta":
			d := ev.Data["delta"].(map[string]any)
			a.StopReason, _ = d["stop_reason"].(string)
			a.DeltaUsage, _ = ev.Data["usage"].(map[string]any)
		}
	}
	return a
}

// conversation is a request body shaped like the CLI's main loop: streaming,
// with tools.
func conversation(userText string) map[string]any {
	return map[string]any{
		"model":      "claude-test-1",
		"max_tokens": 64000,
		"stream":     true,
		"system":     []any{map[string]any{"type": "text", "text": "You are a test."}},
		"tools":      []any{map[string]any{"name": "Bash", "input_schema": map[string]any{"type": "object"}}},
		"messages":   []any{map[string]any{"role": "user", "content": userText}},
	}
}

// post sends body to the server as the CLI would, with a session header
// when session is not empty.
func post(ctx context.Context, t *testing.T, url, session string, body any) *http.Response {
	t.Helper()
	resp, err := postErr(ctx, url, session, body)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// postErr is post for goroutines, which must not call t.Fatal.
func postErr(ctx context.Context, url, session string, body any) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/messages?beta=true", bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if session != "" {
		req.Header.Set("X-Claude-Code-Session-Id", session)
	}
	return http.DefaultClient.Do(req)
}

// stream posts a conversation request and assembles the streamed reply.
func stream(t *testing.T, srv *Server, session, userText string) assembled {
	t.Helper()
	a, err := tryStream(t, srv, session, userText)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// tryStream is stream for goroutines, which must not call t.Fatal.
func tryStream(t *testing.T, srv *Server, session, userText string) (assembled, error) {
	resp, err := postErr(t.Context(), srv.URL(), session, conversation(userText))
	if err != nil {
		return assembled{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return assembled{}, fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return assembled{}, fmt.Errorf("content type %q", ct)
	}
	evs, err := readEvents(resp.Body)
	if err != nil {
		return assembled{}, err
	}
	return assemble(t, evs), nil
}

// errorBody decodes an Anthropic-style error response.
func errorBody(t *testing.T, resp *http.Response) (errType, message string) {
	t.Helper()
	defer resp.Body.Close()
	var e struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatal(err)
	}
	if e.Type != "error" {
		t.Errorf("error body type %q, want error", e.Type)
	}
	return e.Error.Type, e.Error.Message
}
