package ui

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// marshalledReport is how the --json report was written before it was
// streamed (cmd/malarun writeJSON up to this change): WriteReport must
// write exactly this, whatever the result.
func marshalledReport(t testing.TB, r Report, defuse bool) string {
	t.Helper()
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b) + "\n"
	if defuse {
		s = strings.ReplaceAll(s, "##[", `##\u005b`)
	}
	return s
}

// chunkedReader hands out its text in pieces of the sizes it cycles through
// (WriteTo, as a transcript copy does), cutting runes and escapes anywhere.
type chunkedReader struct {
	text  string
	sizes []int
}

func (c chunkedReader) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for i, s := 0, c.text; len(s) > 0; i++ {
		k := min(len(s), max(1, c.sizes[i%len(c.sizes)]))
		m, err := w.Write([]byte(s[:k]))
		n += int64(m)
		if err != nil {
			return n, err
		}
		s = s[k:]
	}
	return n, nil
}

// hostile has everything encoding/json escapes: quotes, backslashes, every
// control byte, HTML characters, U+2028/U+2029, invalid and cut UTF-8, a
// lone surrogate's encoding, workflow commands, and runes of every length.
func hostile() string {
	var b strings.Builder
	b.WriteString("\"quoted\" \\back\\ <script>&amp;</script> \u2028\u2029 ##[error]x ###[ #\n::set-output name=x::y\n")
	for c := range 0x20 {
		b.WriteByte(byte(c))
	}
	b.WriteString("\x7f é 日本 😀 \xff \xc3 \xe2\x82 \xed\xa0\x80 \xf4\x90\x80\x80 end")
	return b.String()
}

func TestWriteReportIsMarshalIndent(t *testing.T) {
	texts := []string{"", "done", "Fixed the flaky test; all tests pass.", hostile(), strings.Repeat(hostile(), 500)}
	for _, text := range texts {
		for _, defuse := range []bool{false, true} {
			r := sampleReport()
			r.Result = text
			want := marshalledReport(t, r, defuse)
			// The small result of a run: from the report itself.
			var got bytes.Buffer
			if err := WriteReport(&got, r, nil, defuse); err != nil {
				t.Fatal(err)
			}
			if got.String() != want {
				t.Errorf("result %.40q, defuse %v:\n got %s\nwant %s", text, defuse, got.String(), want)
			}
			// A big one streamed, in pieces of every size.
			for _, sizes := range [][]int{{1}, {2, 3}, {5, 1, 7}, {4096}} {
				got.Reset()
				r.Result = "the capped prefix"
				if err := WriteReport(&got, r, chunkedReader{text, sizes}, defuse); err != nil {
					t.Fatal(err)
				}
				if got.String() != want {
					t.Errorf("result %.40q streamed in %v, defuse %v: differs at %d", text, sizes, defuse, firstDiff(got.String(), want))
				}
			}
		}
	}
}

// The fields a report can have all show, and result_truncated only when
// set: a report without it is what the command line always wrote.
func TestWriteReportTruncatedField(t *testing.T) {
	r := sampleReport()
	var b bytes.Buffer
	WriteReport(&b, r, nil, false)
	if strings.Contains(b.String(), "result_truncated") {
		t.Errorf("result_truncated shown when false:\n%s", b.String())
	}
	r.ResultTruncated, r.RetryAt, r.LimitType = true, time.Unix(1, 0).UTC(), "five_hour"
	b.Reset()
	if err := WriteReport(&b, r, chunkedReader{"x<y", []int{1}}, true); err != nil {
		t.Fatal(err)
	}
	r.Result = "x<y"
	if want := marshalledReport(t, r, true); b.String() != want || !strings.Contains(want, `"result": "x\u003cy",`+"\n  \"result_truncated\": true,") {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// escapedBody is the inside of s's JSON string, as json.Marshal writes it.
func escapedBody(s string, defuse bool) string {
	b, _ := json.Marshal(s)
	out := string(b[1 : len(b)-1])
	if defuse {
		out = strings.ReplaceAll(out, "##[", `##\u005b`)
	}
	return out
}

// FuzzJSONString: any string, cut anywhere into any number of writes,
// comes out as json.Marshal escapes it whole, "##[" defused across cuts.
func FuzzJSONString(f *testing.F) {
	f.Add(hostile(), uint64(1))
	f.Add("##[#", uint64(7))
	f.Add("\xe2\x82\xac\xe2\x82", uint64(3))
	f.Add("a\u2028b", uint64(0))
	f.Fuzz(func(t *testing.T, s string, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, seed>>7))
		for _, defuse := range []bool{false, true} {
			var out bytes.Buffer
			w := newJSONString(&out, defuse)
			for rest := s; len(rest) > 0; {
				k := min(len(rest), rng.IntN(8))
				if _, err := w.Write([]byte(rest[:k])); err != nil {
					t.Fatal(err)
				}
				rest = rest[k:]
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if want := escapedBody(s, defuse); out.String() != want {
				t.Fatalf("%q (defuse %v): got %q, want %q", s, defuse, out.String(), want)
			}
		}
	})
}

// A property over many random strings (the fuzz target's seeds are few):
// runes of every kind, and cuts of every size.
func TestJSONStringProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "#", "[", "<", ">", "&", "\"", "\\", "\n", "\x00", "\x1f", "\x7f", "é", "\u2028", "\u2029",
		"😀", "\xff", "\xc3", "\xe2\x82", "\xf0\x9f", "\xed\xa0\x80", "\ufffd"}
	for range 3000 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		s := b.String()
		for _, defuse := range []bool{false, true} {
			var out bytes.Buffer
			w := newJSONString(&out, defuse)
			for rest := s; len(rest) > 0; {
				k := min(len(rest), rng.IntN(6))
				w.Write([]byte(rest[:k]))
				rest = rest[k:]
			}
			w.Close()
			if want := escapedBody(s, defuse); out.String() != want {
				t.Fatalf("%q (defuse %v): got %q, want %q", s, defuse, out.String(), want)
			}
		}
	}
}

func TestJSONStringEscapes(t *testing.T) {
	var out bytes.Buffer
	w := newJSONString(&out, true)
	io.WriteString(w, "<a>&\u2028\x01\xff ##")
	io.WriteString(w, "[ok] \xe2\x82")
	w.Close()
	if want := `\u003ca\u003e\u0026\u2028\u0001\ufffd ##\u005bok] \ufffd\ufffd`; out.String() != want {
		t.Errorf("got %s, want %s", out.String(), want)
	}
	if !utf8.ValidString(out.String()) {
		t.Error("invalid UTF-8 out")
	}
}

func TestStopSectionStreams(t *testing.T) {
	for _, tt := range []struct{ parts, want string }{
		{"::error::boom\n|ok", "::error::boom\nok\n"},
		{"one line\n|", "one line\n"},
		{"|", ""},
	} {
		var b bytes.Buffer
		s, err := StartStopSection(&b)
		if err != nil {
			t.Fatal(err)
		}
		for p := range strings.SplitSeq(tt.parts, "|") {
			io.WriteString(s, p)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`^::stop-commands::([0-9a-f]{32})\n((?s).*)::([0-9a-f]{32})::\n$`).FindStringSubmatch(b.String())
		if m == nil || m[1] != m[3] || m[2] != tt.want {
			t.Errorf("%q: got %q", tt.parts, b.String())
		}
	}
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
