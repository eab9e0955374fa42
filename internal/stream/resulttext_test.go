package stream

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

// resultPeriod is one period of a big result as written in JSON: every
// escape the CLI can write, a surrogate pair, HTML characters, a raw and an
// escaped U+2028, and multi-byte runes that chunks may split.
const resultPeriod = `line one\nsaid \"hi\" \\ back\tslash/\/ caf\u00e9 café \ud83d\ude00😀 <a href=\"x\">&amp;</a> ` + "\u2028" + `\u2029 \u0001\b\f\r ##[x] ` + "日本語"

// resultLine is a result line whose result string is period repeated
// until it has at least size bytes.
func resultLine(period string, size int) string {
	return `{"type":"result","subtype":"success","is_error":false,"result":"` +
		strings.Repeat(period, size/len(period)+1) + `","session_id":"s","total_cost_usd":0.5}`
}

// unmarshalResult is what encoding/json reads as line's result.
func unmarshalResult(t testing.TB, line string) string {
	t.Helper()
	var v struct{ Result string }
	if err := json.Unmarshal([]byte(line), &v); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	return v.Result
}

// writeLines writes a transcript and decodes it, as the supervisor does;
// it returns its path and its last event.
func writeLines(t *testing.T, lines ...string) (string, Event) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "attempt-1.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	evs := decodeFile(t, path)
	return path, evs[len(evs)-1]
}

func refOf(path string, ev Event) LineRef {
	return LineRef{Path: path, Offset: ev.Offset, Bytes: ev.Bytes}
}

// openResult reads the result at ref from its transcript, open for the
// rest of the test (internal/transcript.ReadResult opens it in the run).
func openResult(t *testing.T, ref LineRef, kept string) (*ResultText, error) {
	t.Helper()
	f, err := os.Open(ref.Path)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return NewResultText(f, st.Size(), ref, kept)
}

func copyResult(t *testing.T, ref LineRef, kept string) string {
	t.Helper()
	rt, err := openResult(t, ref, kept)
	if err != nil {
		t.Fatalf("NewResultText: %v", err)
	}
	var b strings.Builder
	n, err := rt.WriteTo(&b)
	if err != nil || n != int64(b.Len()) {
		t.Fatalf("WriteTo: %d bytes (wrote %d), %v", n, b.Len(), err)
	}
	return b.String()
}

func TestReadResultCopiesTheWholeText(t *testing.T) {
	big := resultLine(resultPeriod, 3*MaxResultBytes)
	path, ev := writeLines(t, `{"type":"system","subtype":"init","session_id":"s"}`, `{"type":"result","result":"an earlier one"}`, big)
	want := unmarshalResult(t, big)
	if !ev.ResultTruncated || len(ev.Result) > MaxResultBytes || !strings.HasPrefix(want, ev.Result) {
		t.Fatalf("the decoder kept %d bytes (truncated %v)", len(ev.Result), ev.ResultTruncated)
	}
	if got := copyResult(t, refOf(path, ev), ev.Result); got != want {
		t.Errorf("copied %d bytes, encoding/json reads %d; first difference at %d", len(got), len(want), firstDiff(got, want))
	}
}

func TestReadResultAtTheCap(t *testing.T) {
	for _, tt := range []struct {
		size  int
		trunc bool
	}{{MaxResultBytes, false}, {MaxResultBytes + 1, true}} {
		line := `{"type":"result","result":"` + strings.Repeat("x", tt.size) + `"}`
		path, ev := writeLines(t, line)
		if ev.ResultTruncated != tt.trunc || len(ev.Result) != min(tt.size, MaxResultBytes) {
			t.Errorf("%d bytes: kept %d, truncated %v", tt.size, len(ev.Result), ev.ResultTruncated)
		}
		if got := copyResult(t, refOf(path, ev), ev.Result); len(got) != tt.size {
			t.Errorf("%d bytes: copied %d", tt.size, len(got))
		}
	}
}

// A small result reads back as the decoder kept it; the last of repeated
// result keys wins, as in the decoder and encoding/json, and a null after a
// string leaves the string.
func TestReadResultSmallAndRepeated(t *testing.T) {
	for _, line := range []string{
		`{"type":"result","result":"short \u00e9 \ud83d\ude00"}`,
		` {"result":"first","type":"result","result":"second"}` + " \t",
		`{"result":"kept","result":null,"x":{"result":"nested"}}`,
		`{"result":""}`,
	} {
		path, _ := writeLines(t, `{"type":"system"}`, line, `{"type":"after"}`)
		ev := decodeFile(t, path)[1]
		want := unmarshalResult(t, line)
		if ev.Result != want {
			t.Fatalf("%s: the decoder kept %q, encoding/json reads %q", line, ev.Result, want)
		}
		if got := copyResult(t, refOf(path, ev), ev.Result); got != want {
			t.Errorf("%s: copied %q, want %q", line, got, want)
		}
	}
}

// The copy is refused, before anything is written, when the transcript is
// no longer what the decoder read (one that is gone: transcript's tests).
func TestReadResultRefusesAChangedTranscript(t *testing.T) {
	big := resultLine(resultPeriod, 2*MaxResultBytes)
	tests := []struct {
		name   string
		change func(t *testing.T, path string, ev Event)
	}{
		{"cut short", func(t *testing.T, path string, ev Event) { os.Truncate(path, ev.Offset+ev.Bytes/2) }},
		{"cut before the newline", func(t *testing.T, path string, ev Event) { os.Truncate(path, ev.Offset+ev.Bytes-1) }},
		{"a line inserted before", func(t *testing.T, path string, _ Event) {
			b, _ := os.ReadFile(path)
			os.WriteFile(path, append([]byte("{}\n"), b...), 0o600)
		}},
		{"the kept text changed", func(t *testing.T, path string, ev Event) {
			f, _ := os.OpenFile(path, os.O_WRONLY, 0)
			f.WriteAt([]byte("L"), ev.Offset+int64(strings.Index(big, "line one")))
			f.Close()
		}},
		{"the line grew", func(t *testing.T, path string, ev Event) {
			f, _ := os.OpenFile(path, os.O_WRONLY, 0)
			f.WriteAt([]byte(" "), ev.Offset+ev.Bytes) // the newline
			f.Close()
		}},
		{"replaced by another", func(t *testing.T, path string, _ Event) {
			os.WriteFile(path, []byte(strings.Repeat("x", len(big)+100)), 0o600)
		}},
	}
	for i, tt := range tests {
		if testing.Short() && i%2 == 1 {
			// Each case decodes a 2 MiB line under -race (1 s): make check
			// tries every other one, make test all.
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			path, ev := writeLines(t, `{"type":"system"}`, big)
			tt.change(t, path, ev)
			_, err := openResult(t, refOf(path, ev), ev.Result)
			if err == nil {
				t.Fatal("NewResultText accepted it")
			}
			t.Log(err)
		})
	}
}

// stingyReaderAt returns a few bytes per call: the line arrives in many
// reads, so escapes and runes straddle every boundary.
type stingyReaderAt struct {
	r    io.ReaderAt
	most int
	n    int
}

func (s *stingyReaderAt) ReadAt(p []byte, off int64) (int, error) {
	s.n++
	k := 1 + s.n%s.most
	if len(p) > k {
		p = p[:k]
	}
	return s.r.ReadAt(p, off)
}

// chunkWriter keeps every write, to check that each holds whole runes.
type chunkWriter struct {
	b      bytes.Buffer
	chunks int
	split  bool
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	w.chunks++
	if !utf8.Valid(p) {
		w.split = true
	}
	return w.b.Write(p)
}

func TestReadResultManyReadsAndChunks(t *testing.T) {
	line := resultLine(resultPeriod+"\xff\xe2\x82", 40<<10) // invalid bytes too: each becomes U+FFFD
	data := []byte("{}\n" + line + "\n")
	evs := decodeAll(t, iotest.OneByteReader(bytes.NewReader(data)))
	ev := evs[1]
	if ev.Offset != 3 || ev.Bytes != int64(len(line)) {
		t.Fatalf("line at %d, %d bytes; want 3, %d", ev.Offset, ev.Bytes, len(line))
	}
	want := unmarshalResult(t, line)
	for _, chunk := range []int{1, 2, 3, 5, 64, 4099} {
		r := &stingyReaderAt{r: bytes.NewReader(data), most: 7}
		rt, err := NewResultText(r, int64(len(data)), LineRef{Path: "mem", Offset: ev.Offset, Bytes: ev.Bytes}, ev.Result)
		if err != nil {
			t.Fatal(err)
		}
		rt.chunk = chunk
		var w chunkWriter
		if _, err := rt.WriteTo(&w); err != nil {
			t.Fatal(err)
		}
		if got := w.b.String(); got != want {
			t.Errorf("chunk %d: copied %d bytes, want %d; first difference at %d", chunk, len(got), len(want), firstDiff(got, want))
		}
		if w.split {
			t.Errorf("chunk %d: a write split a rune", chunk)
		}
		if chunk < 100 && w.chunks < len(want)/(chunk+8) {
			t.Errorf("chunk %d: only %d writes", chunk, w.chunks)
		}
	}
}

type failWriter struct{ after int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.after <= 0 {
		return 0, errors.New("disk full")
	}
	w.after--
	return len(p), nil
}

func TestReadResultWriterError(t *testing.T) {
	path, ev := writeLines(t, resultLine(resultPeriod, 2*MaxResultBytes))
	rt, err := openResult(t, refOf(path, ev), ev.Result)
	if err != nil {
		t.Fatal(err)
	}
	n, err := rt.WriteTo(&failWriter{after: 3})
	if err == nil || err.Error() != "disk full" || n <= 2*copyChunk || n > 3*copyChunk {
		t.Errorf("got %d, %v; want three chunks written and the writer's error", n, err)
	}
}

// FuzzReadResult: whatever the string, and however small the chunks, the
// copy is what encoding/json reads.
func FuzzReadResult(f *testing.F) {
	for _, s := range []string{`plain`, resultPeriod, `\ud800x\udc00\ud83d\ud83d\ude00`, "\xff\xc3\xa9\xe2\x82", `\u0000\u2028`} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, s string, chunk uint8) {
		line := `{"type":"result","result":"` + s + `"}`
		if !json.Valid([]byte(line)) || strings.IndexByte(line, '\n') >= 0 {
			return
		}
		data := []byte(line + "\n")
		evs := decodeAll(t, bytes.NewReader(data))
		rt, err := NewResultText(bytes.NewReader(data), int64(len(data)), refOf("mem", evs[0]), evs[0].Result)
		if err != nil {
			t.Fatal(err)
		}
		rt.chunk = 1 + int(chunk%16)
		var b strings.Builder
		if _, err := rt.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		if want := unmarshalResult(t, line); b.String() != want {
			t.Fatalf("%q: copied %q, encoding/json reads %q", line, b.String(), want)
		}
	})
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
