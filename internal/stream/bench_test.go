package stream

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/malarun/malarun/internal/testing/synth"
)

// benchInput is one input of the decoder benchmarks, built on first use and
// then kept, so that the decoder and the baseline read the same bytes and a
// run that selects a few inputs does not build the 100 MB ones.
type benchInput struct {
	name string
	make func(testing.TB) []byte

	once sync.Once
	data []byte
}

func (in *benchInput) bytes(tb testing.TB) []byte {
	in.once.Do(func() { in.data = in.make(tb) })
	return in.data
}

// benchInputs are the recorded CLI streams back to back, a long generated
// run with partial messages (stream_event lines), and single huge user lines
// of the kind that crash line-capped readers: tool results of base64 text
// with an escaped newline every 4000 bytes, escape-dense source code, and
// image blocks of pure base64. scripts/bench.sh compares each decoder
// figure with the baseline's on the same input.
var benchInputs = []*benchInput{
	{name: "transcripts", make: recordedTranscripts},
	{name: "partial-20k-lines", make: func(testing.TB) []byte {
		var buf bytes.Buffer
		synth.Partial(synth.Newline(&buf), "5313e7c2-72e3-4a4f-96f5-b6f07478e90f", 20000)
		return buf.Bytes()
	}},
	{name: "line-1MB", make: func(testing.TB) []byte { return bigLine(base64Period, 1<<20) }},
	{name: "line-10MB", make: func(testing.TB) []byte { return bigLine(base64Period, 10<<20) }},
	{name: "line-100MB", make: func(testing.TB) []byte { return bigLine(base64Period, 100<<20) }},
	{name: "escaped-10MB", make: func(testing.TB) []byte { return bigLine(escapedPeriod, 10<<20) }},
	{name: "image-10MB", make: func(testing.TB) []byte { return imageLine(10 << 20) }},
	{name: "image-100MB", make: func(testing.TB) []byte { return imageLine(100 << 20) }},
}

func recordedTranscripts(tb testing.TB) []byte {
	paths, err := filepath.Glob("../../testdata/transcripts/*.jsonl")
	if err != nil || len(paths) == 0 {
		tb.Fatal("no transcripts", err)
	}
	var all []byte
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		all = append(all, data...)
	}
	return all
}

func imageLine(size int) []byte {
	var buf bytes.Buffer
	buf.Grow(size + 512)
	synth.ImageLine(&buf, "s-big", size)
	return buf.Bytes()
}

func BenchmarkDecode(b *testing.B) {
	for _, in := range benchInputs {
		b.Run(in.name, func(b *testing.B) {
			data := in.bytes(b)
			checkBenchInput(b, in.name, data)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				d := NewDecoder(bytes.NewReader(data))
				for {
					if _, err := d.Next(); err != nil {
						if err != io.EOF {
							b.Fatal(err)
						}
						break
					}
				}
			}
		})
	}
}

// BenchmarkDecodeKeepToolResults is BenchmarkDecode with the details of
// tool results kept (malarun show): each huge line's content goes through
// the counting, head and tail of toolresult.go instead of being skipped.
func BenchmarkDecodeKeepToolResults(b *testing.B) {
	for _, in := range benchInputs {
		b.Run(in.name, func(b *testing.B) {
			data := in.bytes(b)
			checkBenchInput(b, in.name, data)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				d := NewDecoder(bytes.NewReader(data))
				d.KeepToolResults()
				for {
					if _, err := d.Next(); err != nil {
						if err != io.EOF {
							b.Fatal(err)
						}
						break
					}
				}
			}
		})
	}
}

// BenchmarkJSONBaseline decodes the same lines with encoding/json into a
// map, the obvious alternative, given lines already in memory (which is
// what the decoder avoids having to hold).
func BenchmarkJSONBaseline(b *testing.B) {
	for _, in := range benchInputs {
		b.Run(in.name, func(b *testing.B) {
			data := in.bytes(b)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				rest := data
				for len(rest) > 0 {
					line := rest
					if i := bytes.IndexByte(rest, '\n'); i >= 0 {
						line, rest = rest[:i], rest[i+1:]
					} else {
						rest = nil
					}
					if len(line) == 0 {
						continue
					}
					var m map[string]any
					if err := json.Unmarshal(line, &m); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// checkBenchInput fails the benchmark unless data is whole JSON lines that
// the decoder reads without a malformed event: a benchmark of bad input
// would measure the error path.
func checkBenchInput(b *testing.B, name string, data []byte) {
	d := NewDecoder(bytes.NewReader(data))
	for n := 0; ; n++ {
		ev, err := d.Next()
		if err == io.EOF {
			if n == 0 {
				b.Fatalf("%s: no lines", name)
			}
			return
		}
		if err != nil || ev.Kind != KindJSON {
			b.Fatalf("%s: line %d: kind %v, err %v", name, ev.Line, ev.Kind, err)
		}
	}
}
