package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/event"

	"github.com/malarun/malarun/internal/testing/screen"
)

// waitScreen waits until cond holds for the screen, or fails after a
// generous deadline: a handshake on output, not a sleep.
func waitScreen(t *testing.T, scr *screen.Screen, cond func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !cond() {
		select {
		case <-scr.Changed():
		case <-deadline:
			t.Fatalf("timed out; screen:\n%s", scr)
		}
	}
}

func TestLiveDrawsAndCleansUp(t *testing.T) {
	scr := screen.New(120)
	l := StartLive(NewTerminal(scr, func() int { return 120 }), NewStatus("issue-9", 3))
	now := time.Now()
	l.Observe(event.Event{Kind: event.RunStarted, Time: now, Issue: "issue-9", RunDir: "/state/issue-9/runs/r1"})
	l.Observe(event.Event{Kind: event.AttemptStarted, Time: now, Issue: "issue-9", Attempt: 1, Session: session, Pid: 7})
	l.Observe(event.Event{Kind: event.ToolStarted, Time: now, Attempt: 1, Tool: "Bash", ToolInput: `{"command":"make"}`})
	for i := range 500 { // coalesced: at most ~10 redraws a second
		l.Observe(event.Event{Kind: event.Progress, Time: now, Attempt: 1, Session: session, Messages: i,
			ToolsRunning: []string{"Bash"}, Occupancy: 126_000, Window: 200_000, IdleDeadline: now.Add(time.Hour)})
	}
	waitScreen(t, scr, func() bool { return strings.Contains(scr.Current(), "499 msgs") })
	lines := scr.Lines()
	if n := len(lines); n != 4 || !strings.HasPrefix(lines[3], "issue-9 · attempt 1/3 · session 5fcbbccf · elapsed 0s · 499 msgs · running Bash · 63% of 200k") {
		t.Fatalf("screen:\n%s", scr)
	}
	for i, want := range []string{"issue-9: run started; transcripts in /state/issue-9/runs/r1",
		"attempt 1: new session 5fcbbccf (claude pid 7)", `attempt 1: Bash: {"command":"make"}`} {
		if !strings.HasSuffix(lines[i], want) {
			t.Errorf("line %d = %q, want it to end with %q", i+1, lines[i], want)
		}
	}
	l.Observe(event.Event{Kind: event.RunFinished, Time: now, Issue: "issue-9", Outcome: "success", CostUSD: 0.5})
	l.Close()
	lines = scr.Lines()
	if len(lines) != 4 || !strings.HasSuffix(lines[3], "issue-9 succeeded (exit 0) at attempt 1, 0s, $0.5000") {
		t.Errorf("after Close, want the event lines and the final line only:\n%s", scr)
	}
	if row, col := scr.Cursor(); row != 4 || col != 0 {
		t.Errorf("cursor at %d,%d after Close", row, col)
	}
	if errs := scr.Errors(); len(errs) > 0 {
		t.Errorf("garbled output: %q", errs)
	}
}
