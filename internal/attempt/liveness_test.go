package attempt

import (
	"testing"
	"time"

	"github.com/malarun/malarun/internal/stream"
)

func TestLivenessDeadlines(t *testing.T) {
	t0 := time.Unix(1000, 0)
	idle, tool := 2*time.Second, 30*time.Second
	toolUse := stream.Event{Type: "assistant", ToolUses: []stream.ToolUse{{ID: "t1", Name: "Bash"}, {ID: "t2", Name: "Read"}}}
	steps := []struct {
		name  string
		ev    stream.Event
		at    time.Duration
		want  time.Duration // deadline, from t0
		tools []string
	}{
		{"init", stream.Event{Type: "system", Subtype: "init"}, 1 * time.Second, 3 * time.Second, nil},
		{"two tool calls", toolUse, 2 * time.Second, 32 * time.Second, []string{"Bash", "Read"}},
		{"one result", stream.Event{Type: "user", ToolResults: []string{"t2"}}, 3 * time.Second, 33 * time.Second, []string{"Bash"}},
		{"last result", stream.Event{Type: "user", ToolResults: []string{"t1"}}, 4 * time.Second, 6 * time.Second, nil},
		{"api retry adds its delay", stream.Event{Type: "system", Subtype: "api_retry", RetryDelayMS: 1500}, 5 * time.Second, 8500 * time.Millisecond, nil},
		{"unknown result id", stream.Event{Type: "user", ToolResults: []string{"zzz"}}, 6 * time.Second, 8 * time.Second, nil},
	}
	l := newLiveness(Limits{Idle: idle, Tool: tool}, t0)
	if got := l.deadline.Sub(t0); got != firstLineWait {
		t.Fatalf("initial deadline %v, want %v (firstLineWait)", got, firstLineWait)
	}
	for _, s := range steps {
		l.observe(&s.ev, t0.Add(s.at), nil)
		if got := l.deadline.Sub(t0); got != s.want {
			t.Errorf("%s: deadline %v, want %v", s.name, got, s.want)
		}
		if got := l.toolsRunning(); len(got) != len(s.tools) || (len(got) > 0 && got[0] != s.tools[0]) {
			t.Errorf("%s: tools running %v, want %v", s.name, got, s.tools)
		}
	}
}
