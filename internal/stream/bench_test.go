package stream

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
)

type benchInput struct {
	name string
	data []byte
}

// benchInputs are the recorded CLI streams back to back, and single huge
// user lines of the kind that crash line-capped readers.
func benchInputs(b *testing.B) []benchInput {
	paths, err := filepath.Glob("../../testdata/transcripts/*.jsonl")
	if err != nil || len(paths) == 0 {
		b.Fatal("no transcripts", err)
	}
	var all []byte
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, data...)
	}
	return []benchInput{
		{"transcripts", all},
		{"line-1MB", bigLine(base64Period, 1<<20)},
		{"line-10MB", bigLine(base64Period, 10<<20)},
		{"escaped-10MB", bigLine(escapedPeriod, 10<<20)},
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, in := range benchInputs(b) {
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.data)))
			b.ReportAllocs()
			for b.Loop() {
				d := NewDecoder(bytes.NewReader(in.data))
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
	for _, in := range benchInputs(b) {
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.data)))
			b.ReportAllocs()
			for b.Loop() {
				rest := in.data
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
