package fakeapi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

func TestTextReplyStreamsLikeTheAPI(t *testing.T) {
	srv := Start(t, WithScript(Text("hello, wörld").WithUsage(Usage{Input: 1200, Output: 7, CacheCreation: 500, CacheRead: 170000})))
	got := stream(t, srv, "s1", "hi")

	want := []string{"message_start", "ping", "content_block_start", "content_block_delta", "content_block_delta",
		"content_block_stop", "message_delta", "message_stop"}
	if !slices.Equal(got.Names, want) {
		t.Errorf("events %v, want %v", got.Names, want)
	}
	if got.Text != "hello, wörld" || got.StopReason != "end_turn" || got.ID != "msg_1" || got.Model != "claude-test-1" {
		t.Errorf("got %+v", got)
	}
	for name, u := range map[string]map[string]any{"message_start": got.StartUsage, "message_delta": got.DeltaUsage} {
		if u["input_tokens"] != 1200.0 || u["output_tokens"] != 7.0 ||
			u["cache_creation_input_tokens"] != 500.0 || u["cache_read_input_tokens"] != 170000.0 {
			t.Errorf("%s usage %v", name, u)
		}
	}
	if srv.Remaining() != 0 || srv.Problems() != nil {
		t.Errorf("remaining %d, problems %v", srv.Remaining(), srv.Problems())
	}
}

func TestToolUseStreamsInputAndAllocatesIDs(t *testing.T) {
	srv := Start(t, WithScript(
		Bash("echo hi"),
		Combine(Text("two at once"), ToolUse("Read", map[string]string{"file_path": "/x"}), Bash("ls")),
		ToolUse("Bash", map[string]string{"command": "true"}).WithToolUseID("toolu_mine"),
	))

	first := stream(t, srv, "s1", "go")
	if first.StopReason != "tool_use" || len(first.ToolUses) != 1 {
		t.Fatalf("first: %+v", first)
	}
	if tu := first.ToolUses[0]; tu.ID != "toolu_1" || tu.Name != "Bash" || tu.Input["command"] != "echo hi" {
		t.Errorf("first tool use %+v", tu)
	}

	second := stream(t, srv, "s1", "more")
	if second.Text != "two at once" || len(second.ToolUses) != 2 || second.ID != "msg_2" {
		t.Fatalf("second: %+v", second)
	}
	if second.ToolUses[0].ID != "toolu_2" || second.ToolUses[1].ID != "toolu_3" || second.ToolUses[1].Input["command"] != "ls" {
		t.Errorf("second tool uses %+v", second.ToolUses)
	}

	third := stream(t, srv, "s1", "again")
	if third.ToolUses[0].ID != "toolu_mine" {
		t.Errorf("fixed id: %+v", third.ToolUses)
	}

	reqs := srv.ConversationRequests()
	if len(reqs) != 3 || !slices.Equal(reqs[1].Reply.ToolUseIDs, []string{"toolu_2", "toolu_3"}) ||
		reqs[1].Reply.MessageID != "msg_2" || reqs[1].Reply.Step != `text "two at once" + tool_use Read + tool_use Bash` {
		t.Errorf("recorded replies: %+v", reqs[1].Reply)
	}
}

func TestIDPrefix(t *testing.T) {
	srv := Start(t, WithIDPrefix("b"), WithScript(Bash("true")))
	got := stream(t, srv, "", "go")
	if got.ID != "msg_b1" || got.ToolUses[0].ID != "toolu_b1" {
		t.Errorf("%+v", got)
	}
}

func TestToolUseRejectsNonObjectInput(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("ToolUse with a string input did not panic")
		}
	}()
	ToolUse("Bash", "echo hi")
}

func TestSideRequestsDoNotConsumeSteps(t *testing.T) {
	srv := Start(t, WithScript(Text("scripted")))

	// Non-streaming, with no tools (a helper's query): a plain JSON message.
	body := conversation("anything")
	delete(body, "stream")
	body["tools"] = []any{}
	resp := post(t.Context(), t, srv.URL(), "s1", body)
	var msg struct {
		ID      string `json:"id"`
		Type    string `json:"type"`
		Role    string `json:"role"`
		Content []struct {
			Type, Text string
		} `json:"content"`
		StopReason string `json:"stop_reason"`
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("content type %q", ct)
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if msg.Type != "message" || msg.Role != "assistant" || len(msg.Content) != 1 || msg.Content[0].Text == "" || msg.StopReason != "end_turn" {
		t.Errorf("non-streaming reply %+v", msg)
	}

	// Streaming, shaped like the CLI's session-title query.
	title := map[string]any{
		"model": "claude-test-1", "max_tokens": 64000, "stream": true, "tools": []any{},
		"thinking": map[string]any{"type": "disabled"},
		"system": []any{
			map[string]any{"type": "text", "text": "You are a Claude agent, built on Anthropic's Claude Agent SDK."},
			map[string]any{"type": "text", "text": "Generate a concise, sentence-case title (3-7 words) ..."},
		},
		"output_config": map[string]any{"format": map[string]any{"type": "json_schema", "schema": map[string]any{
			"type": "object", "properties": map[string]any{"title": map[string]any{"type": "string"}}}}},
		"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "<session>\nfix it\n</session>"}}}},
	}
	resp = post(t.Context(), t, srv.URL(), "s1", title)
	evs, err := readEvents(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := assemble(t, evs); got.Text != `{"title":"Fake session title"}` {
		t.Errorf("title reply %q", got.Text)
	}

	if srv.Remaining() != 1 {
		t.Fatalf("side requests consumed the script: %d left", srv.Remaining())
	}
	if got := stream(t, srv, "s1", "task"); got.Text != "scripted" {
		t.Errorf("conversation got %q", got.Text)
	}
	if n := len(srv.SideRequests()); n != 2 {
		t.Errorf("%d side requests recorded, want 2", n)
	}
}

func TestClassify(t *testing.T) {
	withTools := func(mut func(m map[string]any)) *Request {
		body := conversation("task")
		mut(body)
		b, _ := json.Marshal(body)
		r, _ := http.NewRequest(http.MethodPost, "http://x/v1/messages", nil)
		return parseRequest(r, b, time.Time{})
	}
	for _, tc := range []struct {
		name string
		req  *Request
		want Kind
	}{
		{"conversation", withTools(func(map[string]any) {}), KindConversation},
		// The CLI's fallback after its stream watchdog: the same turn, whole.
		{"not streaming", withTools(func(m map[string]any) { m["stream"] = false }), KindConversation},
		{"no tools", withTools(func(m map[string]any) { m["tools"] = []any{} }), KindSide},
		{"structured output", withTools(func(m map[string]any) {
			m["output_config"] = map[string]any{"effort": "high", "format": map[string]any{"type": "json_schema"}}
		}), KindSide},
		{"effort only", withTools(func(m map[string]any) { m["output_config"] = map[string]any{"effort": "high"} }), KindConversation},
		{"compaction", withTools(func(m map[string]any) {
			m["messages"] = []any{
				map[string]any{"role": "user", "content": "task"},
				map[string]any{"role": "assistant", "content": "ok"},
				map[string]any{"role": "user", "content": "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n\nYour task is to create a detailed summary of the conversation so far"},
			}
		}), KindCompaction},
		{"compaction fallback", withTools(func(m map[string]any) {
			m["system"] = "You are a helpful AI assistant tasked with summarizing conversations."
		}), KindCompaction},
		{"not json", &Request{}, KindOther},
	} {
		if got := Classify(tc.req); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCompactionIsAnsweredWithoutTheScript(t *testing.T) {
	srv := Start(t, WithScript(Text("scripted")))
	body := conversation("CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\nYour task is to create a detailed summary of the conversation")
	resp := post(t.Context(), t, srv.URL(), "s", body)
	evs, err := readEvents(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := assemble(t, evs); !strings.Contains(got.Text, "<summary>") {
		t.Errorf("compaction reply %q", got.Text)
	}
	if srv.Remaining() != 1 || srv.Requests()[0].Kind != KindCompaction {
		t.Errorf("remaining %d, kind %v", srv.Remaining(), srv.Requests()[0].Kind)
	}
}

func TestCustomClassifier(t *testing.T) {
	// A run with --tools "" offers no tools: its turns are conversation
	// requests all the same.
	srv := Start(t, WithScript(Text("scripted")), WithClassifier(func(r *Request) Kind {
		if r.Stream && !strings.Contains(r.SystemText(), titleSystemPrompt) {
			return KindConversation
		}
		return Classify(r)
	}))
	body := conversation("task")
	body["tools"] = []any{}
	resp := post(t.Context(), t, srv.URL(), "s", body)
	evs, _ := readEvents(resp.Body)
	resp.Body.Close()
	if got := assemble(t, evs); got.Text != "scripted" {
		t.Errorf("got %q", got.Text)
	}
}

func TestHTTPErrors(t *testing.T) {
	for _, tc := range []struct {
		step       Step
		status     int
		errType    string
		msgPart    string
		retryAfter string
		noRetry    bool
	}{
		{PromptTooLong(210000, 200000), 400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum", "", false},
		{AuthError(), 401, "authentication_error", "invalid x-api-key", "", false},
		{RateLimited(3), 429, "rate_limit_error", "rate limit", "3", false},
		{Overloaded(), 529, "overloaded_error", "Overloaded", "", false},
		{HTTPError(500, "api_error", "boom", http.Header{"X-Should-Retry": {"false"}}), 500, "api_error", "boom", "", true},
		{AuthError().WithHeader("X-Should-Retry", "false"), 401, "authentication_error", "invalid", "", true},
	} {
		t.Run(tc.step.String(), func(t *testing.T) {
			srv := Start(t, WithScript(tc.step))
			resp := post(t.Context(), t, srv.URL(), "s", conversation("x"))
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if got := resp.Header.Get("Retry-After"); got != tc.retryAfter {
				t.Errorf("retry-after %q, want %q", got, tc.retryAfter)
			}
			if resp.Header.Get("Request-Id") == "" {
				t.Error("no request-id header")
			}
			if got := resp.Header.Get("X-Should-Retry"); (got == "false") != tc.noRetry {
				t.Errorf("x-should-retry %q", got)
			}
			errType, msg := errorBody(t, resp)
			if errType != tc.errType || !strings.Contains(msg, tc.msgPart) {
				t.Errorf("error %s %q", errType, msg)
			}
			if r := srv.Requests()[0]; r.Reply.Status != tc.status || r.Reply.MessageID != "" {
				t.Errorf("recorded %+v", r.Reply)
			}
		})
	}
}

func TestStreamError(t *testing.T) {
	srv := Start(t, WithScript(StreamError("overloaded_error", "Overloaded")))
	resp := post(t.Context(), t, srv.URL(), "s", conversation("x"))
	defer resp.Body.Close()
	evs, err := readEvents(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || len(evs) != 3 || evs[0].Name != "message_start" || evs[2].Name != "error" {
		t.Fatalf("status %d, events %+v", resp.StatusCode, evs)
	}
	if e := evs[2].Data["error"].(map[string]any); e["type"] != "overloaded_error" {
		t.Errorf("error event %v", evs[2].Data)
	}
}

func TestRepeatAndExhaustion(t *testing.T) {
	srv := Start(t, WithScript(Repeat(Overloaded(), 2), Text("ok")))
	if n := srv.Remaining(); n != 3 {
		t.Errorf("remaining %d, want 3", n)
	}
	var statuses []int
	for range 4 {
		resp := post(t.Context(), t, srv.URL(), "s", conversation("x"))
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		statuses = append(statuses, resp.StatusCode)
	}
	if !slices.Equal(statuses, []int{529, 529, 200, 200}) {
		t.Errorf("statuses %v", statuses)
	}
	reqs := srv.ConversationRequests()
	if reqs[2].Reply.Exhausted || !reqs[3].Reply.Exhausted {
		t.Errorf("exhausted flags: %+v %+v", reqs[2].Reply, reqs[3].Reply)
	}
	err := srv.Problems()
	if err == nil || !strings.Contains(err.Error(), "request #4") || !strings.Contains(err.Error(), "exhausted") {
		t.Errorf("problems: %v", err)
	}

	srv.Enqueue(Repeat(Text("again"), 0))
	if srv.Remaining() != -1 {
		t.Errorf("remaining %d, want -1", srv.Remaining())
	}
	for range 3 {
		if got := stream(t, srv, "s", "x"); got.Text != "again" {
			t.Errorf("got %q", got.Text)
		}
	}
}

func TestExhaustedFallback(t *testing.T) {
	srv := Start(t)
	if got := stream(t, srv, "s", "x"); got.Text != ExhaustedText {
		t.Errorf("got %q", got.Text)
	}
	srv2 := Start(t, WithFallback(PromptTooLong(1, 0)))
	resp := post(t.Context(), t, srv2.URL(), "s", conversation("x"))
	resp.Body.Close()
	if resp.StatusCode != 400 || !srv2.Requests()[0].Reply.Exhausted {
		t.Errorf("fallback status %d", resp.StatusCode)
	}
}

func TestSessionScripts(t *testing.T) {
	srv := Start(t, WithScript(Text("default 1"), Text("default 2")), WithSessionScript("A", Text("A 1")))
	srv.EnqueueSession("B", Text("B 1"))

	for _, tc := range []struct{ session, want string }{
		{"A", "A 1"}, {"X", "default 1"}, {"B", "B 1"},
		{"A", ExhaustedText}, // a session with a script never falls back to the default one
		{"", "default 2"},
	} {
		if got := stream(t, srv, tc.session, "x"); got.Text != tc.want {
			t.Errorf("session %q: got %q, want %q", tc.session, got.Text, tc.want)
		}
	}
	if got := srv.ConversationRequests()[0].SessionID; got != "A" {
		t.Errorf("session id %q", got)
	}
}

func TestStallHoldsUntilClientLeaves(t *testing.T) {
	srv := Start(t, WithScript(Stall(), Text("after")))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	resp := post(ctx, t, srv.URL(), "s", conversation("x"))

	select {
	case info := <-srv.Stalled():
		if info.Request.Seq != 1 || info.Request.SessionID != "s" {
			t.Errorf("stall info %+v", info.Request)
		}
	case <-t.Context().Done():
		t.Fatal("no stall announced")
	}
	// message_start and ping have been flushed; nothing follows until we
	// give up. Read those two first, so that cancelling cannot race them.
	br := bufio.NewReader(resp.Body)
	var head []string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stalled stream: %v (events %v)", err, head)
		}
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			head = append(head, strings.TrimSpace(name))
		}
		if len(head) == 2 && line == "\n" { // the blank line ending the second event
			break
		}
	}
	done := make(chan []sseEvent)
	go func() {
		evs, _ := readEvents(br)
		done <- evs
	}()
	cancel()
	evs := <-done
	resp.Body.Close()
	if head[0] != "message_start" || head[1] != "ping" || len(evs) != 0 {
		t.Errorf("events before the stall ended: %v, then %+v", head, evs)
	}
	// The server is still usable afterwards.
	if got := stream(t, srv, "s", "x"); got.Text != "after" {
		t.Errorf("got %q", got.Text)
	}
}

func TestCloseEndsStalls(t *testing.T) {
	srv := New(WithScript(Repeat(Stall(), 0)))
	defer srv.Close()
	const n = 3
	errs := make(chan error, n)
	for range n {
		go func() {
			resp, err := postErr(context.Background(), srv.URL(), "s", conversation("x"))
			if err != nil {
				errs <- fmt.Errorf("post: %w", err)
				return
			}
			_, err = readEvents(resp.Body)
			resp.Body.Close()
			errs <- err
		}()
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	stalls, err := srv.WaitStalls(ctx, n)
	if err != nil || len(stalls) != n {
		t.Fatalf("stalls %d, %v", len(stalls), err)
	}
	srv.Close() // must return: httptest's Close waits for every handler
	for range n {
		// The connection was dropped, not ended cleanly: a client can tell
		// a server that vanished from a complete (if short) reply.
		if err := <-errs; err == nil {
			t.Error("stalled read ended without an error")
		}
	}
	if _, err := srv.WaitStalls(t.Context(), n+1); !errors.Is(err, ErrClosed) {
		t.Errorf("wait after close: %v", err)
	}
}

func TestAfterGatesTheAnswer(t *testing.T) {
	gate := make(chan struct{})
	srv := Start(t, WithScript(Text("released").After(gate)))
	done := make(chan assembled)
	go func() {
		a, err := tryStream(t, srv, "s", "x")
		if err != nil {
			t.Error(err)
		}
		done <- a
	}()

	reqs, err := srv.WaitConversationRequests(t.Context(), 1)
	if err != nil || len(reqs) != 1 || reqs[0].Reply.Step != `text "released"` {
		t.Fatalf("%v %v", reqs, err)
	}
	select {
	case <-done:
		t.Fatal("answered before the gate opened")
	default:
	}
	close(gate)
	if got := <-done; got.Text != "released" {
		t.Errorf("got %q", got.Text)
	}
}

func TestOtherRoutes(t *testing.T) {
	srv := Start(t)
	head, err := http.Head(srv.URL() + "/")
	if err != nil {
		t.Fatal(err)
	}
	head.Body.Close()
	if head.StatusCode != 200 {
		t.Errorf("HEAD / %d", head.StatusCode)
	}

	resp, err := http.Post(srv.URL()+"/v1/messages/count_tokens", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 404 {
		t.Errorf("unknown path %d", resp.StatusCode)
	}
	if errType, _ := errorBody(t, resp); errType != "not_found_error" {
		t.Errorf("error type %s", errType)
	}

	resp, err = http.Post(srv.URL()+"/v1/messages", "application/json", strings.NewReader("not json"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 400 {
		t.Errorf("bad body %d", resp.StatusCode)
	}
	resp.Body.Close()

	reqs := srv.Requests()
	if len(reqs) != 3 || reqs[0].Method != "HEAD" || reqs[1].Path != "/v1/messages/count_tokens" || reqs[2].Kind != KindOther {
		t.Fatalf("recorded %+v", reqs)
	}
	err = srv.Problems()
	if err == nil || !strings.Contains(err.Error(), "count_tokens") || !strings.Contains(err.Error(), "#3") ||
		strings.Contains(err.Error(), "#1") {
		t.Errorf("problems: %v", err)
	}
}

func TestRecordedRequestHelpers(t *testing.T) {
	srv := Start(t, WithScript(Text("ok")))
	body := map[string]any{
		"model": "claude-test-1", "stream": true, "max_tokens": 10,
		"system":   "plain string system",
		"tools":    []any{map[string]any{"name": "Bash"}},
		"metadata": map[string]any{"user_id": `{"device_id":"d","session_id":"from-metadata"}`},
		"messages": []any{
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": "<system-reminder>ctx</system-reminder>"},
				map[string]any{"type": "text", "text": "ORIGINAL TASK"},
			}},
			map[string]any{"role": "assistant", "content": []any{
				map[string]any{"type": "text", "text": "running"},
				map[string]any{"type": "tool_use", "id": "toolu_9", "name": "Bash", "input": map[string]any{"command": "echo hi"}},
			}},
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": "toolu_9", "content": "hi", "is_error": false},
				map[string]any{"type": "tool_result", "tool_use_id": "toolu_10", "is_error": true,
					"content": []any{map[string]any{"type": "text", "text": "Exit code 137"}}},
			}},
			map[string]any{"role": "system", "content": "mid-conversation system text"},
		},
	}
	resp := post(t.Context(), t, srv.URL(), "", body)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	r := srv.Requests()[0]
	if r.SessionID != "from-metadata" || !r.Stream || r.Kind != KindConversation || r.RawQuery != "beta=true" {
		t.Errorf("request %+v", r)
	}
	if r.SystemText() != "plain string system" {
		t.Errorf("system %q", r.SystemText())
	}
	if got := r.LastUserText(); got != "hi\nExit code 137" {
		t.Errorf("last user text %q", got)
	}
	all := r.AllText()
	for _, want := range []string{"ORIGINAL TASK", "running", "hi", "Exit code 137", "mid-conversation"} {
		if !strings.Contains(all, want) {
			t.Errorf("AllText lacks %q: %q", want, all)
		}
	}
	if !r.HasToolUse("toolu_9") || r.HasToolUse("toolu_10") || !r.HasToolResult("toolu_10") || r.HasToolResult("toolu_1") {
		t.Error("tool use / result lookups wrong")
	}
	if tr, ok := r.ToolResult("toolu_10"); !ok || !tr.IsError || tr.Content.Text() != "Exit code 137" {
		t.Errorf("tool result %+v", tr)
	}
	if got := r.Parsed.Messages[1].Content[1]; string(got.Input) != `{"command":"echo hi"}` {
		t.Errorf("tool input %s", got.Input)
	}
}

func TestConcurrentRequestsTakeEachStepOnce(t *testing.T) {
	const n = 20
	var steps []Step
	for i := range n {
		steps = append(steps, Text(fmt.Sprint(i)))
	}
	srv := Start(t, WithScript(steps...))
	var wg sync.WaitGroup
	texts := make([]string, n)
	for i := range n {
		wg.Go(func() {
			a, err := tryStream(t, srv, fmt.Sprint("s", i), "x")
			if err != nil {
				t.Error(err)
			}
			texts[i] = a.Text
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, got := range texts {
		seen[got] = true
	}
	for i := range n {
		if !seen[fmt.Sprint(i)] {
			t.Fatalf("step %d not served exactly once: %v", i, texts)
		}
	}
	// Recording order is step order.
	for i, r := range srv.ConversationRequests() {
		if r.Seq != i+1 || r.Reply.Step != fmt.Sprintf("text %q", fmt.Sprint(i)) {
			t.Errorf("request %d: %+v", r.Seq, r.Reply)
		}
	}
}

func TestWaitRespectsContext(t *testing.T) {
	srv := Start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if _, err := srv.WaitRequests(ctx, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v", err)
	}
}

func TestChunks(t *testing.T) {
	for _, s := range []string{"", "a", "ab", "héllo wörld", strings.Repeat("é", 10000), strings.Repeat("x", 3*maxChunk+1)} {
		parts := chunks(s)
		if strings.Join(parts, "") != s {
			t.Errorf("chunks of %d bytes do not join back", len(s))
		}
		if len(s) >= 2 && len([]rune(s)) >= 2 && len(parts) < 2 {
			t.Errorf("%q in one chunk", s)
		}
		for _, p := range parts {
			if len(p) > maxChunk+3 || !utf8.ValidString(p) {
				t.Errorf("bad chunk of %d bytes", len(p))
			}
		}
	}
}

func TestNonStreamingConversationWithCustomClassifier(t *testing.T) {
	srv := Start(t, WithClassifier(func(*Request) Kind { return KindConversation }),
		WithScript(Bash("echo hi"), StreamError("overloaded_error", "Overloaded"), Stall()))
	body := conversation("x")
	delete(body, "stream")

	resp := post(t.Context(), t, srv.URL(), "s", body)
	var msg struct {
		Content []struct {
			Type, ID, Name string
			Input          map[string]any
		}
		StopReason string `json:"stop_reason"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if msg.StopReason != "tool_use" || len(msg.Content) != 1 || msg.Content[0].ID != "toolu_1" || msg.Content[0].Input["command"] != "echo hi" {
		t.Errorf("non-streaming tool use %+v", msg)
	}

	resp = post(t.Context(), t, srv.URL(), "s", body)
	if errType, _ := errorBody(t, resp); resp.StatusCode != 500 || errType != "overloaded_error" {
		t.Errorf("stream error without stream: %d %s", resp.StatusCode, errType)
	}

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		resp, err := postErr(ctx, srv.URL(), "s", body)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	if _, err := srv.WaitStalls(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("stalled non-streaming request ended with %v", err)
	}
}

func TestResponderAnswersWithoutConsumingTheScript(t *testing.T) {
	srv := Start(t, WithScript(Text("scripted")), WithResponder(func(r *Request) (Step, bool) {
		return Text("responded"), strings.Contains(r.LastUserText(), "special")
	}))
	if got := stream(t, srv, "s", "special request"); got.Text != "responded" {
		t.Errorf("special request got %q", got.Text)
	}
	if got := stream(t, srv, "s", "plain"); got.Text != "scripted" {
		t.Errorf("plain request got %q", got.Text)
	}
}

// A usage limit carries the unified rate-limit headers the CLI reads in
// OAuth mode; a GET (the CLI's account reads) gets an empty object.
func TestUsageLimitedAndGet(t *testing.T) {
	reset := time.Unix(1795363511, 0)
	srv := Start(t, WithScript(UsageLimited("five_hour", reset)))
	resp := post(t.Context(), t, srv.URL(), "s", conversation("x"))
	if resp.StatusCode != 429 {
		t.Errorf("status %d, want 429", resp.StatusCode)
	}
	for k, want := range map[string]string{
		"anthropic-ratelimit-unified-status": "rejected", "anthropic-ratelimit-unified-reset": "1795363511",
		"anthropic-ratelimit-unified-5h-status": "rejected", "anthropic-ratelimit-unified-5h-reset": "1795363511",
		"anthropic-ratelimit-unified-representative-claim": "five_hour",
	} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	if errType, _ := errorBody(t, resp); errType != "rate_limit_error" {
		t.Errorf("error type %s", errType)
	}
	get, err := http.Get(srv.URL() + "/api/oauth/profile")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(get.Body)
	get.Body.Close()
	if get.StatusCode != 200 || string(body) != "{}" {
		t.Errorf("GET: %d %q, want 200 {}", get.StatusCode, body)
	}
	if err := srv.Problems(); err != nil {
		t.Errorf("problems: %v", err)
	}
}
