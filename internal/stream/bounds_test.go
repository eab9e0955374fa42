package stream

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
)

// numField is one kept number: a line that carries it (%s is the number),
// what that line decodes to without it, where the value lands, and its range.
type numField struct {
	path   string
	line   string
	base   Event
	set    func(*Event, float64)
	lo, hi float64
	isInt  bool
	mid    string // a value the real CLI prints
}

func numFields() []numField {
	result := Event{Type: "result"}
	usage := Event{Type: "result", HasUsage: true}
	message := Event{Type: "assistant", HasUsage: true}
	retry := Event{Type: "system", Subtype: "api_retry"}
	rl := Event{Type: "rate_limit_event"}
	noResponse := Event{Type: "system", Subtype: "api_retry", NoResponse: true}
	tokens := func(key string, set func(*Event, float64)) []numField {
		return []numField{
			{"usage." + key, `{"type":"result","usage":{"` + key + `":%s}}`, usage, set, 0, maxTokens, true, "150000"},
			{"message.usage." + key, `{"type":"assistant","message":{"usage":{"` + key + `":%s}}}`, message, set, 0, maxTokens, true, "1"},
		}
	}
	fields := []numField{
		{"total_cost_usd", `{"type":"result","total_cost_usd":%s}`, result, func(e *Event, v float64) { e.TotalCostUSD = v }, 0, maxCostUSD, false, "0.750625"},
		{"modelUsage.*.contextWindow", `{"type":"result","modelUsage":{"claude-opus-4-8[1m]":{"contextWindow":%s}}}`, result,
			func(e *Event, v float64) { e.ContextWindow = int64(v) }, 1, maxContextWindow, true, "1000000"},
		{"api_error_status", `{"type":"result","api_error_status":%s}`, result, func(e *Event, v float64) { e.APIErrorStatus = int(v) }, 0, maxHTTPStatus, true, "429"},
		{"error_status", `{"type":"system","subtype":"api_retry","error_status":%s}`, retry, func(e *Event, v float64) { e.ErrorStatus = int(v) }, 0, maxHTTPStatus, true, "529"},
		{"attempt", `{"type":"system","subtype":"api_retry","attempt":%s}`, retry, func(e *Event, v float64) { e.Attempt = int(v) }, 0, maxRetryCount, true, "2"},
		{"max_retries", `{"type":"system","subtype":"api_retry","max_retries":%s}`, retry, func(e *Event, v float64) { e.MaxRetries = int(v) }, 0, maxRetryCount, true, "10"},
		{"retry_delay_ms", `{"type":"system","subtype":"api_retry","retry_delay_ms":%s}`, retry, func(e *Event, v float64) { e.RetryDelayMS = v }, 0, maxRetryDelayMS, false, "534.7949237943786"},
		{"rate_limit_info.resetsAt", `{"type":"rate_limit_event","rate_limit_info":{"resetsAt":%s}}`, rl, func(e *Event, v float64) { e.ResetsAt = int64(v) }, minResetsAt, maxResetsAt, true, "1795363511"},
		{"num_turns", `{"type":"result","num_turns":%s}`, result, func(e *Event, v float64) { e.NumTurns, e.HasNumTurns = int(v), true }, 0, MaxCount, true, "1"},
		{"result_index", `{"type":"result","result_index":%s}`, result, func(e *Event, v float64) { e.ResultIndex, e.HasResultIndex = int(v), true }, 0, MaxCount, true, "1"},
		{"queued_turn_count", `{"type":"result","queued_turn_count":%s}`, result, func(e *Event, v float64) { e.QueuedTurnCount = int(v) }, 0, MaxCount, true, "2"},
		{"no_response.waited_ms", `{"type":"system","subtype":"api_retry","no_response":{"waited_ms":%s}}`, noResponse,
			func(e *Event, v float64) { e.NoResponseWaitedMS = v }, 0, maxRetryDelayMS, false, "180000"},
		{"no_response.retry_wait_ms", `{"type":"system","subtype":"api_retry","no_response":{"retry_wait_ms":%s}}`, noResponse,
			func(e *Event, v float64) { e.NoResponseRetryWaitMS = v }, 0, maxRetryDelayMS, false, "180000"},
	}
	fields = append(fields, tokens("input_tokens", func(e *Event, v float64) { e.Usage.InputTokens = int64(v) })...)
	fields = append(fields, tokens("output_tokens", func(e *Event, v float64) { e.Usage.OutputTokens = int64(v) })...)
	fields = append(fields, tokens("cache_creation_input_tokens", func(e *Event, v float64) { e.Usage.CacheCreationInputTokens = int64(v) })...)
	fields = append(fields, tokens("cache_read_input_tokens", func(e *Event, v float64) { e.Usage.CacheReadInputTokens = int64(v) })...)
	return fields
}

// TestNumberRanges decodes every kept number in range, at both bounds, just
// outside them, and absurd: a value inside is kept, one outside leaves the
// field at zero and is listed with its path and text.
func TestNumberRanges(t *testing.T) {
	seventy := "1" + strings.Repeat("0", 69)
	var cases []decoderCase
	for _, nf := range numFields() {
		format := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
		below, above := math.Nextafter(nf.lo, math.Inf(-1)), math.Nextafter(nf.hi, math.Inf(1))
		if nf.isInt {
			format = func(v float64) string { return strconv.FormatInt(int64(v), 10) }
			below, above = nf.lo-1, nf.hi+1
		}
		mid, _ := strconv.ParseFloat(nf.mid, 64)
		keep := func(name, raw string, v float64) decoderCase {
			want := nf.base
			nf.set(&want, v)
			return decoderCase{name: nf.path + "/" + name, in: fmt.Sprintf(nf.line, raw) + "\n", want: []Event{withLine(want)}}
		}
		drop := func(name, raw, listed string) decoderCase {
			want := withLine(nf.base)
			want.Rejected = []Rejected{{Field: nf.path, Raw: listed}}
			return decoderCase{name: nf.path + "/" + name, in: fmt.Sprintf(nf.line, raw) + "\n", want: []Event{want}}
		}
		cases = append(cases,
			keep("in range", nf.mid, mid),
			keep("lower bound", format(nf.lo), nf.lo),
			keep("upper bound", format(nf.hi), nf.hi),
			keep("upper bound as a float", strconv.FormatFloat(nf.hi, 'e', -1, 64), nf.hi),
			drop("just below", format(below), format(below)),
			drop("just above", format(above), format(above)),
			drop("negative", "-1", "-1"),
			drop("1e308", "1e308", "1e308"),
			drop("-1e308", "-1e308", "-1e308"),
			drop("beyond a float64", "2e308", "2e308"),
			drop("70 digits", seventy, seventy[:maxNumBytes]+"..."),
		)
	}
	runDecoderCases(t, cases)
}

func withLine(ev Event) Event {
	ev.Line = 1
	return ev
}

// TestNumberForms: integers written as floats stay integers, -0 is 0, and a
// rejected value leaves what an earlier duplicate key set, as null would.
func TestNumberForms(t *testing.T) {
	runDecoderCases(t, []decoderCase{
		{
			name: "integers written as floats",
			in: `{"type":"result","usage":{"input_tokens":1e3,"output_tokens":2.0,"cache_read_input_tokens":2.5},` +
				`"modelUsage":{"m":{"contextWindow":1E2}},"api_error_status":4.29e2}` + "\n" +
				`{"type":"rate_limit_event","rate_limit_info":{"resetsAt":1.795363511e9}}` + "\n",
			want: []Event{
				{Line: 1, Type: "result", HasUsage: true, Usage: Tokens{InputTokens: 1000, OutputTokens: 2, CacheReadInputTokens: 2}, ContextWindow: 100, APIErrorStatus: 429},
				{Line: 2, Type: "rate_limit_event", ResetsAt: 1795363511},
			},
		},
		{
			name: "negative zero and a fraction that truncates into range",
			in:   `{"type":"result","total_cost_usd":-0,"usage":{"input_tokens":-0.5},"retry_delay_ms":-0.0}` + "\n",
			want: []Event{{Line: 1, Type: "result", HasUsage: true}},
		},
		{
			name: "a fraction that truncates out of range",
			in:   `{"type":"result","modelUsage":{"m":{"contextWindow":0.5}}}` + "\n",
			want: []Event{{Line: 1, Type: "result", Rejected: []Rejected{{"modelUsage.*.contextWindow", "0.5"}}}},
		},
		{
			name: "too small for a float64 reads as 0",
			in:   `{"type":"result","total_cost_usd":1e-400}` + "\n",
			want: []Event{{Line: 1, Type: "result"}},
		},
		{
			name: "a tiny number too long to keep",
			in:   `{"type":"result","total_cost_usd":0.` + strings.Repeat("0", 70) + `1}` + "\n",
			want: []Event{{Line: 1, Type: "result", Rejected: []Rejected{{FieldTotalCostUSD, "0." + strings.Repeat("0", maxNumBytes-2) + "..."}}}},
		},
		{
			name: "a resetsAt in milliseconds",
			in:   `{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1795363511000}}` + "\n",
			want: []Event{{Line: 1, Type: "rate_limit_event", RateLimitStatus: "rejected", Rejected: []Rejected{{"rate_limit_info.resetsAt", "1795363511000"}}}},
		},
		{
			name: "a rejected duplicate keeps the earlier value",
			in:   `{"type":"result","total_cost_usd":0.5,"total_cost_usd":1e308}` + "\n",
			want: []Event{{Line: 1, Type: "result", TotalCostUSD: 0.5, Rejected: []Rejected{{FieldTotalCostUSD, "1e308"}}}},
		},
		{
			name: "a later good duplicate is kept",
			in:   `{"type":"result","total_cost_usd":1e308,"total_cost_usd":0.5}` + "\n",
			want: []Event{{Line: 1, Type: "result", TotalCostUSD: 0.5, Rejected: []Rejected{{FieldTotalCostUSD, "1e308"}}}},
		},
		{
			name: "one entry per field path, the first value",
			in: `{"type":"result","modelUsage":{"a":{"contextWindow":-1},"b":{"contextWindow":200000},"c":{"contextWindow":1e308}},` +
				`"usage":{"input_tokens":-2,"output_tokens":-3},"message":{"usage":{"input_tokens":-4}},"total_cost_usd":-5}` + "\n",
			want: []Event{{Line: 1, Type: "result", HasUsage: true, ContextWindow: 200000, Rejected: []Rejected{
				{"modelUsage.*.contextWindow", "-1"}, {"usage.input_tokens", "-2"}, {"usage.output_tokens", "-3"},
				{"message.usage.input_tokens", "-4"}, {FieldTotalCostUSD, "-5"},
			}}},
		},
		{
			name: "numbers out of kept places are not checked",
			in: `{"type":"stream_event","event":{"message":{"usage":{"input_tokens":-1}}},"x":1e308,` +
				`"message":{"content":[{"type":"tool_use","id":"t","input":{"n":-1e308}}]}}` + "\n",
			want: []Event{{Line: 1, Type: "stream_event", ToolUses: []ToolUse{{ID: "t", Input: `{"n":-1e308}`}}}},
		},
	})
}

func TestRejects(t *testing.T) {
	evs := decodeAll(t, strings.NewReader(`{"type":"result","total_cost_usd":1e308}`+"\n"+
		`{"type":"assistant","message":{"usage":{"cache_read_input_tokens":-1}}}`+"\n"+
		`{"type":"result","usage":{"output_tokens":-1},"modelUsage":{"m":{"contextWindow":0}}}`+"\n"))
	for i, c := range []struct{ cost, usage bool }{{true, false}, {false, true}, {false, true}} {
		if got := evs[i].Rejects(FieldTotalCostUSD); got != c.cost {
			t.Errorf("line %d: Rejects(total_cost_usd) = %v, want %v", i+1, got, c.cost)
		}
		if got := evs[i].UsageRejected(); got != c.usage {
			t.Errorf("line %d: UsageRejected() = %v, want %v", i+1, got, c.usage)
		}
	}
}
