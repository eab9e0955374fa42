package attempt

import (
	"testing"
	"time"

	"github.com/malarun/malarun/internal/stream"
)

// palette is what a fuzz byte picks: every kind of input the machine acts on.
var palette = []Input{
	line(initLine), line(statusLine), line(textLine), line(okResult), line(errResult), line(authRetry), line(shutdown),
	line(toolCall("t1", "Bash")), line(toolResult("t1")), line(bgCall("t2", "make")), line(toolResult("t2")),
	line(taskStarted("b1", "t2")), line(taskNotification("b1", "completed")), line(snapshot("b1", "b2")), line(snapshot()),
	line(stream.Event{Type: "system", Subtype: "task_updated", TaskID: "b2", Status: "killed"}),
	{Kind: Line, Event: toolResult("t1"), Pressure: true},
	streamEnd, wakeUp, interrupt,
	line(unknownRetry), line(certResult), line(streamStart), probed(notFound), probed(reached),
	// Sub-agents (§D33), and lines that are not progress (§D34).
	line(lAgentCall), line(lAgentFg), line(lAgentBg), line(lAgentLaunched), line(lSubPrompt), line(lSubProgress),
	line(lSubBash), line(lSubBashDone), line(lSubAnswer), line(lAgentDone), line(lAgentResult),
	line(lPing), line(lJunk), line(lMsgStart), line(lMsgStop), line(lRequesting), {Kind: Wake, Written: 1 << 20, Consumed: 1 << 19},
}

// FuzzMachine drives the machine with random inputs at random times and
// checks what must hold whatever the CLI does: a stop always has a reason,
// comes at most once, and the ending once decided never changes; once the
// stream has ended the attempt has exactly one final outcome.
func FuzzMachine(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 18, 17})
	f.Add([]byte{9, 11, 10, 2, 3, 18, 12, 14, 0, 2, 3, 17})
	f.Add([]byte{7, 16, 8, 18, 19, 17})
	f.Add([]byte{0, 1, 26, 1, 35, 1, 18, 0}) // a foreground agent whose call was never seen returns
	f.Fuzz(func(t *testing.T, script []byte) {
		lim := Limits{Idle: 10 * time.Second, Tool: 60 * time.Second, Background: 5 * time.Minute, Linger: 5 * time.Second, Deadline: t0.Add(time.Hour),
			FirstByte: 5 * time.Second, Subagent: 20 * time.Second, PartialMessages: true}
		s := New(lim, t0)
		now := t0
		stops := 0
		ended := false
		for i := 0; i+1 < len(script); i += 2 {
			in := palette[int(script[i])%len(palette)]
			now = now.Add(time.Duration(script[i+1]) * time.Second)
			if in.Kind == Wake {
				if w := s.Wake(); !w.IsZero() && w.After(now) {
					now = w
				}
			}
			before := s.StopReason()
			eff := s.Step(in, now)
			if eff.Stop {
				stops++
				if s.StopReason() == StopNone {
					t.Fatalf("step %d: a stop without a reason", i/2)
				}
			}
			if stops > 1 {
				t.Fatalf("step %d: a second stop", i/2)
			}
			if before != StopNone && s.StopReason() != before {
				t.Fatalf("step %d: ending changed from %v to %v", i/2, before, s.StopReason())
			}
			if s.StopReason() != StopNone && !s.Wake().IsZero() {
				t.Fatalf("step %d: a timer after the stop", i/2)
			}
			if s.StopReason() == StopNone && s.Wake().IsZero() {
				t.Fatalf("step %d: nothing bounds a running attempt (the session deadline is set)", i/2)
			}
			if in.Kind == StreamEnd {
				ended = true
			}
			if ended && (s.StopReason() == StopNone || s.FinalStop() == StopNone) {
				t.Fatalf("step %d: the stream ended without an outcome", i/2)
			}
		}
	})
}
