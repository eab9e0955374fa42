package ui

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/malarun/malarun/internal/event"
)

// Hostile texts, as a model or a damaged file could hand them over.
const (
	setTitle    = "\x1b]0;title\x07"                                       // OSC 0: the window title
	clearScreen = "\x1b[2J"                                                // CSI: erase the display
	csi8bit     = "\x9b2J"                                                 // a raw 0x9B byte: 8-bit CSI
	csiC1       = "\u009b2J"                                               // U+009B, CSI as a UTF-8 C1 control
	hyperlink   = "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\" // OSC 8
	bidi        = "\u202eevil\u202c \u2066iso\u2069"                       // right-to-left override, isolate
	invalid     = "bad \xff\xfe utf8 \xe2\x82"                             // invalid and cut UTF-8
)

func TestInert(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text\n\tindented\n", "plain text\n\tindented\n"},
		{"no change: café 日本 🙂 \u00a0nbsp \ufffd", "no change: café 日本 🙂 \u00a0nbsp \ufffd"},
		{setTitle + "x", "^[]0;title^Gx"},
		{clearScreen, "^[[2J"},
		{csi8bit, "\ufffd2J"},
		{csiC1, "\ufffd2J"},
		{"\u009d0;t\u009c", "\ufffd0;t\ufffd"},
		{hyperlink, `^[]8;;https://evil.example/^[\click^[]8;;^[\`},
		{bidi, "\ufffdevil\ufffd \ufffdiso\ufffd"},
		{invalid, "bad \ufffd\ufffd utf8 \ufffd\ufffd"},
		{"a\u2028b\u2029c", "a\ufffdb\ufffdc"},
		{"\x00\x08\x7f", "^@^H^?"},
		{"crlf\r\nline\r\n", "crlf\nline\n"},
		{"over\rwrite", "over^Mwrite"},
		{"end\r", "end^M"},
		{"\r\r\n", "^M\n"},
		// Invisible: hidden, but for the joiners of what is seen.
		{"zero\u200bwidth\u2060join\ufeffbom soft\u00adhyphen", "zero\ufffdwidth\ufffdjoin\ufffdbom soft\ufffdhyphen"},
		{"tags \U000e0069\U000e0067\U000e006e", "tags \ufffd\ufffd\ufffd"},
		{"\u3164 filler \ufe00 \U000e0100", "\ufffd filler \ufffd \ufffd"},
		{"kept: ⚠\ufe0f 1\ufe0f\u20e3 👨\u200d👩\u200d👧 👁\ufe0f\u200d🗨\ufe0f می\u200cخواهم", "kept: ⚠\ufe0f 1\ufe0f\u20e3 👨\u200d👩\u200d👧 👁\ufe0f\u200d🗨\ufe0f می\u200cخواهم"},
		{"runs: ⚠\ufe0f\ufe0f\ufe0e a\u200d 🙂\u200d\u200d \u200dx \ufe0f", "runs: ⚠\ufe0f\ufffd\ufffd a\ufffd 🙂\u200d\ufffd \ufffdx \ufffd"},
		{"number sign \u0600 kept", "number sign \u0600 kept"},
	}
	for _, tt := range tests {
		if got := Inert(tt.in); got != tt.want {
			t.Errorf("Inert(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := Inert(Inert(tt.in)); got != tt.want {
			t.Errorf("Inert is not idempotent on %q: %q", tt.in, got)
		}
	}
}

func TestClean(t *testing.T) {
	tests := []struct{ in, want string }{
		{"echo \x1b[2J hi\r\n\tthere  ", "echo [2J hi there"},
		{"abcdef", "abc…"},
		{setTitle + "x", "]0;title x"},
		{csi8bit + csiC1, "2J 2J"},
		{hyperlink, "]8;;https://evil.example/ \\click ]8;; \\"},
		{bidi, "evil iso"},
		{"a\u2066b", "a b"},
		{invalid, "bad utf8"},
		{"a\u2028b\u00a0\u3000c", "a b c"},
		{"kept: \ufffd 🙂", "kept: \ufffd 🙂"},
		{"zero\u200bwidth \U000e0041\U000e0042 👍\ufe0f", "zero width 👍\ufe0f"},
	}
	for i, tt := range tests {
		max := 0
		if i == 1 {
			max = 3
		}
		if got := Clean(tt.in, max); got != tt.want {
			t.Errorf("Clean(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Whatever comes in, nothing a terminal acts on comes out: every rune of
// the BMP (a sample above) and every byte that is no valid UTF-8.
func TestNothingActiveComesOut(t *testing.T) {
	var in []string
	var b strings.Builder
	for r := rune(0); r <= utf8.MaxRune; r++ {
		// Every rune of the BMP, where all the ranges are; a sample above.
		if utf8.ValidRune(r) && (r < 0x10000 || r%251 == 0) {
			b.WriteString("a" + string(r))
		}
		if r%4096 == 4095 { // in pieces, so a failure names a short text
			in = append(in, b.String())
			b.Reset()
		}
	}
	for c := 0x80; c <= 0xff; c++ {
		b.WriteString("a" + string([]byte{byte(c)}))
	}
	in = append(in, b.String())
	in = append(in, setTitle, clearScreen, csi8bit, csiC1, hyperlink, bidi, invalid)
	for _, s := range in {
		checkInert(t, s, Inert(s), true)
		checkInert(t, s, Clean(s, 0), false)
	}
}

// checkInert fails if out, made of in, holds anything a terminal acts on;
// multiLine allows '\n' and '\t'.
func checkInert(t *testing.T, in, out string, multiLine bool) {
	t.Helper()
	after := joinNone
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRuneInString(out[i:])
		i += size
		k := classify(r, size, after)
		after = after.next(r, k)
		if k == kindText || k == kindSpace || multiLine && (k == kindNewline || k == kindTab) {
			continue
		}
		t.Fatalf("from %q: %q comes out in %q", in, r, out)
	}
	// The definition itself, independent of classify.
	for _, bad := range []string{"\x1b", "\x07", "\r", "\x7f", "\u009b", "\u202e", "\u2066", "\u2028", "\u200e", "\u200f", "\u061c",
		"\u200b", "\u2060", "\ufeff", "\u00ad", "\u034f", "\u3164", "\U000e0041", "\U000e0100", "\ufe00"} {
		if strings.Contains(out, bad) {
			t.Fatalf("from %q: %q comes out in %q", in, bad, out)
		}
	}
	// A joiner only rides on what it joins: never two in a row, never
	// first, never after ASCII (but a selector after a keycap's digit).
	prev := ' '
	for _, r := range out {
		joiner, selector := r == 0x200c || r == 0x200d, r == 0xfe0e || r == 0xfe0f
		prevJoins := prev == 0x200c || prev == 0x200d || prev == 0xfe0e || prev == 0xfe0f
		if selector && (prevJoins || prev == ' ' || prev == '\n' || prev == '\t') ||
			joiner && (prev < utf8.RuneSelf || prev == 0x200c || prev == 0x200d) {
			t.Fatalf("from %q: %U after %U comes out in %q", in, r, prev, out)
		}
		prev = r
	}
	if !utf8.ValidString(out) {
		t.Fatalf("from %q: invalid UTF-8 comes out in %q", in, out)
	}
}

// hostileEvent is e with every text field (strings and lists of them) set
// to hostile text, whatever the field means.
func hostileEvent(e event.Event) event.Event {
	text := setTitle + clearScreen + csi8bit + csiC1 + hyperlink + bidi + invalid + "\n\r\t"
	v := reflect.ValueOf(&e).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch {
		case f.Type() == reflect.TypeFor[event.Kind]():
		case f.Kind() == reflect.String:
			f.SetString(text)
		case f.Type() == reflect.TypeFor[[]string]():
			f.Set(reflect.ValueOf([]string{text, text}))
		}
	}
	return e
}

// Event lines and the status line are clean whatever an event carries.
func TestEventAndStatusLinesAreClean(t *testing.T) {
	now := time.Now()
	kinds := []event.Kind{event.RunStarted, event.AttemptStarted, event.Progress,
		event.ToolStarted, event.ToolFinished, event.TaskStarted, event.TaskFinished,
		event.HookStarted, event.HookFinished, event.APIRetry, event.HangDetected, event.KillSent, event.TreeGone,
		event.AttemptEnded, event.RetryDecided, event.Checkpoint, event.Restart,
		event.LimitWait, event.RunFinished}
	for _, action := range []string{"resume", "fail"} {
		st := NewStatus("issue-1", 3)
		for _, k := range kinds {
			e := hostileEvent(event.Event{Kind: k, Time: now, Attempt: 1, Until: now.Add(time.Minute)})
			if k == event.RetryDecided {
				e.Action = action
			}
			st.Apply(e)
			if line, ok := eventLine(e, st); ok {
				checkInert(t, string(k), line, false)
			}
			checkInert(t, string(k), st.Line(now), false)
		}
	}
}

// JSON text keeps its values and loses what a terminal acts on.
func TestInertJSON(t *testing.T) {
	text := setTitle + clearScreen + csi8bit + csiC1 + hyperlink + bidi + invalid + "\x7f\u2028é日🙂\u200b\U000e0041⚠\ufe0f"
	b, err := json.Marshal(map[string]any{"a": text, "b": []string{text}})
	if err != nil {
		t.Fatal(err)
	}
	in := string(b) + "\n" // as a log line
	out := string(InertJSON([]byte(in)))
	checkInert(t, in, out, true)
	var before, after any
	if err := json.Unmarshal([]byte(in), &before); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &after); err != nil {
		t.Fatalf("not JSON any more: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(before, after) {
		t.Errorf("the values changed:\n%q\n%q", before, after)
	}
	if plain := []byte(`{"a":"b"}` + "\n"); &InertJSON(plain)[0] != &plain[0] {
		t.Errorf("plain JSON is copied")
	}
}

// The fast path of Inert agrees with classify.
func TestKeptASCII(t *testing.T) {
	for b := range utf8.RuneSelf {
		k := classify(rune(b), 1, joinNone)
		if want := k == kindText || k == kindSpace || k == kindTab || k == kindNewline; keptASCII(byte(b)) != want {
			t.Errorf("keptASCII(%#x) = %v, classify says %v", b, !want, k)
		}
	}
}
