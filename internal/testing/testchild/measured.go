package testchild

import (
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/malarun/malarun/internal/testing/synth"
)

// Measured behaviours, for the benchmark harness (tools/bench). Each prints
// with one write(2) per line, as the CLI does, and those that end write a
// Report (EnvReport) just before they exit.
const (
	// ReplaySession prints the transcript with every session_id set to the
	// session the flags name (a recording's own id otherwise shows through);
	// exit 0.
	ReplaySession = "replay-session"
	// Partial prints a generated run of about EnvLines lines (default
	// 200,000) with partial messages, EnvPace between lines; exit 0.
	Partial = "partial"
	// Image prints init, one user line holding an image of EnvSize bytes
	// of base64 (default 100 MiB), a text and a result; exit 0.
	Image = "image"
	// TimedHang prints init and three lines (or EnvTranscript's lines),
	// then nothing until SIGTERM but a ping line every EnvPing (if set: a
	// line that is no progress); it reports when its last line before the
	// pings was written and when SIGTERM came, then dies of that signal.
	TimedHang = "timed-hang"
	// SilentText prints init and a text, creates EnvMarker (holding the
	// Monotonic time) as its silence begins, says nothing for EnvSilence,
	// then prints a text and a result; exit 0.
	SilentText = "silent-text"
	// ObeyTree is Grandchild for a tree that obeys SIGTERM: it starts a
	// setsid grandchild (SleeperObeys), prints init and GrandchildLine,
	// and blocks. No report: only a signal ends it.
	ObeyTree = "obey-tree"
	// SleeperObeys is ObeyTree's grandchild: it says "ready" and blocks.
	SleeperObeys = "sleeper-obeys"
)

// Environment variables of the measured behaviours (with EnvLines, EnvSize,
// EnvSilence and EnvTranscript).
const (
	EnvPace   = "MALARUN_FAKE_PACE"   // Partial: pause between lines (a duration)
	EnvMarker = "MALARUN_FAKE_MARKER" // SilentText: file created when the silence begins
	EnvPing   = "MALARUN_FAKE_PING"   // TimedHang: a ping stream_event this often while it hangs
)

// runMeasured runs behaviour if it is one of the measured ones; ok is
// false otherwise.
func runMeasured(behaviour string) (code int, ok bool) {
	session := firstNonEmpty(firstNonEmpty(argAfter("--session-id"), argAfter("--resume")), SessionID)
	emit := synth.Newline(os.Stdout)
	var rep Report
	switch behaviour {
	case ReplaySession:
		field := regexp.MustCompile(`"session_id":"[^"]*"`)
		for _, l := range transcript() {
			emit(field.ReplaceAllLiteralString(l, `"session_id":"`+session+`"`))
		}
	case Partial:
		pace := envDuration(EnvPace)
		synth.Partial(func(line string) error {
			err := emit(line)
			if pace > 0 {
				time.Sleep(pace)
			}
			return err
		}, session, envInt(EnvLines, 200000))
	case Image:
		emit(synth.Init(session))
		synth.ImageLine(os.Stdout, session, envInt(EnvSize, 100<<20))
		emit(synth.Text(session, "msg_1", synth.ResultText))
		emit(synth.Result(session, synth.ResultText))
	case TimedHang:
		var lines []string
		if os.Getenv(EnvTranscript) != "" {
			field := regexp.MustCompile(`"session_id":"[^"]*"`)
			for _, l := range transcript() {
				lines = append(lines, field.ReplaceAllLiteralString(l, `"session_id":"`+session+`"`))
			}
		}
		timedHang(emit, session, lines, envDuration(EnvPing))
	case SilentText:
		emit(synth.Init(session))
		emit(synth.Text(session, "msg_1", "Thinking."))
		if err := os.WriteFile(os.Getenv(EnvMarker), []byte(strconv.FormatInt(Monotonic(), 10)), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "testchild:", err)
			return 98, true
		}
		time.Sleep(envDuration(EnvSilence))
		emit(synth.Text(session, "msg_2", synth.ResultText))
		emit(synth.Result(session, synth.ResultText))
	case ObeyTree:
		pid := startSetsid(SleeperObeys)
		emit(strings.ReplaceAll(InitLine, SessionID, session))
		emit(strings.ReplaceAll(GrandchildLine(pid), SessionID, session))
		block()
	case SleeperObeys:
		fmt.Println("ready")
		block()
	default:
		return 0, false
	}
	writeReport(rep)
	return rep.ExitCode, true
}

// timedHang never returns: it ends by the SIGTERM it waits for.
func timedHang(emit synth.LineWriter, session string, lines []string, ping time.Duration) {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	if lines == nil {
		emit(synth.Init(session))
		for i := 1; i <= 3; i++ {
			time.Sleep(20 * time.Millisecond) // a run that talks a little before it hangs
			emit(synth.Text(session, fmt.Sprintf("msg_%d", i), "Working on it."))
		}
	}
	for _, l := range lines {
		emit(l)
	}
	rep := Report{LastLineNs: Monotonic()}
	if ping > 0 {
		tick := time.NewTicker(ping)
		defer tick.Stop()
	pinging:
		for {
			select {
			case <-tick.C:
				emit(`{"type":"stream_event","event":{"type":"ping"},"session_id":"` + session + `","parent_tool_use_id":null}`)
			case <-term:
				break pinging
			}
		}
	} else {
		<-term
	}
	rep.TermNs = Monotonic()
	rep.ExitCode = 143
	writeReport(rep)
	// Die of the signal, as the CLI would, so the parent sees it.
	signal.Reset(syscall.SIGTERM)
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	block()
}
