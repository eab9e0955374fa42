package attempt

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/stream"
)

// FirstOutstanding is Outstanding's first n and a count of the rest,
// whatever the calls open, the order their results come in and the
// sub-agents that run them.
func TestFirstOutstandingIsOutstandingsFirst(t *testing.T) {
	m := New(Limits{Idle: time.Minute, Tool: time.Hour, Background: time.Hour, Linger: time.Hour}, t0)
	call := func(id, parent string) stream.Event {
		return stream.Event{Type: "assistant", ParentToolUseID: parent, ToolUses: []stream.ToolUse{{ID: id, Name: "Bash", Input: id}}}
	}
	result := func(id, parent string) stream.Event {
		return stream.Event{Type: "user", ParentToolUseID: parent, ToolResults: []string{id}}
	}
	step := func(ev stream.Event) {
		t.Helper()
		m.Step(Input{Kind: Line, Event: ev}, t0)
		want := m.Outstanding()
		for _, n := range []int{1, 3, 32} {
			first, more := m.FirstOutstanding(n)
			if !slices.Equal(first, want[:min(n, len(want))]) || more != len(want)-len(first) {
				t.Fatalf("FirstOutstanding(%d) = %v + %d, Outstanding %v", n, first, more, want)
			}
		}
	}
	step(stream.Event{Type: "assistant", ToolUses: []stream.ToolUse{{ID: "agent", Name: "Task", Input: "a"}}})
	for i := range 40 {
		step(call(fmt.Sprint("m", i), ""))
		step(call(fmt.Sprint("s", i), "agent"))
	}
	for i := 0; i < 40; i += 3 {
		step(result(fmt.Sprint("m", i), ""))
		step(result(fmt.Sprint("s", 39-i), "agent"))
	}
	step(result("agent", ""))
}
