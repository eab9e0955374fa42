package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/record"
)

const session = "5fcbbccf-06da-4fd6-8405-d704e7fbd2c7"

func TestStatusLine(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	s := NewStatus("issue-123", 10)
	if s.Visible() || s.Line(t0) != "" {
		t.Fatalf("a status before the run starts: %q", s.Line(t0))
	}
	s.Apply(event.Event{Kind: event.RunStarted, Time: t0})
	s.Apply(event.Event{Kind: event.AttemptStarted, Time: at(time.Second), Attempt: 2, Session: session})
	if got, want := s.Line(at(2*time.Second)), "issue-123 · attempt 2/10 · session 5fcbbccf · elapsed 2s · starting claude"; got != want {
		t.Errorf("starting:\n got %q\nwant %q", got, want)
	}
	progress := event.Event{Kind: event.Progress, Time: at(4 * time.Minute), Attempt: 2, Session: session,
		Messages: 38, ToolsRunning: []string{"Bash"}, Occupancy: 126_000, Window: 200_000, CostUSD: 0.421,
		IdleDeadline: at(4*time.Minute + 15*time.Minute)}
	s.Apply(progress)
	want := "issue-123 · attempt 2/10 · session 5fcbbccf · elapsed 4m12s · 38 msgs · running Bash · 63% of 200k · $0.4210"
	if got := s.Line(at(4*time.Minute + 12*time.Second)); got != want {
		t.Errorf("running, far from a hang:\n got %q\nwant %q", got, want)
	}
	// The last quarter of a 15m limit: the countdown shows.
	if got := s.Line(at(4*time.Minute + 12*time.Minute)); !strings.HasSuffix(got, " · hang in 3m0s") {
		t.Errorf("in the last quarter: %q", got)
	}
	// A 1m limit: the countdown shows in the last 30s.
	progress.ToolsRunning, progress.IdleDeadline = nil, at(5*time.Minute)
	s.Apply(progress)
	if got := s.Line(at(4*time.Minute + 20*time.Second)); strings.Contains(got, "hang in") || strings.Contains(got, "running") {
		t.Errorf("40s from a hang, no tool: %q", got)
	}
	if got := s.Line(at(4*time.Minute + 35*time.Second)); !strings.HasSuffix(got, " · hang in 25s") {
		t.Errorf("25s from a hang: %q", got)
	}
	s.Apply(event.Event{Kind: event.KillSent, Time: at(5 * time.Minute), Reason: "hang"})
	if got := s.Line(at(5 * time.Minute)); !strings.Contains(got, " · stopping (hang) · ") || strings.Contains(got, "hang in") {
		t.Errorf("stopping: %q", got)
	}
	s.Apply(event.Event{Kind: event.AttemptEnded, Time: at(5 * time.Minute)})
	s.Apply(event.Event{Kind: event.RetryDecided, Time: at(5 * time.Minute), Action: "resume", Backoff: 5 * time.Second})
	if got := s.Line(at(5*time.Minute + time.Second)); !strings.Contains(got, " · resume in 4s") {
		t.Errorf("waiting to retry: %q", got)
	}
	s.Apply(event.Event{Kind: event.RunFinished, Time: at(6 * time.Minute), Outcome: "success"})
	if s.Visible() || s.Line(at(6*time.Minute)) != "" {
		t.Errorf("a status after the run: %q", s.Line(at(6*time.Minute)))
	}
}

func TestEventLines(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 12, 0, 0, 0, time.Local)
	st := NewStatus("issue-1", 3)
	st.Apply(event.Event{Kind: event.RunStarted, Time: t0})
	st.Apply(event.Event{Kind: event.AttemptStarted, Time: t0, Attempt: 2})
	tests := []struct {
		e    event.Event
		want string // "" = no line
	}{
		{event.Event{Kind: event.Progress, Messages: 3}, ""},
		{event.Event{Kind: event.ToolFinished, Tool: "Bash"}, ""},
		{event.Event{Kind: event.HookStarted, Attempt: 1, Hook: "Stop"}, "attempt 1: hook Stop started"},
		{event.Event{Kind: event.HookStarted, Attempt: 1, Hook: "PreToolUse:Bash"}, ""},
		{event.Event{Kind: event.HookFinished, Attempt: 1, Hook: "Stop", Outcome: "success", HookExitCode: ptr(0)}, ""},
		{event.Event{Kind: event.HookFinished, Attempt: 1, Hook: "PostToolUse:Bash", Outcome: "error", HookExitCode: ptr(1)},
			"attempt 1: hook PostToolUse:Bash did not succeed: error (exit 1)"},
		{event.Event{Kind: event.HookFinished, Attempt: 1, Hook: "Stop", Outcome: "cancelled"},
			"attempt 1: hook Stop did not succeed: cancelled"},
		{event.Event{Kind: event.AttemptStarted, Attempt: 2, Session: session, Resume: true, Pid: 42},
			"attempt 2: resuming session 5fcbbccf (claude pid 42)"},
		{event.Event{Kind: event.ToolStarted, Attempt: 1, Tool: "Bash", ToolInput: "{\"command\":\"ls\n\x1b[31mred\"}"},
			`attempt 1: Bash: {"command":"ls [31mred"}`},
		{event.Event{Kind: event.HangDetected, Attempt: 1, Reason: "no output for 3m0s", ToolsRunning: []string{"Bash"}},
			"attempt 1: hang detected: no output for 3m0s while Bash ran"},
		{event.Event{Kind: event.AttemptEnded, Attempt: 1, Outcome: "hang"}, ""},
		{event.Event{Kind: event.AttemptEnded, Attempt: 1, Outcome: "crash", Reason: "claude exited 1"},
			"attempt 1: ended: crash: claude exited 1"},
		{event.Event{Kind: event.RetryDecided, Attempt: 1, Action: "resume", Session: session, Backoff: 5 * time.Second},
			"attempt 1: will resume session 5fcbbccf in 5s"},
		{event.Event{Kind: event.RetryDecided, Attempt: 1, Action: "done"}, ""},
		{event.Event{Kind: event.Checkpoint, Session: session, Occupancy: 182_000, Window: 200_000},
			"context at 91% of 200k: asking session 5fcbbccf for a checkpoint before a fresh session"},
		{event.Event{Kind: event.Restart, Continuation: 1, CheckpointBytes: 2100},
			"context restart 1: a new session continues from the checkpoint (2100 bytes)"},
		{event.Event{Kind: event.RunFinished, Issue: "issue-1", Outcome: "retries_exhausted", ExitCode: 3, CostUSD: 0.01, Time: t0.Add(62 * time.Second)},
			"issue-1 stopped: retries_exhausted (exit 3) at attempt 2, 1m2s, $0.0100"},
	}
	for _, tt := range tests {
		if tt.e.Time.IsZero() {
			tt.e.Time = t0
		}
		got, ok := eventLine(tt.e, st)
		if tt.want == "" {
			if ok {
				t.Errorf("%s: a line %q, want none", tt.e.Kind, got)
			}
			continue
		}
		if want := tt.e.Time.Format(time.TimeOnly) + " " + tt.want; got != want {
			t.Errorf("%s:\n got %q\nwant %q", tt.e.Kind, got, want)
		}
	}
}

// Giving up for the reason the attempt's "ended" line just gave says it
// once; a decision with a reason of its own, or after an ending that has
// no line (an interruption), gives its reason.
func TestGivingUpSaysTheReasonOnce(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 12, 0, 0, 0, time.Local)
	const why = "the API answered 401 authentication_failed at claude's first request (malarun stops claude there); check ANTHROPIC_API_KEY or the CLI's login"
	tests := []struct {
		name  string
		ended event.Event
		fail  string // the decision's reason
		want  string
	}{
		{"same reason", event.Event{Outcome: "auth", Reason: why}, why, "attempt 1: giving up"},
		{"a reason of its own", event.Event{Outcome: "crash", Reason: "claude exited 1"},
			"1 attempts, the most max_attempts allows; last: claude exited 1",
			"attempt 1: giving up: 1 attempts, the most max_attempts allows; last: claude exited 1"},
		{"after an ending without a line", event.Event{Outcome: "interrupted", Reason: "malarun was asked to stop"},
			"malarun was asked to stop", "attempt 1: giving up: malarun was asked to stop"},
	}
	for _, tt := range tests {
		st := NewStatus("issue-1", 3)
		var lines []string
		for _, e := range []event.Event{
			{Kind: event.RunStarted},
			{Kind: event.AttemptStarted, Attempt: 1, Session: session},
			{Kind: event.AttemptEnded, Attempt: 1, Outcome: tt.ended.Outcome, Reason: tt.ended.Reason},
			{Kind: event.RetryDecided, Attempt: 1, Action: "fail", Reason: tt.fail},
		} {
			e.Time = t0
			st.Apply(e) // as Live does: the status first, then the line
			if l, ok := eventLine(e, st); ok {
				lines = append(lines, strings.TrimPrefix(l, "12:00:00 "))
			}
		}
		if got := lines[len(lines)-1]; got != tt.want {
			t.Errorf("%s: got %q, want %q; lines %q", tt.name, got, tt.want, lines)
		}
		if n := strings.Count(strings.Join(lines, "\n"), why); tt.fail == why && n != 1 {
			t.Errorf("%s: the reason is printed %d times: %q", tt.name, n, lines)
		}
	}
	// Without a status (no context), the reason is always given.
	if got, _ := eventLine(event.Event{Kind: event.RetryDecided, Time: t0, Attempt: 1, Action: "fail", Reason: why}, nil); got != "12:00:00 attempt 1: giving up: "+why {
		t.Errorf("without a status: %q", got)
	}
}

// A limit wait counts down to the resume, with no process and no hang countdown.
func TestStatusLineDuringALimitWait(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	s := NewStatus("issue-123", 10)
	s.Apply(event.Event{Kind: event.RunStarted, Time: t0})
	s.Apply(event.Event{Kind: event.AttemptStarted, Time: t0, Attempt: 1, Session: session})
	s.Apply(event.Event{Kind: event.Progress, Time: t0, Messages: 1, IdleDeadline: t0.Add(10 * time.Second)})
	s.Apply(event.Event{Kind: event.AttemptEnded, Time: t0.Add(time.Second)})
	s.Apply(event.Event{Kind: event.LimitWait, Time: t0.Add(time.Second), Until: t0.Add(2 * time.Hour), UsageLimit: record.UsageLimit{LimitType: "five_hour"}})
	want := "issue-123 · attempt 1/10 · session 5fcbbccf · elapsed 1h0m0s · usage limit (five_hour): resuming in 1h0m0s"
	if got := s.Line(t0.Add(time.Hour)); got != want {
		t.Errorf("waiting:\n got %q\nwant %q", got, want)
	}
	if got := s.Line(t0.Add(3 * time.Hour)); !strings.HasSuffix(got, "resuming in 0s") {
		t.Errorf("past the wait: %q", got)
	}
}

func TestLimitEventLines(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 12, 0, 0, 0, time.Local)
	got, ok := eventLine(event.Event{Kind: event.LimitWait, Time: t0, Attempt: 1, Until: t0.Add(5 * time.Minute), UsageLimit: record.UsageLimit{LimitType: "five_hour"}}, nil)
	if want := "12:00:00 attempt 1: usage limit (five_hour): waiting until 12:05:00, then resuming the session"; !ok || got != want {
		t.Errorf("limit_wait:\n got %q\nwant %q", got, want)
	}
	// A wait between attempts, or for a limit the record names before any
	// attempt: no "attempt 0".
	got, _ = eventLine(event.Event{Kind: event.LimitWait, Time: t0, Until: t0.Add(5 * time.Minute), UsageLimit: record.UsageLimit{LimitType: "five_hour"}}, nil)
	if want := "12:00:00 usage limit (five_hour): waiting until 12:05:00, then resuming the session"; got != want {
		t.Errorf("limit_wait without an attempt:\n got %q\nwant %q", got, want)
	}
	got, _ = eventLine(event.Event{Kind: event.RunFinished, Time: t0, Issue: "i", Outcome: "rate or usage limit reached", ExitCode: 75,
		UsageLimit: record.UsageLimit{RetryAt: t0.Add(5 * time.Hour)}}, nil)
	if want := "12:00:00 i failed: rate or usage limit reached (exit 75), retry at 2026-01-02 17:00:00, $0.0000"; got != want {
		t.Errorf("finished:\n got %q\nwant %q", got, want)
	}
}

// In a narrow terminal what is about to happen stays; the session id, the
// message count and the cost go first.
func TestStatusLineKeepsTheCountdownWhenNarrow(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	s := NewStatus("issue-123", 10)
	s.Apply(event.Event{Kind: event.RunStarted, Time: t0})
	s.Apply(event.Event{Kind: event.AttemptStarted, Time: t0.Add(time.Second), Attempt: 2, Session: session})
	s.Apply(event.Event{Kind: event.Progress, Time: t0.Add(4 * time.Minute), Attempt: 2, Session: session,
		Messages: 38, Occupancy: 126_000, Window: 200_000, CostUSD: 0.421, IdleDeadline: t0.Add(5 * time.Minute)})
	full := s.Line(t0.Add(4*time.Minute + 35*time.Second))
	if !strings.HasSuffix(full, " · hang in 25s") || !strings.Contains(full, "session ") {
		t.Fatalf("the full line: %q", full)
	}
	for _, width := range []int{Width(full) - 1, 60, 40, 30} {
		got := s.LineWithin(t0.Add(4*time.Minute+35*time.Second), width)
		if Width(got) > width && width >= Width("issue-123 · hang in 25s") {
			t.Errorf("width %d: %q is %d columns", width, got, Width(got))
		}
		if !strings.Contains(got, "hang in 25s") {
			t.Errorf("width %d: the countdown is cut: %q", width, got)
		}
		if strings.Contains(got, "session") {
			t.Errorf("width %d: the session id stayed while other parts went: %q", width, got)
		}
	}
	if got := s.LineWithin(t0.Add(4*time.Minute+35*time.Second), 30); !strings.HasPrefix(got, "issue-123") {
		t.Errorf("the issue went before the less useful parts: %q", got)
	}
	if got := s.LineWithin(t0.Add(4*time.Minute+35*time.Second), 0); got != full {
		t.Errorf("width 0 (any): %q, want the whole line", got)
	}
}

func ptr[T any](v T) *T { return &v }

// The status line says what the stream shows claude doing, and for how
// long; pings (lines that move no deadline) do not bring the countdown
// forward.
func TestStatusLineTellsThePhase(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	s := NewStatus("issue-123", 0)
	s.Apply(event.Event{Kind: event.RunStarted, Time: t0})
	s.Apply(event.Event{Kind: event.AttemptStarted, Time: t0, Attempt: 1, Session: session})
	writing := event.Event{Kind: event.Progress, Time: at(10 * time.Second), Attempt: 1, Session: session, Messages: 3,
		Phase: "tool_input", Doing: "while writing the input of a Write call", PhaseSince: at(10 * time.Second),
		Limit: 15 * time.Minute, IdleDeadline: at(10*time.Second + 15*time.Minute)}
	s.Apply(writing)
	// A ping two minutes in: a line, but the deadline stays.
	ping := writing
	ping.Time = at(2*time.Minute + 10*time.Second)
	s.Apply(ping)
	want := "issue-123 · attempt 1 · session 5fcbbccf · elapsed 2m20s · 3 msgs · writing the input of a Write call for 2m10s"
	if got := s.Line(at(2*time.Minute + 20*time.Second)); got != want {
		t.Errorf("writing a tool input:\n got %q\nwant %q", got, want)
	}
	if got := s.Line(at(11*time.Minute + 30*time.Second)); !strings.HasSuffix(got, " · hang in 3m40s") {
		t.Errorf("the last quarter of the tool input's 15m, pings or not: %q", got)
	}
	waiting := event.Event{Kind: event.Progress, Time: at(12 * time.Minute), Attempt: 1, Session: session, Messages: 4,
		Phase: "waiting", Doing: "while waiting for the API's reply", PhaseSince: at(12 * time.Minute), Limit: 3 * time.Minute,
		IdleDeadline: at(15 * time.Minute)}
	s.Apply(waiting)
	if got := s.Line(at(12*time.Minute + 2*time.Second)); strings.Contains(got, "waiting") {
		t.Errorf("a wait of 2s is not worth a word: %q", got)
	}
	if got := s.Line(at(12*time.Minute + 40*time.Second)); !strings.Contains(got, " · waiting for the API's reply for 40s") {
		t.Errorf("a wait of 40s: %q", got)
	}
}
