package synth_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/testing/synth"
)

const session = "5313e7c2-72e3-4a4f-96f5-b6f07478e90f"

func decodeAll(t *testing.T, data []byte) []stream.Event {
	t.Helper()
	var evs []stream.Event
	d := stream.NewDecoder(bytes.NewReader(data))
	for {
		ev, err := d.Next()
		if err == io.EOF {
			return evs
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind != stream.KindJSON {
			t.Fatalf("line %d is %v", ev.Line, ev.Kind)
		}
		evs = append(evs, ev)
	}
}

// The generated run reads like the CLI's: an init line, stream_event lines,
// tool calls each answered by a tool_result, and a successful result last.
func TestPartialIsAWholeRun(t *testing.T) {
	var buf bytes.Buffer
	if err := synth.Partial(synth.Newline(&buf), session, 2000); err != nil {
		t.Fatal(err)
	}
	evs := decodeAll(t, buf.Bytes())
	if n := len(evs); n < 1990 || n > 2030 {
		t.Errorf("%d lines, want about 2000", n)
	}
	if evs[0].Type != "system" || evs[0].Subtype != "init" || evs[0].SessionID != session {
		t.Errorf("first line %+v", evs[0])
	}
	last := evs[len(evs)-1]
	if last.Type != "result" || last.IsError || last.Result != synth.ResultText || last.ContextWindow != 1000000 {
		t.Errorf("last line %+v", last)
	}
	open := map[string]bool{}
	kinds := map[string]int{}
	for _, ev := range evs {
		kinds[ev.Type]++
		for _, tu := range ev.ToolUses {
			open[tu.ID] = true
		}
		for _, id := range ev.ToolResults {
			if !open[id] {
				t.Errorf("tool_result %s without its tool_use", id)
			}
			delete(open, id)
		}
	}
	if len(open) != 0 {
		t.Errorf("tool calls never answered: %v", open)
	}
	if kinds["stream_event"] < len(evs)/2 || kinds["assistant"] == 0 || kinds["user"] == 0 {
		t.Errorf("line types %v", kinds)
	}
}

func TestImageLineSize(t *testing.T) {
	var buf bytes.Buffer
	if err := synth.ImageLine(&buf, session, 1<<20); err != nil {
		t.Fatal(err)
	}
	evs := decodeAll(t, buf.Bytes())
	if len(evs) != 1 || evs[0].Type != "user" || evs[0].SessionID != session || len(evs[0].ToolResults) != 1 {
		t.Fatalf("events %+v", evs)
	}
	if evs[0].Bytes < 1<<20 || evs[0].Bytes > 1<<20+512 {
		t.Errorf("line of %d bytes, want 1 MiB and a little", evs[0].Bytes)
	}
}
