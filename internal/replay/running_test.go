package replay

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/timeline"
)

// --follow tells a tool call when its line is read, and again while it
// runs at growing steps of its time so far (issue 34: a long Bash call was
// invisible exactly while someone watched).
func TestFollowTellsACallStillRunning(t *testing.T) {
	rf, _ := callNotAnswered(t)

	// The clock at each catch-up, in seconds after t0.
	clock := []float64{4, 8, 13, 16, 40}
	now := rf.t0
	var r recorder
	var seen []string
	follow := func() (string, error) {
		seen = append(seen, r.kinds())
		if len(clock) == 0 {
			return "the run ended", nil
		}
		now = rf.t0.Add(time.Duration(clock[0] * float64(time.Second)))
		clock = clock[1:]
		return "", nil
	}
	if _, err := Tell(Source{Issue: "issue-1", RunDir: rf.dir, Follow: follow, Now: func() time.Time { return now }}, &r); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(seen[0], "0:run_started 1:attempt_started 1:prompt 1:tool_call") {
		t.Fatalf("the call is not told before the first wait: %s", seen[0])
	}
	var took []int64
	for _, it := range r.items {
		if it.Kind == KindToolRunning {
			if it.Tool != "Bash" || it.ToolID != "toolu_1" || !strings.Contains(it.Summary, "echo hello-from-tool") {
				t.Errorf("running item %+v", it)
			}
			took = append(took, it.TookMS)
		}
	}
	// At 4 s the call has run 2 s (nothing), at 8 s 6 s (past 5 s), at
	// 13 s 11 s (past 10 s), at 16 s 14 s (nothing: next is 20 s), at 40 s
	// 38 s (past 20 and 30 s: told once).
	if want := []int64{6000, 11000, 38000}; !slices.Equal(took, want) {
		t.Errorf("told running after %v ms, want %v", took, want)
	}
}

// Told once answered: the result ends the call's telling.
func TestFollowStopsTellingAnAnsweredCall(t *testing.T) {
	rf := newRunFolder(t)
	rf.copyTranscript(1, "tool-use-success.jsonl")
	rf.entry(0, timeline.Entry{Event: "run_started"})
	rf.entry(0, timeline.Entry{Event: "attempt_started", Attempt: 1, Session: "s1", Pid: 100})
	rf.lineTimes(1, 1)
	r := followAnHourLater(t, rf)
	if strings.Contains(r.kinds(), "tool_running") {
		t.Errorf("an answered call was told running: %s", r.kinds())
	}
}

// A call of an attempt whose malarun was killed (no recorded end) is not
// told as running once the next attempt starts.
func TestFollowForgetsCallsOfAnEarlierAttempt(t *testing.T) {
	rf, initLine := callNotAnswered(t) // never answered: its malarun died
	rf.write("attempt-2.jsonl", initLine)
	rf.entry(60, timeline.Entry{Event: "run_started", Continued: true})
	rf.entry(60, timeline.Entry{Event: "attempt_started", Attempt: 2, Session: "s1", Pid: 200})
	r := followAnHourLater(t, rf)
	if strings.Contains(r.kinds(), "tool_running") {
		t.Errorf("a call of attempt 1 was told running during attempt 2: %s", r.kinds())
	}
}

// followAnHourLater follows rf's run with the clock an hour after t0
// (past every step of a call's telling): it catches up twice, then the run
// ends.
func followAnHourLater(t *testing.T, rf *runFolder) *recorder {
	polls := 0
	var r recorder
	follow := func() (string, error) {
		if polls++; polls == 3 {
			return "the run ended", nil
		}
		return "", nil
	}
	late := rf.t0.Add(time.Hour)
	if _, err := Tell(Source{Issue: "issue-1", RunDir: rf.dir, Follow: follow, Now: func() time.Time { return late }}, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// callNotAnswered is a run folder whose attempt 1 has printed its init
// line (at t0+1s) and a Bash call (at t0+2s), and no result yet; it
// returns the folder and the init line.
func callNotAnswered(t *testing.T) (*runFolder, string) {
	rf := newRunFolder(t)
	b, err := os.ReadFile(transcripts + "tool-use-success.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	rf.write("attempt-1.jsonl", lines[0]+lines[1])
	rf.entry(0, timeline.Entry{Event: "run_started"})
	rf.entry(0, timeline.Entry{Event: "attempt_started", Attempt: 1, Session: "s1", Pid: 100})
	zero, one := int64(0), int64(len(lines[0]))
	rf.entry(1, timeline.Entry{Event: timeline.EventLine, Attempt: 1, Offset: &zero})
	rf.entry(2, timeline.Entry{Event: timeline.EventLine, Attempt: 1, Offset: &one})
	return rf, lines[0]
}

// Followed, the text and Markdown renderers write each item as it comes:
// a tool call is not held back until malarun's next decision.
func TestFollowedItemsAreWrittenAtOnce(t *testing.T) {
	call := &Item{Kind: KindToolCall, Attempt: 1, Tool: "Bash", Summary: "sleep 10", Time: time.Now()}
	running := &Item{Kind: KindToolRunning, Attempt: 1, Tool: "Bash", Summary: "sleep 10", TookMS: 5000, Time: time.Now()}
	for name, make := range map[string]func(w *strings.Builder) Renderer{
		"text":     func(w *strings.Builder) Renderer { return NewText(w, TextOptions{}) },
		"markdown": func(w *strings.Builder) Renderer { return NewMarkdown(w) },
	} {
		var out strings.Builder
		r := make(&out)
		if err := r.Begin(Header{Issue: "i", RunID: "r", Following: true, Timed: true}); err != nil {
			t.Fatal(err)
		}
		r.Item(call)
		if !strings.Contains(out.String(), "sleep 10") {
			t.Errorf("%s: the call is held back:\n%s", name, out.String())
		}
		r.Item(running)
		if !strings.Contains(out.String(), "still running") || !strings.Contains(out.String(), "5s") {
			t.Errorf("%s: the running call is not told:\n%s", name, out.String())
		}
	}
}
