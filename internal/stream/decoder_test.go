package stream

import (
	"bytes"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

func TestDecoderCases(t *testing.T) {
	deep := func(n int) string {
		return `{"type":"deep","x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + "}\n"
	}
	tests := []decoderCase{
		{
			name: "escapes and unicode",
			in:   `{"type":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00|\ud800x|\udc00|\ud83d\ud83d\ude00|\u0041","session_id":"\u00"}` + "\n",
			want: []Event{{Kind: KindMalformed, Line: 1}}, // \u00" is not 4 hex digits
		},
		{
			name: "escapes decoded",
			in:   `{"type":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00|\ud800x|\udc00|\ud83d\ud83d\ude00|\u0041|\ud83d"}` + "\n",
			want: []Event{{Line: 1, Type: "a\"b\\c/d\b\f\n\r\té😀|\uFFFDx|\uFFFD|\uFFFD😀|A|\uFFFD"}},
		},
		{
			name: "escaped key",
			in:   `{"\u0074ype":"x","sub\u0074ype":"y"}` + "\n",
			want: []Event{{Line: 1, Type: "x", Subtype: "y"}},
		},
		{
			name: "invalid utf-8 becomes U+FFFD",
			in:   "{\"type\":\"a\xffb\xc3\"}\n",
			want: []Event{{Line: 1, Type: "a\uFFFDb\uFFFD"}},
		},
		{
			name: "block keys in any order",
			in: `{"message":{"content":[{"input":{"x":1},"name":"Read","id":"toolu_a","type":"tool_use"},` +
				`{"tool_use_id":"toolu_b","content":[{"type":"text","text":"nested, not kept"}],"type":"tool_result"},` +
				`{"text":"hi","type":"text"},{"type":"thinking","thinking":"skipped"}],"usage":{"output_tokens":2}},"type":"assistant"}` + "\n",
			want: []Event{{
				Line: 1, Type: "assistant", HasUsage: true, Usage: Tokens{OutputTokens: 2},
				ToolUses:    []ToolUse{{ID: "toolu_a", Name: "Read", Input: `{"x":1}`}},
				ToolResults: []string{"toolu_b"},
				Texts:       []string{"hi"},
			}},
		},
		{
			name: "nulls",
			in: `{"type":"result","api_error_status":null,"parent_tool_use_id":null,"error_status":null,"usage":null,` +
				`"message":null,"errors":null,"modelUsage":null,"total_cost_usd":null,"is_error":null}` + "\n",
			want: []Event{{Line: 1, Type: "result"}},
		},
		{
			name: "nested tool input is compacted",
			in: `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"Edit","input":` +
				`{ "path" : "a b.go", "edits": [ {"old": "x\n\"y\"", "n": 1.5e2}, [ ], { } , true, null, false ] , "e":"\u00e9" }` +
				`}]}}` + "\n",
			want: []Event{{Line: 1, Type: "assistant", ToolUses: []ToolUse{{ID: "t", Name: "Edit",
				Input: `{"path":"a b.go","edits":[{"old":"x\n\"y\"","n":1.5e2},[],{},true,null,false],"e":"\u00e9"}`}}}},
		},
		{
			name: "wrong types are ignored",
			in: `{"type":5,"subtype":["x"],"attempt":"3","error":{"type":"overloaded"},"is_error":"yes",` +
				`"usage":[1,2],"message":{"content":"a plain string","usage":{"input_tokens":"9"}},"result":{"a":1},"errors":"nope"}` + "\n",
			want: []Event{{Line: 1, HasUsage: true}},
		},
		{
			name: "numbers",
			in: `{"type":"result","total_cost_usd":1.5e-2,"api_error_status":529,"usage":{"input_tokens":1e3,"output_tokens":-0,` +
				`"cache_read_input_tokens":123456789012,"cache_creation_input_tokens":2.0},"retry_delay_ms":0.5,` +
				`"modelUsage":{"a":{"contextWindow":200000},"b":{"contextWindow":1000000},"c":{"contextWindow":1E2}},"x":[-1.25E+10,0,0.0]}` + "\n",
			want: []Event{{
				Line: 1, Type: "result", TotalCostUSD: 0.015, APIErrorStatus: 529, HasUsage: true, RetryDelayMS: 0.5,
				Usage:         Tokens{InputTokens: 1000, CacheReadInputTokens: 123456789012, CacheCreationInputTokens: 2},
				ContextWindow: 1000000,
			}},
		},
		{
			name: "huge number is rejected",
			in:   `{"type":"result","usage":{"input_tokens":1` + strings.Repeat("0", 400) + `}}` + "\n",
			want: []Event{{Line: 1, Type: "result", HasUsage: true,
				Rejected: []Rejected{{Field: "usage.input_tokens", Raw: "1" + strings.Repeat("0", maxNumBytes-1) + "..."}}}},
		},
		{
			name: "garbage then a good line",
			in:   "not json\n{\"type\":\"ok\"}\n",
			want: []Event{{Kind: KindMalformed, Line: 1}, {Line: 2, Type: "ok"}},
		},
		{
			name: "empty lines are skipped but counted",
			in:   "\n\n{\"type\":\"a\"}\n\n\n{\"type\":\"b\"}\n\n",
			want: []Event{{Line: 3, Type: "a"}, {Line: 6, Type: "b"}},
		},
		{
			name: "blanks around the object",
			in:   " \t{\"type\":\"a\"} \t\r\n",
			want: []Event{{Line: 1, Type: "a"}},
		},
		{
			name: "blank line is malformed",
			in:   "  \n{}\n",
			want: []Event{{Kind: KindMalformed, Line: 1}, {Line: 2}},
		},
		{
			name: "cut short last line",
			in:   "{\"type\":\"a\"}\n{\"type\":\"assistant\",\"message\":{\"content\":[{\"text\":\"hal",
			want: []Event{{Line: 1, Type: "a"}, {Kind: KindCutShort, Line: 2}},
		},
		{
			name: "cut short in an escape",
			in:   `{"type":"a\u00`,
			want: []Event{{Kind: KindCutShort, Line: 1}},
		},
		{
			name: "cut short in a number",
			in:   `{"attempt":12`,
			want: []Event{{Kind: KindCutShort, Line: 1}},
		},
		{
			name: "cut short garbage",
			in:   `xyz`,
			want: []Event{{Kind: KindCutShort, Line: 1}},
		},
		{
			name: "complete last line without newline",
			in:   "{\"type\":\"a\"}\n{\"type\":\"result\",\"is_error\":true}  ",
			want: []Event{{Line: 1, Type: "a"}, {Line: 2, Type: "result", IsError: true}},
		},
		{
			name: "trailing bytes after the object",
			in:   "{\"type\":\"a\"} x\n{\"type\":\"a\"}{}\n{\"type\":\"b\"}\n",
			want: []Event{{Kind: KindMalformed, Line: 1}, {Kind: KindMalformed, Line: 2}, {Line: 3, Type: "b"}},
		},
		{
			name: "not an object",
			in:   "[]\n\"s\"\n12\nnull\n}\n{\n",
			want: []Event{
				{Kind: KindMalformed, Line: 1}, {Kind: KindMalformed, Line: 2}, {Kind: KindMalformed, Line: 3},
				{Kind: KindMalformed, Line: 4}, {Kind: KindMalformed, Line: 5}, {Kind: KindMalformed, Line: 6},
			},
		},
		{
			name: "bad syntax",
			in: "{\"a\":01}\n{\"a\":-}\n{\"a\":1.}\n{\"a\":1e}\n{\"a\":tru}\n{\"a\":nul}\n{\"a\" 1}\n{\"a\":1,}\n" +
				"{\"a\":[1,]}\n{,}\n{\"a\":\"x\ty\"}\n{\"a\":\"\\x\"}\n{'a':1}\n{\"a\":1 \"b\":2}\n",
			want: func() []Event {
				var evs []Event
				for i := range 14 {
					evs = append(evs, Event{Kind: KindMalformed, Line: int64(i + 1)})
				}
				return evs
			}(),
		},
		{
			name: "newline inside a string resynchronises at the newline",
			in:   "{\"type\":\"a\n{\"type\":\"b\"}\n",
			want: []Event{{Kind: KindMalformed, Line: 1}, {Line: 2, Type: "b"}},
		},
		{
			name: "nesting at the cap",
			in:   deep(maxDepth - 1),
			want: []Event{{Line: 1, Type: "deep"}},
		},
		{
			name: "nesting over the cap",
			in:   deep(maxDepth) + "{\"type\":\"after\"}\n",
			want: []Event{{Kind: KindMalformed, Line: 1}, {Line: 2, Type: "after"}},
		},
		{
			name: "stream_event",
			in: `{"type":"stream_event","event":{"type":"message_start","message":{"model":"m","usage":{"input_tokens":5},` +
				`"content":[{"type":"text","text":"not kept"}]}},"session_id":"s","parent_tool_use_id":"toolu_p"}` + "\n",
			want: []Event{{Line: 1, Type: "stream_event", StreamEventType: "message_start", SessionID: "s", ParentToolUseID: "toolu_p"}},
		},
		{
			name: "rate_limit_event",
			in:   `{"type":"rate_limit_event","rate_limit_info":{"resetsAt":1749924000,"rateLimitType":"five_hour","status":"rejected","x":{}}}` + "\n",
			want: []Event{{Line: 1, Type: "rate_limit_event", RateLimitStatus: "rejected", RateLimitType: "five_hour", ResetsAt: 1749924000}},
		},
		{
			name: "init and api_retry",
			in: `{"type":"system","subtype":"init","model":"claude-opus-4-8[1m]","tools":["Bash"],"session_id":"s"}` + "\n" +
				`{"type":"system","subtype":"api_retry","attempt":2,"max_retries":10,"retry_delay_ms":1138.5,"error_status":529,"error":"overloaded_error"}` + "\n",
			want: []Event{
				{Line: 1, Type: "system", Subtype: "init", Model: "claude-opus-4-8[1m]", SessionID: "s"},
				{Line: 2, Type: "system", Subtype: "api_retry", Attempt: 2, MaxRetries: 10, RetryDelayMS: 1138.5, ErrorStatus: 529, Error: "overloaded_error"},
			},
		},
		{
			// docs/design.md §F37: what 2.1.332 says about how a turn ended.
			name: "outcome fields of a result",
			in: `{"type":"result","subtype":"success","is_error":false,"num_turns":3,"result":"done","queued_turn_count":1,` +
				`"result_index":2,"resume_reason":"interrupted_turn","api_error_code":"some_gate","api_error":"no_response"}` + "\n",
			want: []Event{{Line: 1, Type: "result", Subtype: "success", Result: "done", NumTurns: 3, HasNumTurns: true,
				QueuedTurnCount: 1, ResultIndex: 2, HasResultIndex: true, ResumeReason: "interrupted_turn",
				APIErrorCode: "some_gate", APIError: "no_response"}},
		},
		{
			name: "a zeroed start-up failure result",
			in: `{"type":"result","subtype":"error_during_execution","duration_ms":0,"is_error":true,"num_turns":0,` +
				`"errors":["Claude configuration file at /h/.claude.json is corrupted"],"startup_failure_reason":"config_file_invalid",` +
				`"invalid_config_file":{"path":"/h/.claude.json","is_global":true,"backup_searched":true,"backup_path":"/h/.claude/backups/x","extra":[1]},` +
				`"result_index":0}` + "\n",
			want: []Event{{Line: 1, Type: "result", Subtype: "error_during_execution", IsError: true, HasNumTurns: true,
				Errors: []string{"Claude configuration file at /h/.claude.json is corrupted"}, StartupFailureReason: "config_file_invalid",
				InvalidConfigFile: ConfigFile{Path: "/h/.claude.json", IsGlobal: true, BackupPath: "/h/.claude/backups/x"},
				HasResultIndex:    true}},
		},
		{
			name: "invalid_config_file of the wrong shape is skipped",
			in:   `{"type":"result","invalid_config_file":"/h/.claude.json","num_turns":null}` + "\n",
			want: []Event{{Line: 1, Type: "result"}},
		},
		{
			name: "api_retry without an answer",
			in: `{"type":"system","subtype":"api_retry","attempt":1,"max_retries":1,"retry_delay_ms":0,"error_status":null,` +
				`"error":"unknown","no_response":{"waited_ms":180000,"retry_wait_ms":180000.5}}` + "\n" +
				`{"type":"system","subtype":"api_retry","no_response":null}` + "\n" +
				`{"type":"system","subtype":"api_retry","no_response":{}}` + "\n",
			want: []Event{
				{Line: 1, Type: "system", Subtype: "api_retry", Attempt: 1, MaxRetries: 1, Error: "unknown",
					NoResponse: true, NoResponseWaitedMS: 180000, NoResponseRetryWaitMS: 180000.5},
				{Line: 2, Type: "system", Subtype: "api_retry"},
				{Line: 3, Type: "system", Subtype: "api_retry", NoResponse: true},
			},
		},
		{
			name: "system lines that end or hand over a turn",
			in: `{"type":"system","subtype":"turn_preempted","reason":"rapid_followup","preempted_by_uuid":"u"}` + "\n" +
				`{"type":"system","subtype":"session_state_changed","state":"idle"}` + "\n",
			want: []Event{
				{Line: 1, Type: "system", Subtype: "turn_preempted", Reason: "rapid_followup"},
				{Line: 2, Type: "system", Subtype: "session_state_changed", SessionState: "idle"},
			},
		},
		{
			name: "last duplicate wins",
			in:   `{"type":"a","type":"b","message":{"model":"m1"},"model":"m2"}` + "\n",
			want: []Event{{Line: 1, Type: "b", Model: "m2"}},
		},
		{
			name: "empty stream",
			in:   "",
		},
		{
			name: "only newlines",
			in:   "\n\n\n",
		},
	}
	runDecoderCases(t, tests)
}

type decoderCase struct {
	name string
	in   string
	want []Event // Bytes is filled in from the line when left at 0, Offset always
}

// runDecoderCases decodes each case whole and one byte at a time.
func runDecoderCases(t *testing.T, tests []decoderCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := withBytes(tt.in, tt.want)
			for _, r := range []struct {
				name string
				r    io.Reader
			}{
				{"whole", strings.NewReader(tt.in)},
				{"one byte at a time", iotest.OneByteReader(strings.NewReader(tt.in))},
			} {
				got := decodeAll(t, r.r)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s:\n got %s\nwant %s", r.name, render(got), render(want))
				}
			}
		})
	}
}

// withBytes fills in the Bytes of each wanted event from its line, and its
// Offset: the lengths of the lines before it, newlines included.
func withBytes(in string, want []Event) []Event {
	lines := strings.Split(in, "\n")
	out := append([]Event(nil), want...)
	for i := range out {
		if out[i].Bytes == 0 {
			out[i].Bytes = int64(len(lines[out[i].Line-1]))
		}
		for _, l := range lines[:out[i].Line-1] {
			out[i].Offset += int64(len(l)) + 1
		}
	}
	return out
}

func render(evs []Event) string {
	var b strings.Builder
	for _, ev := range evs {
		b.WriteString("\n  ")
		b.Write(renderEvent(ev))
	}
	return b.String()
}

func TestDecoderCaps(t *testing.T) {
	longText := strings.Repeat("é", maxTextBytes) // two bytes each: the cap falls inside a rune
	longResult := strings.Repeat(`ab\n`, MaxResultBytes)
	longInput := strings.Repeat("x", 3*bufSize)
	in := `{"type":"assistant","message":{"content":[` +
		`{"type":"text","text":"` + longText + `"},` +
		`{"type":"tool_use","id":"` + strings.Repeat("i", 2*MaxShortBytes) + `","name":"Write","input":{"file_path":"/x","content":"` + longInput + `"}}` +
		`]}}` + "\n" +
		`{"type":"result","result":"` + longResult + `"}` + "\n" +
		`{"type":"result","errors":[` + strings.Repeat(`"e",`, MaxListItems+10) + `"last"]}` + "\n"
	evs := decodeAll(t, strings.NewReader(in))
	if len(evs) != 3 {
		t.Fatalf("got %d events, want 3", len(evs))
	}
	a := evs[0]
	if len(a.Texts) != 1 || len(a.Texts[0]) != maxTextBytes || !utf8.ValidString(a.Texts[0]) || !strings.HasPrefix(longText, a.Texts[0]) {
		t.Errorf("text: got %d bytes (valid UTF-8: %v), want the first %d bytes", len(a.Texts[0]), utf8.ValidString(a.Texts[0]), maxTextBytes)
	}
	if len(a.ToolUses) != 1 {
		t.Fatalf("tool uses: %+v", a.ToolUses)
	}
	tu := a.ToolUses[0]
	wantInput := (`{"file_path":"/x","content":"` + longInput)[:MaxInputBytes]
	if tu.Input != wantInput || !tu.InputTruncated || tu.Name != "Write" || len(tu.ID) != MaxShortBytes {
		t.Errorf("tool use: input %q (truncated %v), name %q, id of %d bytes", tu.Input, tu.InputTruncated, tu.Name, len(tu.ID))
	}
	r := evs[1]
	if len(r.Result) != MaxResultBytes || !r.ResultTruncated || !strings.HasPrefix(r.Result, "ab\nab\n") {
		t.Errorf("result: %d bytes, truncated %v", len(r.Result), r.ResultTruncated)
	}
	if e := evs[2].Errors; len(e) != MaxListItems || e[0] != "e" {
		t.Errorf("errors: %d kept, want %d", len(e), MaxListItems)
	}
	// A configuration file's path is cut at PATH_MAX, and says so.
	longPath := "/" + strings.Repeat("d/", MaxShortBytes)
	evs = decodeAll(t, strings.NewReader(`{"type":"result","invalid_config_file":{"path":"`+longPath+`"}}`))
	if p := evs[0].InvalidConfigFile; len(p.Path) != MaxShortBytes || !p.PathTruncated || !strings.HasPrefix(longPath, p.Path) {
		t.Errorf("config path: %d bytes, truncated %v", len(p.Path), p.PathTruncated)
	}
	// Short values are not flagged.
	evs = decodeAll(t, strings.NewReader(`{"type":"result","result":"ok","message":{"content":[{"type":"tool_use","input":{}}]}}`))
	if evs[0].ResultTruncated || evs[0].ToolUses[0].InputTruncated || evs[0].ToolUses[0].Input != "{}" || evs[0].InvalidConfigFile.PathTruncated {
		t.Errorf("short values flagged as truncated: %+v", evs[0])
	}
}

// TestDecoderChunking decodes every transcript through readers that split
// the stream everywhere: results must not depend on where reads end.
func TestDecoderChunking(t *testing.T) {
	for _, path := range transcripts(t) {
		want := decodeFile(t, path)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for name, r := range map[string]io.Reader{
			"one byte": iotest.OneByteReader(bytes.NewReader(data)),
			"half":     iotest.HalfReader(bytes.NewReader(data)),
			"data+err": iotest.DataErrReader(bytes.NewReader(data)),
		} {
			if got := decodeAll(t, r); !reflect.DeepEqual(got, want) {
				t.Errorf("%s through %s reader:\n got %s\nwant %s", path, name, render(got), render(want))
			}
		}
	}
}

func TestDecoderReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("{\"type\":\"a\"}\n{\"type\":"), iotest.ErrReader(boom))
	d := NewDecoder(r)
	ev, err := d.Next()
	if err != nil || ev.Type != "a" {
		t.Fatalf("first line: %+v, %v", ev, err)
	}
	for range 2 { // the error sticks
		if _, err := d.Next(); !errors.Is(err, boom) {
			t.Fatalf("got %v, want the reader's error", err)
		}
	}
}

func TestDecoderEOFRepeats(t *testing.T) {
	d := NewDecoder(strings.NewReader("{}"))
	if ev, err := d.Next(); err != nil || ev.Kind != KindJSON {
		t.Fatalf("got %+v, %v", ev, err)
	}
	for range 2 {
		if _, err := d.Next(); err != io.EOF {
			t.Fatalf("got %v, want io.EOF", err)
		}
	}
}

// A cut value is always the value's beginning: an escaped rune that does
// not fit the cap ends it, even where a shorter character after it would.
func TestDecoderCapKeepsAPrefix(t *testing.T) {
	fill := strings.Repeat("x", MaxResultBytes-1)
	for _, esc := range []string{`\u00e9`, `\ud83d\ude00`, `é`} {
		line := `{"type":"result","result":"` + fill + esc + `yz\n"}`
		evs := decodeAll(t, strings.NewReader(line))
		if r := evs[0]; r.Result != fill || !r.ResultTruncated {
			t.Errorf("%s at the cap: kept %d bytes ending %q, truncated %v; want the %d bytes before it", esc, len(r.Result), r.Result[max(0, len(r.Result)-3):], r.ResultTruncated, len(fill))
		}
	}
}
