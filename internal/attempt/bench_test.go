package attempt

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/testing/synth"
)

// What the machine costs a line of a reply with partial messages (most of
// a run's lines): decoded once, stepped again and again.
func BenchmarkStepPartialMessages(b *testing.B) {
	var buf bytes.Buffer
	synth.Partial(func(line string) error { buf.WriteString(line + "\n"); return nil }, "s", 2000)
	d := stream.NewDecoder(&buf)
	var evs []stream.Event
	for {
		ev, err := d.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		evs = append(evs, ev)
	}
	lim := Limits{Idle: time.Minute, Tool: time.Hour, Background: time.Hour, Linger: time.Hour}
	b.ReportAllocs()
	for b.Loop() {
		m := New(lim, t0)
		for i := range evs {
			m.Step(Input{Kind: Line, Event: evs[i]}, t0)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/line")
}
