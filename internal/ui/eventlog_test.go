package ui

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/record"

	"github.com/malarun/malarun/internal/timeline"
)

// countingWriter records each Write: a follower must see whole lines.
type countingWriter struct{ writes []string }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

func TestEventLog(t *testing.T) {
	var w countingWriter
	l := NewEventLog(&w)
	t0 := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	l.Event(event.Event{Kind: event.Progress, Time: t0, Messages: 3})
	l.Event(event.Event{Kind: event.HangDetected, Time: t0, Issue: "i", Attempt: 1, Limit: 3 * time.Minute, Reason: "no output"})
	l.Event(event.Event{Kind: event.RunFinished, Time: t0, Issue: "i", Outcome: "success"})
	if len(w.writes) != 2 {
		t.Fatalf("writes %q, want two lines (no progress)", w.writes)
	}
	want := []string{
		`{"time":"2026-01-02T12:00:00Z","event":"hang_detected","issue":"i","attempt":1,"reason":"no output","limit_ms":180000}` + "\n",
		`{"time":"2026-01-02T12:00:00Z","event":"finished","issue":"i","outcome":"success","exit_code":0,"cost_usd":0,"tokens":{"input":0,"output":0,"cache_creation_input":0,"cache_read_input":0}}` + "\n",
	}
	for i := range want {
		if w.writes[i] != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i+1, w.writes[i], want[i])
		}
	}
	var lw bytes.Buffer
	NewEventLog(&lw).Event(event.Event{Kind: event.LimitWait, Time: t0, Issue: "i", Attempt: 1,
		Until: t0.Add(5 * time.Second), UsageLimit: record.UsageLimit{RetryAt: t0.Add(4 * time.Second), LimitType: "five_hour"}})
	if want := `{"time":"2026-01-02T12:00:00Z","event":"limit_wait","issue":"i","attempt":1,"until":"2026-01-02T12:00:05Z","retry_at":"2026-01-02T12:00:04Z","limit_type":"five_hour"}` + "\n"; lw.String() != want {
		t.Errorf("limit_wait:\n got %s\nwant %s", lw.String(), want)
	}
	// Every kind but progress decodes back, strictly.
	for _, k := range []event.Kind{event.RunStarted, event.AttemptStarted, event.ToolStarted,
		event.ToolFinished, event.APIRetry, event.KillSent, event.TreeGone, event.AttemptEnded,
		event.RetryDecided, event.Checkpoint, event.Restart, event.LimitWait,
		event.HookStarted, event.HookFinished} {
		var buf bytes.Buffer
		NewEventLog(&buf).Event(event.Event{Kind: k, Time: t0, ToolInput: "a\nb", Until: t0, UsageLimit: record.UsageLimit{RetryAt: t0, LimitType: "five_hour"}})
		dec := json.NewDecoder(strings.NewReader(buf.String()))
		dec.DisallowUnknownFields()
		var e timeline.Entry
		if err := dec.Decode(&e); err != nil || e.Event != string(k) || strings.Count(buf.String(), "\n") != 1 {
			t.Errorf("%s: %q: %v", k, buf.String(), err)
		}
	}
}

// Text from the model in an event reaches the log escaped, and decodes back.
func TestEventLogIsInert(t *testing.T) {
	input := setTitle + csiC1 + bidi + "\u2028\x7f"
	var buf bytes.Buffer
	NewEventLog(&buf).Event(event.Event{Kind: event.ToolStarted, Tool: "Bash", ToolInput: input})
	checkInert(t, input, buf.String(), true)
	var e timeline.Entry
	if err := json.Unmarshal(buf.Bytes(), &e); err != nil || e.ToolInput != input {
		t.Errorf("decodes to %q, %v; want %q", e.ToolInput, err, input)
	}
}
