package replay

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/testing/synth"
	"github.com/malarun/malarun/internal/timeline"
)

// benchTranscriptBytes is the size of the benchmark's transcript: issue 21
// asks for a 100 MB one at 50 MB/s or more, in bounded memory.
const benchTranscriptBytes = 100 << 20

// benchRun writes a run folder whose one attempt has a transcript of about
// size bytes, as a long real run looks: partial messages, text, a tool call
// every fifth turn, a 20 KB tool output every fiftieth, and three 5 MB image
// results; and its timeline, a line entry for every whole message.
func benchRun(b *testing.B, size int64) (string, int64) {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "runs", "20261122T120401Z-3f9a1c")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "prompt.md"), []byte("Fix the bug.\n"), 0o600)
	tf, err := os.Create(filepath.Join(dir, "attempt-1.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer tf.Close()
	lf, err := os.Create(filepath.Join(dir, timeline.FileName))
	if err != nil {
		b.Fatal(err)
	}
	defer lf.Close()
	tw, lw := bufio.NewWriterSize(tf, 1<<20), bufio.NewWriterSize(lf, 1<<20)
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	var off, n int64
	entry := func(e timeline.Entry) {
		e.Issue = "issue-1"
		if e.Time.IsZero() {
			e.Time = t0.Add(time.Duration(n) * time.Millisecond)
		}
		j, _ := json.Marshal(e)
		lw.Write(append(j, '\n'))
	}
	entry(timeline.Entry{Event: "run_started"})
	entry(timeline.Entry{Event: "attempt_started", Attempt: 1, Session: "s", Pid: 42})
	emit := func(line string) error {
		n++
		if !strings.HasPrefix(line, `{"type":"stream_event"`) {
			o := off
			entry(timeline.Entry{Event: timeline.EventLine, Attempt: 1, Offset: &o})
		}
		off += int64(len(line)) + 1
		_, err := tw.WriteString(line + "\n")
		return err
	}
	bigOutput := strings.Repeat(`ok  \tgithub.com/example/project/internal/api\t0.412s\n`, 400) // ~20 KB
	for chunk := 0; off < size; chunk++ {
		if err := synth.Partial(emit, "s", 2000); err != nil {
			b.Fatal(err)
		}
		id := fmt.Sprintf("toolu_big_%d", chunk)
		emit(`{"type":"assistant","message":{"id":"m","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{"type":"tool_use","id":"` + id + `","name":"Bash","input":{"command":"go test ./..."}}],"usage":{"input_tokens":1000,"output_tokens":12}},"parent_tool_use_id":null,"session_id":"s"}`)
		emit(`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"` + id + `","type":"tool_result","content":"` + bigOutput + `","is_error":false}]},"parent_tool_use_id":null,"session_id":"s"}`)
		if chunk%100 == 50 {
			o := off
			entry(timeline.Entry{Event: timeline.EventLine, Attempt: 1, Offset: &o})
			tw.Flush()
			synth.ImageLine(tf, "s", 5<<20)
			fi, _ := tf.Stat()
			off = fi.Size()
		}
	}
	tw.Flush()
	entry(timeline.Entry{Event: "attempt_ended", Attempt: 1, Outcome: "success", ExitCode: code(0)})
	entry(timeline.Entry{Event: "finished", Outcome: "success", ExitCode: code(0)})
	lw.Flush()
	return dir, off
}

// peakHeap is a Renderer that passes items on and samples the live heap.
type peakHeap struct {
	Renderer
	n    int
	peak uint64
}

func (p *peakHeap) Item(it *Item) error {
	if p.n++; p.n%256 == 0 {
		// runtime/metrics does not stop the world, as ReadMemStats does.
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(s)
		p.peak = max(p.peak, s[0].Value.Uint64())
	}
	return p.Renderer.Item(it)
}

// BenchmarkShow tells a run with a 100 MB transcript in each format.
// MB/s is transcript bytes per second; peak-heap-MB the largest live heap
// seen while telling it (bounded: it does not grow with the transcript).
func BenchmarkShow(b *testing.B) {
	dir, size := benchRun(b, benchTranscriptBytes)
	for _, f := range []struct {
		name string
		new  func(io.Writer) Renderer
	}{
		{"text", func(w io.Writer) Renderer { return NewText(w, TextOptions{Width: 100}) }},
		{"md", NewMarkdown},
		{"json", NewJSON},
		{"html", NewHTML},
	} {
		b.Run(f.name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			var peak uint64
			for range b.N {
				runtime.GC()
				p := &peakHeap{Renderer: f.new(io.Discard)}
				if _, err := Tell(Source{Issue: "issue-1", RunDir: dir}, p); err != nil {
					b.Fatal(err)
				}
				peak = max(peak, p.peak)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		})
	}
}
