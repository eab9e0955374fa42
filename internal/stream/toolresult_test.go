package stream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

// userLine is a user line holding blocks, with the top-level
// tool_use_result the CLI adds, which repeats the content and must not be
// counted.
func userLine(blocks ...string) string {
	return `{"type":"user","message":{"role":"user","content":[` + strings.Join(blocks, ",") +
		`]},"session_id":"s","tool_use_result":{"stdout":"not counted","content":"not counted either"}}` + "\n"
}

// headTail is what toolResult keeps of text, by its definition.
func headTail(text string) (head, tail string) {
	h := min(len(text), maxToolResultHeadBytes)
	for h < len(text) && h > 0 && !utf8.RuneStart(text[h]) {
		h--
	}
	if h == len(text) {
		return text, ""
	}
	s := max(h, len(text)-maxToolResultTailBytes)
	for s < len(text) && !utf8.RuneStart(text[s]) {
		s++
	}
	return text[:h], text[s:]
}

func textResult(id string, isError bool, text string, images int) ToolResult {
	head, tail := headTail(text)
	return ToolResult{ToolUseID: id, IsError: isError, Bytes: int64(len(text)), Head: head, Tail: tail, Images: images}
}

// jsonToolResults is encoding/json's reading of the tool_result blocks of
// line (a repeated key: the last one), as toolResult says to read them; ok
// is false if line is not a JSON object.
func jsonToolResults(line []byte) (trs []ToolResult, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber() // a valid number may not fit a float64
	var top map[string]any
	if dec.Decode(&top) != nil {
		return nil, false
	}
	msg, _ := top["message"].(map[string]any)
	blocks, _ := msg["content"].([]any)
	for _, b := range blocks {
		block, _ := b.(map[string]any)
		if block["type"] != "tool_result" {
			continue
		}
		if len(trs) == MaxListItems {
			break
		}
		var text string
		images := 0
		switch c := block["content"].(type) {
		case string:
			text = c
		case []any:
			var parts []string
			for _, p := range c {
				part, _ := p.(map[string]any)
				switch part["type"] {
				case "text":
					s, _ := part["text"].(string)
					parts = append(parts, s)
				case "image":
					images++
				}
			}
			text = strings.Join(parts, "\n")
		}
		id, _ := block["tool_use_id"].(string)
		trs = append(trs, textResult(id, block["is_error"] == true, text, images))
	}
	return trs, true
}

// decodeKeep decodes r with KeepToolResults.
func decodeKeep(t testing.TB, r io.Reader) []Event {
	t.Helper()
	d := NewDecoder(r)
	d.KeepToolResults()
	var evs []Event
	for {
		ev, err := d.Next()
		if err == io.EOF {
			return evs
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		evs = append(evs, ev)
	}
}

// checkSameEvents fails t unless keep and off, the events of one stream with
// and without KeepToolResults, differ in ToolResultDetails only, and each
// event's details go with its ToolResults.
func checkSameEvents(t *testing.T, keep, off []Event) {
	t.Helper()
	if len(keep) != len(off) {
		t.Fatalf("%d events with KeepToolResults, %d without", len(keep), len(off))
	}
	for i := range keep {
		if off[i].ToolResultDetails != nil {
			t.Fatalf("line %d: details without KeepToolResults: %+v", off[i].Line, off[i].ToolResultDetails)
		}
		ev := keep[i]
		if len(ev.ToolResultDetails) != len(ev.ToolResults) {
			t.Fatalf("line %d: %d details for %d tool results", ev.Line, len(ev.ToolResultDetails), len(ev.ToolResults))
		}
		for k, tr := range ev.ToolResultDetails {
			if tr.ToolUseID != ev.ToolResults[k] {
				t.Fatalf("line %d: detail %d is for %q, ToolResults says %q", ev.Line, k, tr.ToolUseID, ev.ToolResults[k])
			}
		}
		ev.ToolResultDetails = nil
		if !reflect.DeepEqual(ev, off[i]) {
			t.Fatalf("line %d differs with KeepToolResults:\n got %s\nwant %s", ev.Line, renderEvent(ev), renderEvent(off[i]))
		}
	}
}

func TestToolResultCases(t *testing.T) {
	long := strings.Repeat("x", maxToolResultHeadBytes+maxToolResultTailBytes+100)
	// é is two bytes: the head's cut falls in the middle of one, and so
	// does the tail's start.
	cutRunes := strings.Repeat("a", maxToolResultHeadBytes-1) + "é" + strings.Repeat("b", 3000) + "€" + strings.Repeat("c", maxToolResultTailBytes-2)
	// The same for a four-byte rune written as an escaped surrogate pair.
	emoji := strings.Repeat("a", maxToolResultHeadBytes-2) + `\ud83d\ude00` + strings.Repeat("b", 5000) + `\ud83d\ude00` + strings.Repeat("c", maxToolResultTailBytes-1)
	emojiText := strings.Repeat("a", maxToolResultHeadBytes-2) + "😀" + strings.Repeat("b", 5000) + "😀" + strings.Repeat("c", maxToolResultTailBytes-1)
	image := `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}`
	blocks := make([]string, MaxListItems+3)
	var many []ToolResult
	for i := range blocks {
		blocks[i] = `{"type":"tool_result","tool_use_id":"t","content":"r"}`
		if i < MaxListItems {
			many = append(many, textResult("t", false, "r", 0))
		}
	}
	tests := []struct {
		name   string
		blocks []string
		want   []ToolResult
	}{
		{"string content", []string{`{"tool_use_id":"toolu_1","type":"tool_result","content":"hello-from-tool","is_error":false}`},
			[]ToolResult{{ToolUseID: "toolu_1", Bytes: 15, Head: "hello-from-tool"}}},
		{"text and image parts", []string{`{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"one"},` + image + `,{"type":"text","text":"two"}]}`},
			[]ToolResult{{ToolUseID: "t", Bytes: 7, Head: "one\ntwo", Images: 1}}},
		{"is_error before content", []string{`{"is_error":true,"type":"tool_result","tool_use_id":"t","content":"Exit code 1"}`},
			[]ToolResult{{ToolUseID: "t", IsError: true, Bytes: 11, Head: "Exit code 1"}}},
		{"is_error after content", []string{`{"type":"tool_result","content":"Exit code 137","is_error":true,"tool_use_id":"toolu_3"}`},
			[]ToolResult{{ToolUseID: "toolu_3", IsError: true, Bytes: 13, Head: "Exit code 137"}}},
		{"part type after text", []string{`{"content":[{"text":"a","type":"text"},{"source":{"data":"AAAA"},"type":"image"},{"text":"not text","type":"tool_reference"}],"type":"tool_result","tool_use_id":"t"}`},
			[]ToolResult{{ToolUseID: "t", Bytes: 1, Head: "a", Images: 1}}},
		{"escapes decoded", []string{`{"type":"tool_result","tool_use_id":"t","content":"a\"b\\c\/\n\t\u00e9\ud83d\ude00|\ud800x|` + "\xff" + `"}`},
			[]ToolResult{textResult("t", false, "a\"b\\c/\n\té😀|\uFFFDx|\uFFFD", 0)}},
		{"long text: head and tail", []string{`{"type":"tool_result","tool_use_id":"t","content":"` + long + `"}`},
			[]ToolResult{{ToolUseID: "t", Bytes: int64(len(long)), Head: long[:maxToolResultHeadBytes], Tail: long[:maxToolResultTailBytes]}}},
		{"a little over the head", []string{`{"type":"tool_result","tool_use_id":"t","content":"` + long[:maxToolResultHeadBytes+10] + `"}`},
			[]ToolResult{{ToolUseID: "t", Bytes: maxToolResultHeadBytes + 10, Head: long[:maxToolResultHeadBytes], Tail: long[:10]}}},
		{"multibyte runes at both cuts", []string{`{"type":"tool_result","tool_use_id":"t","content":"` + cutRunes + `"}`},
			[]ToolResult{{ToolUseID: "t", Bytes: int64(len(cutRunes)), Head: strings.Repeat("a", maxToolResultHeadBytes-1), Tail: strings.Repeat("c", maxToolResultTailBytes-2)}}},
		{"surrogate pairs at both cuts", []string{`{"type":"tool_result","tool_use_id":"t","content":"` + emoji + `"}`},
			[]ToolResult{{ToolUseID: "t", Bytes: int64(len(emojiText)), Head: strings.Repeat("a", maxToolResultHeadBytes-2), Tail: strings.Repeat("c", maxToolResultTailBytes-1)}}},
		{"parts joined across the cuts", []string{`{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"` + long[:maxToolResultHeadBytes] + `"},{"type":"text","text":"` + cutRunes + `"},{"type":"text","text":""},{"type":"text","text":"end"}]}`},
			[]ToolResult{textResult("t", false, long[:maxToolResultHeadBytes]+"\n"+cutRunes+"\n\nend", 0)}},
		{"a first part whose head ends before a rune", []string{`{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"` + cutRunes + `"},{"type":"text","text":"end"}]}`},
			[]ToolResult{{ToolUseID: "t", Bytes: int64(len(cutRunes)) + 4, Head: strings.Repeat("a", maxToolResultHeadBytes-1), Tail: strings.Repeat("c", maxToolResultTailBytes-4) + "\nend"}}},
		{"many short parts", []string{`{"type":"tool_result","tool_use_id":"t","content":[` + strings.Repeat(`{"type":"text","text":"ab\u00e9"},`, 3000) + `{"type":"text","text":"z"}]}`},
			[]ToolResult{textResult("t", false, strings.Repeat("abé\n", 3000)+"z", 0)}},
		{"content absent, null, a number, an object, true", []string{
			`{"type":"tool_result","tool_use_id":"a"}`, `{"type":"tool_result","tool_use_id":"b","content":null,"is_error":null}`,
			`{"type":"tool_result","tool_use_id":"c","content":12.5e3}`, `{"type":"tool_result","tool_use_id":"d","content":{"text":"x"}}`,
			`{"type":"tool_result","tool_use_id":"e","content":true,"is_error":"true"}`},
			[]ToolResult{{ToolUseID: "a"}, {ToolUseID: "b"}, {ToolUseID: "c"}, {ToolUseID: "d"}, {ToolUseID: "e"}}},
		{"nested arrays and odd parts", []string{`{"type":"tool_result","tool_use_id":"t","content":[[{"type":"text","text":"deep"}],"plain",7,null,{"type":"text"},{"type":"text","text":["x"]},{"type":["text"],"text":"y"},{"type":"text","text":"z","content":"w"}]}`},
			[]ToolResult{textResult("t", false, "\n\nz", 0)}},
		{"repeated keys: the last one", []string{`{"type":"tool_result","tool_use_id":"t","is_error":true,"content":"old","is_error":false,"content":[{"type":"text","text":"a","text":"b"},{"type":"image","type":"text","text":"c"},{"type":"text","type":"image"}]}`},
			[]ToolResult{{ToolUseID: "t", Bytes: 3, Head: "b\nc", Images: 1}}},
		{"content then null", []string{`{"type":"tool_result","tool_use_id":"t","content":"old","is_error":true,"content":null,"is_error":null}`},
			[]ToolResult{{ToolUseID: "t"}}},
		{"other blocks around", []string{`{"type":"text","text":"hi","content":"not a tool result"}`, `{"type":"tool_result","tool_use_id":"t","content":"r"}`, `{"type":"tool_use","id":"u","input":{"content":"x"}}`},
			[]ToolResult{{ToolUseID: "t", Bytes: 1, Head: "r"}}},
		{"more than MaxListItems blocks", blocks, many},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := userLine(tt.blocks...)
			ref, ok := jsonToolResults([]byte(in))
			if !ok {
				t.Fatalf("the test line is not JSON: %q", in)
			}
			if !reflect.DeepEqual(ref, tt.want) {
				t.Fatalf("the case disagrees with encoding/json:\n case %s\n json %s", summary(tt.want), summary(ref))
			}
			off := decodeAll(t, strings.NewReader(in))
			for _, r := range []io.Reader{strings.NewReader(in), iotest.OneByteReader(strings.NewReader(in))} {
				evs := decodeKeep(t, r)
				checkSameEvents(t, evs, off)
				if len(evs) != 1 || evs[0].Kind != KindJSON {
					t.Fatalf("got %s", render(evs))
				}
				if got := evs[0].ToolResultDetails; !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("got  %s\nwant %s", summary(got), summary(tt.want))
				}
			}
		})
	}
}

// TestToolResultStateDoesNotLeak: what a line cut short left half read is
// not carried into the next line.
func TestToolResultStateDoesNotLeak(t *testing.T) {
	in := `{"type":"user","message":{"content":[{"type":"tool_result","is_error":true,"content":[{"type":"image"},{"type":"text","text":"half` + "\n" +
		userLine(`{"type":"tool_result","tool_use_id":"t","content":[{"text":"x"}]}`, `{"type":"tool_result","tool_use_id":"u"}`)
	evs := decodeKeep(t, strings.NewReader(in))
	if len(evs) != 2 || evs[0].Kind != KindMalformed {
		t.Fatalf("got %s", render(evs))
	}
	want := []ToolResult{{ToolUseID: "t"}, {ToolUseID: "u"}}
	if got := evs[1].ToolResultDetails; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

// TestToolResultHugeContent reads 10 MB contents, plain, escape-dense and
// multibyte, in a fixed amount of memory, and keeps their head and tail as
// encoding/json reads them.
func TestToolResultHugeContent(t *testing.T) {
	size := 10 << 20
	if testing.Short() {
		size = 3 << 20 // make check: still three times the budget; under -race 10 MB takes seconds
	}
	const budget = 1 << 20
	for _, tc := range []struct{ name, period string }{
		{"base64", base64Period},
		{"escaped", escapedPeriod},
		{"multibyte", `é€😀\ud83d\ude00\u00e9x` + "\xff"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := bigLine(tc.period, size)
			// The content is whole periods: encoding/json's reading of one,
			// repeated, is its reading of the whole, without the cost of
			// decoding 10 MB that way (slow under -race).
			var one string
			if err := json.Unmarshal([]byte(`"`+tc.period+`"`), &one); err != nil {
				t.Fatal(err)
			}
			periods := (size + len(tc.period) - 1) / len(tc.period)
			want := []ToolResult{textResult("toolu_big", false, strings.Repeat(one, periods), 0)}
			d := NewDecoder(bytes.NewReader(data))
			d.KeepToolResults()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			ev, err := d.Next()
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("a %d-byte content in a %d-byte line: %d bytes allocated", want[0].Bytes, ev.Bytes, alloc)
			if alloc > budget {
				t.Errorf("allocated %d bytes, want at most %d", alloc, budget)
			}
			if !reflect.DeepEqual(ev.ToolResultDetails, want) {
				t.Errorf("got  %s\nwant %s", summary(ev.ToolResultDetails), summary(want))
			}
		})
	}
}

// summary shows tool results with long texts shortened, where they differ
// most often: around the cuts.
func summary(trs []ToolResult) string {
	var b strings.Builder
	short := func(s string) string {
		if len(s) <= 80 {
			return fmt.Sprintf("%q", s)
		}
		return fmt.Sprintf("%q...%q (%d bytes)", s[:30], s[len(s)-30:], len(s))
	}
	for _, tr := range trs {
		fmt.Fprintf(&b, "\n  {id %q, error %v, %d bytes, %d images, head %s, tail %s}",
			tr.ToolUseID, tr.IsError, tr.Bytes, tr.Images, short(tr.Head), short(tr.Tail))
	}
	return b.String()
}

// TestToolResultTranscripts: the recorded streams read the same with and
// without KeepToolResults but for the details, which agree with
// encoding/json.
func TestToolResultTranscripts(t *testing.T) {
	for _, path := range transcripts(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		off := decodeAll(t, bytes.NewReader(data))
		keep := decodeKeep(t, bytes.NewReader(data))
		checkSameEvents(t, keep, off)
		lines := bytes.Split(data, []byte("\n"))
		n := 0
		for _, ev := range keep {
			if ev.Kind != KindJSON {
				continue
			}
			want, _ := jsonToolResults(lines[ev.Line-1])
			if !reflect.DeepEqual(ev.ToolResultDetails, want) {
				t.Errorf("%s line %d: got %s\nwant %s", path, ev.Line, summary(ev.ToolResultDetails), summary(want))
			}
			n += len(want)
		}
		t.Logf("%s: %d tool results", path, n)
	}
}

// TestResultTextPieces feeds resultText texts of many lengths in pieces of
// many sizes, whole or as parts to join, and checks what it keeps against
// the definition: where the pieces end must not matter.
func TestResultTextPieces(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	runes := []string{"a", "é", "€", "😀", "\n"}
	var tr toolResults
	tr.text.init()
	tr.part.init()
	for range 300 {
		var want []string
		tr.text.reset()
		for range 1 + rng.IntN(4) {
			var part strings.Builder
			tr.part.reset()
			size := rng.IntN(3 * (maxToolResultHeadBytes + maxToolResultTailBytes))
			for part.Len() < size {
				// A piece of whole runes: what capBuf.spill writes.
				var piece strings.Builder
				for range 1 + rng.IntN([]int{3, 100, 5000}[rng.IntN(3)]) {
					piece.WriteString(runes[rng.IntN(len(runes))])
				}
				part.WriteString(piece.String())
				tr.part.Write([]byte(piece.String()))
				// After every piece, not only at the end: a piece that
				// slides the last bytes may be followed by others that hide
				// a mistake.
				if got, want := tr.part.tailText(), textResult("", false, part.String(), 0).Tail; got != want {
					t.Fatalf("after %d bytes in pieces: tail %s, want %s", part.Len(), summary([]ToolResult{{Tail: got}}), summary([]ToolResult{{Tail: want}}))
				}
			}
			want = append(want, part.String())
			tr.text.join(&tr.part)
		}
		text := strings.Join(want, "\n")
		if got, want := tr.detail("t"), textResult("t", false, text, 0); !reflect.DeepEqual(got, want) {
			t.Fatalf("parts of %v bytes:\n got %s\nwant %s", len(text), summary([]ToolResult{got}), summary([]ToolResult{want}))
		}
	}
}
