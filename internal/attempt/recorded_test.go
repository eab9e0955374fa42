package attempt

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/stream"
)

// defaults are malarun's default allowances (supervisor.DefaultConfig).
var defaults = Limits{Idle: 3 * time.Minute, Tool: 15 * time.Minute, Text: time.Minute, Thinking: 3 * time.Minute,
	ToolInput: 15 * time.Minute, FirstByte: 45 * time.Second, Subagent: 90 * time.Second, PartialMessages: true,
	Background: 15 * time.Minute, Linger: 5 * time.Second}

// replayTimed feeds a timed recording (testdata/transcripts/phases: "SECONDS
// JSON" per line) to the machine at the recorded times, waking it whenever
// its timer would have fired first, as the driver does. It returns the
// stop and when it came (from the CLI's start), and the phase of a hang.
func replayTimed(t *testing.T, path string, lim Limits) (StopReason, time.Duration, Doing) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := New(lim, t0)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		at, line, ok := strings.Cut(sc.Text(), " ")
		secs, err := strconv.ParseFloat(at, 64)
		if !ok || err != nil || strings.HasPrefix(line, "#") {
			continue
		}
		now := t0.Add(time.Duration(secs * float64(time.Second)))
		if w := m.Wake(); !w.IsZero() && !now.Before(w) {
			if m.Step(Input{Kind: Wake}, w); m.StopReason() != StopNone {
				return m.StopReason(), w.Sub(t0), m.HangPhase()
			}
		}
		ev, err := stream.NewDecoder(strings.NewReader(line + "\n")).Next()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		m.Step(Input{Kind: Line, Event: ev}, now)
	}
	return m.StopReason(), 0, Doing{}
}

// The recorded streams of both pinned CLIs at malarun's defaults: healthy
// silences pass, a stream that died mid-text is found a minute after its
// last delta though 2.1.332 keeps printing pings (§F32, §D30).
func TestRecordedStreams(t *testing.T) {
	cases := []struct {
		version, name string
		stop          StopReason
		at            time.Duration // when the hang is found, from the start
		phase         Phase
	}{
		{"2.1.197", "tool-input-40s", StopNone, 0, 0},
		{"2.1.332", "tool-input-40s", StopNone, 0, 0},
		{"2.1.197", "thinking-gap-20s", StopNone, 0, 0},
		{"2.1.332", "thinking-gap-20s", StopNone, 0, 0},
		{"2.1.197", "first-event-30s", StopNone, 0, 0},
		{"2.1.332", "first-event-30s", StopNone, 0, 0},
		{"2.1.197", "text-gap-20s", StopNone, 0, 0},
		{"2.1.332", "text-gap-20s", StopNone, 0, 0},
		{"2.1.197", "stall-mid-text", StopHang, 2742*time.Millisecond + time.Minute, PhaseText},
		{"2.1.332", "stall-mid-text", StopHang, 2354*time.Millisecond + time.Minute, PhaseText},
		{"2.1.332", "tool-input-310s", StopNone, 0, 0},
		// Abandoned by the CLI's own watchdog, then its fallback's: malarun
		// turns them off; here they were on, and the second request the
		// CLI retried is a silence of its retry wait.
		{"2.1.197", "tool-input-310s", StopHang, 601105*time.Millisecond + 45*time.Second + 603*time.Millisecond, PhaseRetry},
	}
	for _, c := range cases {
		t.Run(c.version+"/"+c.name, func(t *testing.T) {
			stop, at, doing := replayTimed(t, filepath.Join("..", "..", "testdata", "transcripts", "phases", c.version, c.name+".timed"), defaults)
			if stop != c.stop {
				t.Fatalf("stop %v at %v (%v), want %v", stop, at, doing.Label(), c.stop)
			}
			if c.stop == StopHang && (doing.Phase != c.phase || (at-c.at).Abs() > 2*time.Millisecond) {
				t.Errorf("hang at %v %s, want at %v in %v", at, doing.Label(), c.at, c.phase)
			}
		})
	}
}

// The recorded sub-agents of both pinned CLIs at malarun's defaults (§F35,
// §D33): a healthy agent passes, in the foreground and in the background;
// one whose stream died is ended by the CLI itself (malarun gives it
// subagent_timeout), which malarun leaves to it; a request never answered
// is found at first_byte_timeout from its request.
func TestRecordedSubagentStreams(t *testing.T) {
	cases := []struct {
		version, name string
		stop          StopReason
		at            time.Duration
		phase         Phase
	}{
		{"2.1.197", "subagent", StopNone, 0, 0},
		{"2.1.332", "subagent", StopNone, 0, 0},
		{"2.1.197", "subagent-background", StopNone, 0, 0},
		{"2.1.332", "subagent-foreground", StopNone, 0, 0},
		{"2.1.197", "subagent-stall-30s", StopNone, 0, 0},
		{"2.1.332", "subagent-stall-30s", StopNone, 0, 0},
		{"2.1.332", "subagent-stall-600s", StopNone, 0, 0},
		{"2.1.332", "subagent-stall-foreground-50s", StopNone, 0, 0},
		{"2.1.332", "subagent-retry-529-foreground", StopNone, 0, 0},
		{"2.1.197", "subagent-bash-timeout", StopNone, 0, 0},
		{"2.1.332", "subagent-bash-timeout", StopNone, 0, 0},
		{"2.1.197", "no-answer-api-timeout-45s", StopHang, 2464*time.Millisecond + 45*time.Second, PhaseWaiting},
		{"2.1.332", "no-answer-api-timeout-45s", StopHang, 1415*time.Millisecond + 45*time.Second, PhaseWaiting},
	}
	for _, c := range cases {
		t.Run(c.version+"/"+c.name, func(t *testing.T) {
			stop, at, doing := replayTimed(t, filepath.Join("..", "..", "testdata", "transcripts", "subagents", c.version, c.name+".timed"), defaults)
			if stop != c.stop {
				t.Fatalf("stop %v at %v (%v), want %v", stop, at, doing.Label(), c.stop)
			}
			if c.stop == StopHang && (doing.Phase != c.phase || (at-c.at).Abs() > 2*time.Millisecond) {
				t.Errorf("hang at %v %s, want at %v in %v", at, doing.Label(), c.at, c.phase)
			}
		})
	}
}
