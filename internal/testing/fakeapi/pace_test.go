package fakeapi

import (
	"bufio"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// timedEvent is an event and when the client read it.
type timedEvent struct {
	sseEvent
	at time.Duration // since the request was sent
}

// readTimed posts body and reads the event stream, noting when each event
// arrived, until the stream ends or stop says to stop.
func readTimed(ctx context.Context, t *testing.T, srv *Server, body map[string]any, stop func(sseEvent) bool) []timedEvent {
	t.Helper()
	start := time.Now()
	resp := post(ctx, t, srv.URL(), "s", body)
	defer resp.Body.Close()
	var out []timedEvent
	sc := bufio.NewScanner(resp.Body)
	var name string
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "event: "); ok {
			name = n
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		ev := timedEvent{sseEvent: sseEvent{Name: name}, at: time.Since(start)}
		if err := json.Unmarshal([]byte(data), &ev.Data); err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
		if stop != nil && stop(ev.sseEvent) {
			break
		}
	}
	return out
}

func firstAt(evs []timedEvent, match func(sseEvent) bool) (time.Duration, bool) {
	for _, ev := range evs {
		if match(ev.sseEvent) {
			return ev.at, true
		}
	}
	return 0, false
}

func deltaOf(kind string) func(sseEvent) bool {
	return func(ev sseEvent) bool {
		d, _ := ev.Data["delta"].(map[string]any)
		return ev.Name == "content_block_delta" && d["type"] == kind
	}
}

// A paced reply keeps its silences (lower bounds only: a loaded machine
// may add to them), pings during the long one, and still assembles to the
// same message; a thinking block streams as the API streams one.
func TestPacedReplyKeepsItsSilences(t *testing.T) {
	t.Parallel()
	pace := Pace{FirstEvent: 60 * time.Millisecond, ThinkingGap: 40 * time.Millisecond, InputAfter: 200 * time.Millisecond, Ping: 20 * time.Millisecond}
	step := Combine(Thinking("Let me think about the file."), ToolUse("Write", map[string]string{"file_path": "/tmp/x", "content": "hello"})).WithPace(pace)
	srv := Start(t, WithScript(step))
	evs := readTimed(t.Context(), t, srv, conversation("write it"), nil)

	if at, _ := firstAt(evs, func(ev sseEvent) bool { return ev.Name == "message_start" }); at < pace.FirstEvent {
		t.Errorf("message_start after %v, want at least %v", at, pace.FirstEvent)
	}
	thinking, _ := firstAt(evs, deltaOf("thinking_delta"))
	toolStart, _ := firstAt(evs, func(ev sseEvent) bool {
		b, _ := ev.Data["content_block"].(map[string]any)
		return ev.Name == "content_block_start" && b["type"] == "tool_use"
	})
	// Lower bounds from the request, which the server's silences add up
	// to (a delay in reading can only make the client see events later).
	input, ok := firstAt(evs, deltaOf("input_json_delta"))
	if want := pace.FirstEvent + pace.ThinkingGap + pace.InputAfter; !ok || input < want {
		t.Errorf("the tool input came %v after the request, want at least %v", input, want)
	}
	pings := 0
	for _, ev := range evs {
		if ev.Name == "ping" && ev.at > toolStart && ev.at < input {
			pings++
		}
	}
	if pings == 0 {
		t.Errorf("no ping during the %v silence of the tool input", pace.InputAfter)
	}
	if _, ok := firstAt(evs, deltaOf("signature_delta")); !ok || thinking == 0 {
		t.Errorf("the thinking block lacks its deltas: %v", evs)
	}
	var plain []sseEvent
	for _, ev := range evs {
		if ev.Name != "ping" {
			plain = append(plain, ev.sseEvent)
		}
	}
	if got := assemble(t, plain); len(got.ToolUses) != 1 || got.ToolUses[0].Input["content"] != "hello" || got.StopReason != "tool_use" ||
		got.Thinking != "Let me think about the file." || got.Signature == "" {
		t.Errorf("assembled %+v", got)
	}
}

// StallAfter holds the stream in the middle of a text block: the client
// has the first deltas, then nothing but pings, and the hold is a stall.
func TestPacedReplyStallsMidText(t *testing.T) {
	t.Parallel()
	srv := Start(t, WithScript(Text("The answer is that the build needs a clean cache.").WithPace(Pace{StallAfter: 1, Ping: 10 * time.Millisecond})))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pings := 0
	evs := readTimed(ctx, t, srv, conversation("why"), func(ev sseEvent) bool {
		if ev.Name == "ping" {
			pings++
		}
		return pings >= 3
	})
	if _, err := srv.WaitStalls(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	texts := 0
	for _, ev := range evs {
		if deltaOf("text_delta")(ev.sseEvent) {
			texts++
		}
		if ev.Name == "content_block_stop" || ev.Name == "message_stop" {
			t.Errorf("the stalled stream sent %s", ev.Name)
		}
	}
	if texts != 1 {
		t.Errorf("%d text deltas before the stall, want 1", texts)
	}
}

// A non-streaming request with the conversation's shape (the CLI's
// fallback) takes the next step and is answered whole once its pace has
// passed.
func TestNonStreamingFallbackIsAnsweredAfterThePace(t *testing.T) {
	t.Parallel()
	pace := Pace{InputAfter: 80 * time.Millisecond}
	srv := Start(t, WithScript(Bash("echo hi").WithPace(pace)))
	body := conversation("x")
	delete(body, "stream")
	start := time.Now()
	resp := post(t.Context(), t, srv.URL(), "s", body)
	took := time.Since(start)
	var msg struct {
		Content []struct{ Type, Name string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(msg.Content) != 1 || msg.Content[0].Name != "Bash" {
		t.Errorf("fallback answer %+v", msg)
	}
	if took < pace.InputAfter {
		t.Errorf("answered after %v, before the model could have written it (%v)", took, pace.InputAfter)
	}
	if srv.Remaining() != 0 || len(srv.ConversationRequests()) != 1 {
		t.Errorf("the fallback request did not take the step")
	}
}
