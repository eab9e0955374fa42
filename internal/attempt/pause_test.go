package attempt

import (
	"testing"
	"time"

	"github.com/malarun/malarun/internal/stream"
)

// wakeWritten is a timer firing when the stream holds written bytes, all
// of them taken by the reader.
func wakeWritten(n int64) Input { return Input{Kind: Wake, Written: n, Consumed: n} }

// wakeBehind is a timer firing when the reader has taken consumed of the
// written bytes.
func wakeBehind(written, consumed int64) Input {
	return Input{Kind: Wake, Written: written, Consumed: consumed}
}

// lineAt is a line of the stream that ends at byte end (its newline after).
func lineAt(ev stream.Event, end int64) Input {
	ev.Bytes, ev.Offset = 99, end-100
	return line(ev)
}

// A malarun paused past idle_timeout wakes with its timer late and the
// CLI's lines written but not read: the growth postpones the hang by
// readCatchUp, the lines then push the deadline themselves (issue 31).
func TestPausedReaderIsNotAHang(t *testing.T) {
	cases := []machineCase{
		{name: "lines written while malarun was stopped are read before a hang", final: StopExited, steps: []step{
			{at: 1 * time.Second, in: lineAt(initLine, 100), wake: 11 * time.Second},
			// Stopped from 2 s to 40 s; the CLI wrote 5,000 bytes meanwhile.
			{at: 40 * time.Second, in: wakeWritten(5100), wake: 41 * time.Second},
			{at: 40*time.Second + time.Millisecond, in: lineAt(textLine, 200), wake: 50*time.Second + time.Millisecond},
			{at: 40*time.Second + 2*time.Millisecond, in: lineAt(okResult, 5100), wake: 45*time.Second + 2*time.Millisecond},
			{at: 41 * time.Second, in: streamEnd, stop: StopExited},
		}},
		{name: "a stream that has not grown since the last line is a hang", final: StopHang, steps: []step{
			{at: 1 * time.Second, in: lineAt(initLine, 100), wake: 11 * time.Second},
			{at: 11 * time.Second, in: wakeWritten(100), stop: StopHang},
		}},
		{name: "half a line then silence is a hang one catch-up later", final: StopHang, steps: []step{
			{at: 1 * time.Second, in: lineAt(initLine, 100), wake: 11 * time.Second},
			{at: 11 * time.Second, in: wakeWritten(150), wake: 12 * time.Second},
			{at: 12 * time.Second, in: wakeWritten(150), stop: StopHang},
		}},
		{name: "a line still growing is a hang one catch-up later, however it grows", final: StopHang, steps: []step{
			{at: 1 * time.Second, in: lineAt(initLine, 100), wake: 11 * time.Second},
			{at: 11 * time.Second, in: wakeWritten(1 << 20), wake: 12 * time.Second},
			{at: 12 * time.Second, in: wakeWritten(2 << 20), stop: StopHang},
		}},
		{name: "a reader behind and moving is waited for, up to maxCatchUp", final: StopHang, steps: []step{
			{at: 1 * time.Second, in: lineAt(initLine, 100), wake: 11 * time.Second},
			{at: 11 * time.Second, in: wakeBehind(1<<30, 100), wake: 12 * time.Second},
			{at: 12 * time.Second, in: wakeBehind(1<<30, 1<<28), wake: 13 * time.Second},
			// Not moving since the last look: not catching up.
			{at: 13 * time.Second, in: wakeBehind(1<<30, 1<<28), stop: StopHang},
		}},
		{name: "a flood the reader never catches up with ends at maxCatchUp", final: StopHang, steps: []step{
			{at: 1 * time.Second, in: lineAt(initLine, 100), wake: 11 * time.Second},
			{at: 11 * time.Second, in: wakeBehind(1<<30, 100), wake: 12 * time.Second},
			{at: 12 * time.Second, in: wakeBehind(2<<30, 1<<30), wake: 13 * time.Second},
			{at: 11*time.Second + maxCatchUp - time.Millisecond, in: wakeBehind(3<<30, 2<<30), wake: 12*time.Second + maxCatchUp - time.Millisecond},
			{at: 12*time.Second + maxCatchUp - time.Millisecond, in: wakeBehind(4<<30, 3<<30), stop: StopHang},
		}},
		{name: "pings written while malarun looked away end the catch-up: the silence was not broken", final: StopHang, steps: []step{
			{at: 1 * time.Second, in: lineAt(initLine, 100), wake: 11 * time.Second},
			{at: 11 * time.Second, in: wakeBehind(300, 100), wake: 12 * time.Second},
			{at: 11*time.Second + time.Millisecond, in: lineAt(lPing, 200), wake: 12 * time.Second},
			{at: 11*time.Second + 2*time.Millisecond, in: lineAt(lPing, 300), wake: 11 * time.Second},
			// Each ping ends as the next begins: written keeps growing, but
			// the reader has it all.
			{at: 11*time.Second + 3*time.Millisecond, in: wakeWritten(350), stop: StopHang},
		}},
		{name: "unknown size (0) changes nothing", final: StopHang, steps: []step{
			{at: 1 * time.Second, in: lineAt(initLine, 100), wake: 11 * time.Second},
			{at: 11 * time.Second, in: wakeWritten(0), stop: StopHang},
		}},
		{name: "growth does not postpone session_timeout", lim: Limits{Idle: time.Hour, Tool: time.Hour, Linger: time.Second, Deadline: t0.Add(30 * time.Second)},
			final: StopSessionTimeout, steps: []step{
				{at: 1 * time.Second, in: lineAt(initLine, 100)},
				{at: 30 * time.Second, in: wakeWritten(9000), stop: StopSessionTimeout},
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runCase(t, c) })
	}
}

// Before its first line the CLI may be waiting for its MCP servers (30 s
// on 2.1.330, §F28): at least firstLineWait of silence is allowed then,
// whatever idle_timeout says; after the first line, idle_timeout again.
func TestFirstLineWait(t *testing.T) {
	cases := []machineCase{
		{name: "a short idle_timeout waits firstLineWait for the first line", final: StopExited, steps: []step{
			{at: 0, in: wakeWritten(0), wake: firstLineWait},
			{at: 30 * time.Second, in: lineAt(initLine, 100), wake: 40 * time.Second},
			{at: 31 * time.Second, in: lineAt(okResult, 200), wake: 36 * time.Second},
			{at: 32 * time.Second, in: streamEnd, stop: StopExited},
		}},
		{name: "a SessionStart hook before init does not end the wait for the first line", final: StopExited, steps: []step{
			{at: 1 * time.Second, in: line(hookStarted("h1", "SessionStart:startup")), wake: 61 * time.Second},
			{at: 2 * time.Second, in: line(hookResponse("h1", "SessionStart:startup", "success", 0)), wake: 62 * time.Second},
			{at: 32 * time.Second, in: lineAt(initLine, 100), wake: 42 * time.Second},
			{at: 33 * time.Second, in: streamEnd, stop: StopExited},
		}},
		{name: "no first line within firstLineWait is a hang", final: StopHang, steps: []step{
			{at: firstLineWait, in: wakeWritten(0), stop: StopHang},
		}},
		{name: "an idle_timeout longer than firstLineWait is kept", lim: Limits{Idle: 3 * time.Minute, Tool: time.Hour, Linger: time.Second},
			final: StopHang, steps: []step{
				{at: firstLineWait, in: wakeWritten(0), wake: 3 * time.Minute},
				{at: 3 * time.Minute, in: wakeWritten(0), stop: StopHang},
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runCase(t, c) })
	}
}
