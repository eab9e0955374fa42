package stream

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// transcripts lists the recorded CLI streams (those of a version's folder
// too) and this package's own edge-case streams; each has a golden file.
func transcripts(t testing.TB) []string {
	t.Helper()
	var paths []string
	// A version's own folder (testdata/transcripts/2.1.332/) holds what
	// scripts/record-transcripts.sh recorded of that CLI.
	for _, pattern := range []string{"../../testdata/transcripts/*.jsonl", "../../testdata/transcripts/[0-9]*/*.jsonl", "testdata/*.jsonl"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	if len(paths) == 0 {
		t.Fatal("no transcripts found")
	}
	sort.Strings(paths)
	return paths
}

func decodeAll(t testing.TB, r io.Reader) []Event {
	t.Helper()
	d := NewDecoder(r)
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

func decodeFile(t testing.TB, path string) []Event {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return decodeAll(t, bytes.NewReader(data))
}

// renderEvent is the golden form of an event: one JSON object with only the
// fields that are set, so a golden file reads like the facts it checks.
// Keys are the Go fields' names (byGoName): a type's JSON tags are the
// wire form of records and reports that use it (Tokens, Task, ...), not
// the decoder's, so a golden file does not change when they do.
func renderEvent(ev Event) []byte {
	raw, err := json.Marshal(byGoName(reflect.ValueOf(ev)))
	if err != nil {
		panic(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		panic(err)
	}
	prune(m)
	// Offsets follow from the lengths (FuzzDecode checks them): golden
	// files keep to what the lines say.
	delete(m, "Offset")
	m["Kind"] = ev.Kind.String()
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false) // keep <synthetic> and >> readable
	if err := enc.Encode(m); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
}

// byGoName is v with each struct (at any depth of structs, slices and
// pointers) a map by its exported fields' Go names; any other value is
// left for encoding/json as it is, as is a value with a JSON form of
// its own.
func byGoName(v reflect.Value) any {
	if _, own := v.Interface().(json.Marshaler); own {
		return v.Interface()
	}
	switch v.Kind() {
	case reflect.Struct:
		m := map[string]any{}
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				m[f.Name] = byGoName(v.Field(i))
			}
		}
		return m
	case reflect.Slice:
		if v.IsNil() || v.Type().Elem().Kind() != reflect.Struct {
			return v.Interface()
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = byGoName(v.Index(i))
		}
		return out
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return byGoName(v.Elem())
	}
	return v.Interface()
}

// prune deletes zero values from m, recursively; it reports whether m is
// left empty.
func prune(m map[string]any) bool {
	for k, v := range m {
		switch v := v.(type) {
		case nil:
			delete(m, k)
		case bool:
			if !v {
				delete(m, k)
			}
		case string:
			if v == "" {
				delete(m, k)
			}
		case json.Number:
			if f, err := v.Float64(); err == nil && f == 0 {
				delete(m, k)
			}
		case map[string]any:
			if prune(v) {
				delete(m, k)
			}
		case []any:
			for _, e := range v {
				if em, ok := e.(map[string]any); ok {
					prune(em)
				}
			}
			if len(v) == 0 {
				delete(m, k)
			}
		}
	}
	return len(m) == 0
}

// bigLineReader produces, without holding it, a user line whose tool_result
// content is a string of at least size bytes (base64-like text with an escaped
// newline now and then), followed by a short result line.
type bigLineReader struct {
	parts [][]byte // prefix, suffix
	fill  []byte   // one period of the content string
	size  int      // bytes of content in all
	left  int      // bytes of content still to produce
	stage int
	off   int
}

const (
	bigLinePrefix = `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_big","type":"tool_result","content":"`
	bigLineSuffix = `","is_error":false}]},"session_id":"s-big"}` + "\n" +
		`{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s-big","usage":{"input_tokens":7,"output_tokens":3}}` + "\n"
)

func newBigLineReader(size int) *bigLineReader {
	return newLineReader([]byte(base64Period), size)
}

const (
	// base64Period is 4000 bytes of base64 and an escaped newline, like an
	// image or a file in a tool result.
	base64Period = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIzQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIzQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIzQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIzQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIzQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIzQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIzQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIzQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIzQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIz" +
		"QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIzQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIzQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIzQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIzQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIzQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIzQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIzQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIzQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIzQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0MTIz" +
		`\n`
	// escapedPeriod is JSON-escaped source code: an escape every few bytes,
	// the worst case for a scanner's fast path.
	escapedPeriod = `package main\n\nfunc main() {\n\tfmt.Println(\"h\u00e9llo, \\\"world\\\"\")\n}\n`
)

func newLineReader(period []byte, size int) *bigLineReader {
	size += (len(period) - size%len(period)) % len(period) // whole periods keep every escape intact
	return &bigLineReader{
		parts: [][]byte{[]byte(bigLinePrefix), []byte(bigLineSuffix)},
		fill:  period,
		size:  size,
		left:  size,
	}
}

// bigLineBytes is the length of the first line, newline excluded.
func (r *bigLineReader) bigLineBytes() int64 {
	return int64(len(bigLinePrefix) + r.size + strings.IndexByte(bigLineSuffix, '\n'))
}

func (r *bigLineReader) Read(p []byte) (int, error) {
	switch r.stage {
	case 0, 2:
		part := r.parts[r.stage/2][r.off:]
		n := copy(p, part)
		r.off += n
		if r.off == len(r.parts[r.stage/2]) {
			r.stage, r.off = r.stage+1, 0
		}
		return n, nil
	case 1:
		n := 0
		for n < len(p) && r.left > 0 {
			k := copy(p[n:min(len(p), n+r.left)], r.fill[r.off:])
			n += k
			r.left -= k
			r.off = (r.off + k) % len(r.fill)
		}
		if r.left == 0 {
			r.stage, r.off = 2, 0
		}
		return n, nil
	}
	return 0, io.EOF
}

// bigLine is an in-memory user line with a content string of about size
// bytes made of period.
func bigLine(period string, size int) []byte {
	data, err := io.ReadAll(newLineReader([]byte(period), size))
	if err != nil {
		panic(err)
	}
	return data[:bytes.IndexByte(data, '\n')+1]
}
