package stream

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func addTranscriptSeeds(f *testing.F) {
	for _, path := range transcripts(f) {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"", "\n", "{}", "{}\n\n", "{\"a\":[1,{\"b\":null}]} \r\n[1]\nx", `{"type":"\ud83d\ude00\u00"}`,
		`{"message":{"content":[{"type":"tool_use","input":{"a":[1e5,-0.5,true]}}]}}`,
		`{"type":"result","modelUsage":{"m":{"contextWindow":1}},"errors":["x"],"usage":{"input_tokens":3}}`,
		`{"type":"system","subtype":"background_tasks_changed","tasks":[{"task_id":"b","task_type":"local_bash","description":"d","status":"running"},[],"x"]}`,
		`{"type":"system","subtype":"task_updated","task_id":"b","patch":{"status":"completed"},"status":"x"}`,
		`{"type":"result","origin":{"kind":"task-notification"},"rate_limit_info":{"errorCode":"credits_required"}}`,
		`{"message":{"content":[{"type":"tool_use","input":{"run_in_backgroun\u0064":true,"run_in_background":{"run_in_background":true}}}]}}`,
		// Absurd numbers: each must be dropped and listed, never kept.
		`{"type":"result","total_cost_usd":1e308,"usage":{"input_tokens":-1,"output_tokens":1e13,"cache_read_input_tokens":2e308},"api_error_status":-429}`,
		`{"type":"result","modelUsage":{"a":{"contextWindow":0},"b":{"contextWindow":-1e308},"c":{"contextWindow":1000000}},"total_cost_usd":-0.01}`,
		`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1795363511000}}`,
		`{"type":"system","subtype":"api_retry","attempt":1e7,"max_retries":-1,"retry_delay_ms":1e19,"error_status":4290}`,
		`{"type":"assistant","message":{"usage":{"input_tokens":1000000000000000000000000000000000000000000000000000000000000000000000}}}`,
		`{"type":"result","total_cost_usd":0.5,"total_cost_usd":1e308,"usage":{"input_tokens":1e3,"output_tokens":2.0}}`,
		`{"type":"result","num_turns":-1,"result_index":1e10,"queued_turn_count":1.5,"startup_failure_reason":"config_file_invalid","invalid_config_file":{"path":"/p","is_global":true}}`,
		`{"type":"system","subtype":"api_retry","no_response":{"waited_ms":-5,"retry_wait_ms":1e300},"no_response":{"waited_ms":1}}`,
	} {
		f.Add([]byte(s))
	}
}

// FuzzDecode checks the decoder against its contract on any input: no panic,
// no error from an in-memory reader, one event per non-empty line with its
// number, length and offset, a kind that agrees with encoding/json on
// whether the line is one JSON object, and every kept number finite and in
// its range. A second decoder, with KeepToolResults, must return the same
// events but for their ToolResultDetails, and those as encoding/json reads
// the line.
func FuzzDecode(f *testing.F) {
	addTranscriptSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		d := NewDecoder(bytes.NewReader(data))
		keep := NewDecoder(bytes.NewReader(data))
		keep.KeepToolResults()
		lines := bytes.Split(data, []byte("\n"))
		var offset int64
		for i, line := range lines {
			at := offset
			offset += int64(len(line)) + 1
			if len(line) == 0 {
				continue
			}
			ev, err := d.Next()
			if err != nil {
				t.Fatalf("line %d: Next: %v", i+1, err)
			}
			if ev.Line != int64(i+1) || ev.Bytes != int64(len(line)) || ev.Offset != at {
				t.Fatalf("event for line %d (%d bytes at %d) says line %d, %d bytes at %d", i+1, len(line), at, ev.Line, ev.Bytes, ev.Offset)
			}
			last := i == len(lines)-1 // no newline after it
			want := KindMalformed
			switch {
			case isObjectLine(line):
				want = KindJSON
			case last:
				want = KindCutShort
			}
			if ev.Kind != want {
				t.Fatalf("line %d %q: kind %v, want %v", i+1, line, ev.Kind, want)
			}
			checkNumbers(t, line, ev)
			kev, err := keep.Next()
			if err != nil {
				t.Fatalf("line %d: Next with KeepToolResults: %v", i+1, err)
			}
			checkSameEvents(t, []Event{kev}, []Event{ev})
			if ev.Kind == KindJSON {
				checkToolResults(t, line, kev)
			}
		}
		if ev, err := d.Next(); err != io.EOF {
			t.Fatalf("after the last line: %+v, %v; want io.EOF", ev, err)
		}
		if ev, err := keep.Next(); err != io.EOF {
			t.Fatalf("after the last line, with KeepToolResults: %+v, %v; want io.EOF", ev, err)
		}
	})
}

// checkToolResults fails t unless ev's ToolResultDetails are what
// encoding/json reads in line. The decoder keeps the last string of a
// block's type and tool_use_id where encoding/json keeps the last value of
// any kind, and it reads every repeated message and content where
// encoding/json reads the last: lines where the two find other blocks (the
// ids differ) are held to the details' own rules only.
func checkToolResults(t *testing.T, line []byte, ev Event) {
	t.Helper()
	want, ok := jsonToolResults(line)
	if !ok {
		t.Fatalf("line %q: a JSON event, but encoding/json cannot read it", line)
	}
	ids := make([]string, len(want))
	for i, tr := range want {
		ids[i] = tr.ToolUseID
	}
	if len(ids) == len(ev.ToolResults) && (len(ids) == 0 || reflect.DeepEqual(ids, ev.ToolResults)) {
		if !reflect.DeepEqual(ev.ToolResultDetails, want) {
			t.Fatalf("line %q:\n got %s\nwant %s", line, summary(ev.ToolResultDetails), summary(want))
		}
		return
	}
	for _, tr := range ev.ToolResultDetails {
		if !utf8.ValidString(tr.Head) || !utf8.ValidString(tr.Tail) || len(tr.Head) > maxToolResultHeadBytes ||
			len(tr.Tail) > maxToolResultTailBytes || int64(len(tr.Head)+len(tr.Tail)) > tr.Bytes ||
			tr.Tail != "" && int64(len(tr.Head)) == tr.Bytes || tr.Images < 0 {
			t.Fatalf("line %q: a detail breaks its rules: %+v", line, tr)
		}
	}
}

// FuzzToolResult checks the details of tool results against encoding/json:
// value is any content, and body, repeated to about rep bytes, is the
// string content of a second block, long enough for its head and tail to
// be cut anywhere.
func FuzzToolResult(f *testing.F) {
	for _, s := range []struct {
		value, body string
		rep         uint16
	}{
		{`"plain"`, `x`, 0},
		{`[{"type":"text","text":"a\nb"},{"type":"image","source":{"data":"AAAA"}},{"text":"c","type":"text"}]`, `ab\n`, 4096},
		{`[{"type":"tool_reference","tool_name":"Monitor"}]`, `\u00e9`, 8190},
		{`null`, `\ud83d\ude00`, 8200},
		{`[[{"type":"text","text":"x"}],{"type":"text"},"s",1]`, "\xff\xc3é€", 9000},
		{`{"type":"text","text":"x"}`, `a\"b\\`, 4097},
	} {
		f.Add(s.value, s.body, s.rep)
	}
	f.Fuzz(func(t *testing.T, value, body string, rep uint16) {
		n := 1
		if len(body) > 0 {
			n += int(rep) % (3 * maxToolResultHeadBytes) / len(body)
		}
		line := []byte(`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"a","content":` + value +
			`,"is_error":true},{"content":"` + strings.Repeat(body, n) + `","type":"tool_result","tool_use_id":"b"}]},` +
			`"tool_use_result":{"content":` + value + `}}`)
		// value must be one value on its own: `1,"type":"x"` would make a valid line too.
		if !json.Valid([]byte(value)) || !json.Valid(line) || bytes.IndexByte(line, '\n') >= 0 || depth(line) > maxDepth {
			return
		}
		evs := decodeKeep(t, bytes.NewReader(line))
		if len(evs) != 1 || evs[0].Kind != KindJSON {
			t.Fatalf("valid line %q decoded as %s", line, render(evs))
		}
		checkToolResults(t, line, evs[0])
		if len(evs[0].ToolResultDetails) != 2 {
			t.Fatalf("line %q: got %+v, want two tool results", line, evs[0].ToolResultDetails)
		}
	})
}

// isObjectLine is the decoder's notion of a good line, by encoding/json.
func isObjectLine(line []byte) bool {
	trimmed := bytes.TrimLeft(line, " \t\r")
	return len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(line) && depth(line) <= maxDepth
}

// depth is the nesting depth of valid JSON.
func depth(b []byte) int {
	d, most, inStr, esc := 0, 0, false, false
	for _, c := range b {
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[':
			d++
			most = max(most, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return most
}

// FuzzString checks kept-string decoding against encoding/json.
func FuzzString(f *testing.F) {
	for _, s := range []string{`plain`, `a\"b\\c\/\b\f\n\r\t`, `\u00e9\ud83d\ude00`, `\ud800x\udc00\ud83d\ud83d\ude00`, "\xff\xc3", `\u0000`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		line := []byte(`{"type":"result","result":"` + s + `"}`)
		evs := decodeAll(t, bytes.NewReader(line))
		var want struct{ Result string }
		if !json.Valid(line) || bytes.IndexByte(line, '\n') >= 0 {
			return
		}
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 || evs[0].Kind != KindJSON {
			t.Fatalf("valid line %q decoded as %+v", line, evs)
		}
		if evs[0].Result != want.Result {
			t.Fatalf("result of %q: got %q, encoding/json says %q", line, evs[0].Result, want.Result)
		}
	})
}

// FuzzInput checks that a tool input is kept as its compact JSON, and that
// Background agrees with encoding/json on input.run_in_background == true.
func FuzzInput(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"command": "ls -l", "n": [1, 2.5e3, {"x": null}]}`, `"str"`, `12`, `[ true , false ]`, `{"a":"\u00e9\n"}`,
		`{"command":"make","run_in_background":true}`, `{"run_in_backgroun\u0064" : true, "run_in_background": false}`,
		`{"x":{"run_in_background":true},"run_in_background":"true"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		line := []byte(`{"message":{"content":[{"type":"tool_use","id":"t","input":` + s + `}]}}`)
		// s must be one value on its own: `1, "x":2` would make a valid line too.
		if !json.Valid([]byte(s)) || !json.Valid(line) || bytes.IndexByte(line, '\n') >= 0 || depth(line) > maxDepth {
			return
		}
		var want bytes.Buffer
		if err := json.Compact(&want, []byte(s)); err != nil {
			t.Fatal(err)
		}
		evs := decodeAll(t, bytes.NewReader(line))
		if len(evs) != 1 || len(evs[0].ToolUses) != 1 {
			t.Fatalf("valid line %q decoded as %+v", line, evs)
		}
		tu := evs[0].ToolUses[0]
		var v any
		dec := json.NewDecoder(bytes.NewReader([]byte(s)))
		dec.UseNumber() // a valid number may not fit a float64
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		m, _ := v.(map[string]any) // a repeated key: the last one, as the decoder does
		if wantBg := m["run_in_background"] == true; tu.Background != wantBg {
			t.Fatalf("input %q: Background %v, encoding/json says %v", s, tu.Background, wantBg)
		}
		// Kept text is valid UTF-8: each invalid byte reads as U+FFFD, which
		// is what converting to runes does too.
		compact := string([]rune(want.String()))
		if len(compact) <= MaxInputBytes {
			if tu.Input != compact || tu.InputTruncated {
				t.Fatalf("input %q: got %q (truncated %v), want %q", s, tu.Input, tu.InputTruncated, compact)
			}
		} else if !tu.InputTruncated || len(tu.Input) > MaxInputBytes || !utf8.ValidString(tu.Input) {
			t.Fatalf("input of %d bytes: got %d bytes, truncated %v", len(compact), len(tu.Input), tu.InputTruncated)
		}
	})
}

// checkNumbers fails t unless every kept number of ev is finite and within
// its range (bounds.go), and each rejection names a known field path, once,
// with number text no longer than the cap.
func checkNumbers(t *testing.T, line []byte, ev Event) {
	t.Helper()
	in := func(name string, v, lo, hi float64) {
		if !(v >= lo && v <= hi) { // NaN fails too
			t.Fatalf("line %q: %s = %v, outside [%v, %v]", line, name, v, lo, hi)
		}
	}
	in("total_cost_usd", ev.TotalCostUSD, 0, maxCostUSD)
	in("input_tokens", float64(ev.Usage.InputTokens), 0, maxTokens)
	in("output_tokens", float64(ev.Usage.OutputTokens), 0, maxTokens)
	in("cache_creation_input_tokens", float64(ev.Usage.CacheCreationInputTokens), 0, maxTokens)
	in("cache_read_input_tokens", float64(ev.Usage.CacheReadInputTokens), 0, maxTokens)
	in("occupancy", float64(ev.Usage.Occupancy()), 0, 4*maxTokens)
	if ev.ContextWindow != 0 {
		in("contextWindow", float64(ev.ContextWindow), 1, maxContextWindow)
	}
	in("api_error_status", float64(ev.APIErrorStatus), 0, maxHTTPStatus)
	in("error_status", float64(ev.ErrorStatus), 0, maxHTTPStatus)
	in("attempt", float64(ev.Attempt), 0, maxRetryCount)
	in("max_retries", float64(ev.MaxRetries), 0, maxRetryCount)
	in("retry_delay_ms", ev.RetryDelayMS, 0, maxRetryDelayMS)
	if ev.ResetsAt != 0 {
		in("resetsAt", float64(ev.ResetsAt), minResetsAt, maxResetsAt)
	}
	in("num_turns", float64(ev.NumTurns), 0, MaxCount)
	in("result_index", float64(ev.ResultIndex), 0, MaxCount)
	in("queued_turn_count", float64(ev.QueuedTurnCount), 0, MaxCount)
	in("no_response.waited_ms", ev.NoResponseWaitedMS, 0, maxRetryDelayMS)
	in("no_response.retry_wait_ms", ev.NoResponseRetryWaitMS, 0, maxRetryDelayMS)
	if len(ev.Rejected) == 0 {
		return
	}
	known := map[string]bool{}
	for _, nf := range numFields() {
		known[nf.path] = true
	}
	seen := map[string]bool{}
	for _, r := range ev.Rejected {
		if !known[r.Field] || seen[r.Field] {
			t.Fatalf("line %q: rejected field %q unknown or listed twice in %+v", line, r.Field, ev.Rejected)
		}
		seen[r.Field] = true
		raw, cut := strings.CutSuffix(r.Raw, "...")
		if raw == "" || len(raw) > maxNumBytes || cut && len(raw) != maxNumBytes || strings.Trim(raw, "0123456789+-.eE") != "" {
			t.Fatalf("line %q: rejected %s has raw text %q", line, r.Field, r.Raw)
		}
	}
}
