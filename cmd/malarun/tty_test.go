package main

import (
	"io"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/malarun/malarun/internal/testing/screen"
	"github.com/malarun/malarun/internal/testing/testchild"
)

const ttyCols = 120

// ttyWaitLimit bounds each wait on the terminal: generous, as the machine
// may be busy; a wait that holds ends as soon as the output comes.
const ttyWaitLimit = 30 * time.Second

// ttyRun is malarun running on a pseudo-terminal, its output fed to a
// screen as it comes.
type ttyRun struct {
	t      *testing.T
	p      *proc
	screen *screen.Screen
	raw    strings.Builder // everything the terminal received; read after done
	done   chan struct{}   // closed once the terminal is closed
}

// startTTY starts p with stdin, stdout and stderr on a new terminal of
// ttyCols columns.
func startTTY(t *testing.T, p *proc) *ttyRun { return startTTYCols(t, p, ttyCols) }

func startTTYCols(t *testing.T, p *proc, cols int) *ttyRun {
	t.Helper()
	r := &ttyRun{t: t, p: p, screen: screen.New(cols), done: make(chan struct{})}
	ptmx, err := pty.StartWithSize(p.cmd, &pty.Winsize{Rows: 40, Cols: uint16(cols)})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(r.done)
		defer ptmx.Close()
		// Reads end with EIO once malarun, the terminal's last user, exits.
		io.Copy(io.MultiWriter(r.screen, &r.raw), ptmx)
	}()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
		<-r.done
	})
	return r
}

// waitFor waits until cond holds for the screen: a handshake on the
// terminal's output, with a generous deadline, never a sleep.
func (r *ttyRun) waitFor(what string, cond func() bool) {
	r.t.Helper()
	deadline := time.After(ttyWaitLimit)
	for !cond() {
		select {
		case <-r.screen.Changed():
		case <-deadline:
			r.t.Fatalf("timed out waiting for %s; screen:\n%s", what, r.screen)
		}
	}
}

// wait waits for malarun to exit and the terminal to drain; the exit code.
func (r *ttyRun) wait() int {
	r.t.Helper()
	code := exitCode(r.t, r.p.cmd.Wait())
	select {
	case <-r.done:
	case <-time.After(ttyWaitLimit):
		r.t.Fatalf("the terminal stays open after malarun exited; screen:\n%s", r.screen)
	}
	return code
}

// checkClean fails if the screen shows anything a terminal could not
// interpret, or a status line left behind.
func (r *ttyRun) checkClean(statusPrefix string) {
	r.t.Helper()
	if errs := r.screen.Errors(); len(errs) > 0 {
		r.t.Errorf("output a terminal cannot show cleanly: %q", errs)
	}
	for _, l := range r.screen.Lines() {
		if strings.HasPrefix(l, statusPrefix) {
			r.t.Errorf("a status line is left on the screen: %q\n%s", l, r.screen)
		}
	}
	if _, col := r.screen.Cursor(); col != 0 {
		r.t.Errorf("the cursor is left at column %d, not at the start of a line:\n%s", col, r.screen)
	}
}

var timePrefix = regexp.MustCompile(`^\d\d:\d\d:\d\d `)

// lineWith returns the screen line ending with suffix after the time.
func lineWith(lines []string, want string) bool {
	for _, l := range lines {
		if timePrefix.MatchString(l) && strings.Contains(l, want) {
			return true
		}
	}
	return false
}

// TestStatusLineOnATerminal: a tool call that goes silent shows in the
// status line with the context occupancy and the idle countdown; the line
// is redrawn in place as the clock turns; an interruption leaves the event
// lines and the error, and no trace of the status line.
func TestStatusLineOnATerminal(t *testing.T) {
	t.Parallel()
	tool := `{"type":"assistant","message":{"model":"claude-opus-4-8","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"make test \u001b[31m"}}],"usage":{"input_tokens":100000,"output_tokens":1000,"cache_read_input_tokens":25000,"cache_creation_input_tokens":0}},"parent_tool_use_id":null,"session_id":"` + testchild.SessionID + `"}`
	p := newProc(t, "issue-tty", testchild.Hang,
		[]string{testchild.EnvTranscript + "=" + writeTranscript(t, testchild.InitLine, tool), testchild.EnvLines + "=2"},
		"--context-limit", "200000", "--tool-timeout", "20s", "--max-attempts", "1")
	r := startTTY(t, p)
	status := "issue-tty · attempt 1/1 · session "
	var session string
	r.waitFor("the status line of a running tool", func() bool {
		cur := r.screen.Current()
		m := regexp.MustCompile(`^issue-tty · attempt 1/1 · session ([0-9a-f]{8}) · elapsed \ds · 1 msg · running Bash · 63% of 200k · hang in \d+s$`).FindStringSubmatch(cur)
		if m != nil {
			session = m[1]
		}
		return m != nil
	})
	// The clock turns: the status line is redrawn in place, not repeated.
	r.waitFor("a redraw of the clock", func() bool {
		return regexp.MustCompile(`^issue-tty · attempt 1/1 · session [0-9a-f]{8} · elapsed [1-9]s · `).MatchString(r.screen.Current())
	})
	lines := r.screen.Lines()
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, status) {
			n++
		}
	}
	if n != 1 || !strings.HasPrefix(lines[len(lines)-1], status) {
		t.Errorf("want one status line, the last; screen:\n%s", r.screen)
	}
	for _, want := range []string{
		"issue-tty: run started; transcripts in " + p.stateDir,
		"attempt 1: new session " + session + " (claude pid ",
		// The tool's input as claude sent it: JSON, its escapes escaped.
		`attempt 1: Bash: {"command":"make test \u001b[31m"}`,
	} {
		if !lineWith(lines, want) {
			t.Errorf("no event line %q; screen:\n%s", want, r.screen)
		}
	}

	p.cmd.Process.Signal(syscall.SIGINT)
	if code := r.wait(); code != 130 {
		t.Errorf("exit %d, want 130", code)
	}
	r.checkClean(status)
	lines = r.screen.Lines()
	for _, want := range []string{"attempt 1: stopping claude's process tree (interrupted)", "issue-tty interrupted (exit 130) at attempt 1"} {
		if !lineWith(lines, want) {
			t.Errorf("no event line %q; screen:\n%s", want, r.screen)
		}
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "malarun: interrupted") {
		t.Errorf("last line %q, want the error; screen:\n%s", last, r.screen)
	}
	// Warnings are logged above the status line, in the console format.
	if !strings.Contains(r.screen.String(), "WRN stopping the run; a second signal kills it at once") {
		t.Errorf("the warning of the interruption is missing; screen:\n%s", r.screen)
	}
	// Info logs are replaced by the event lines.
	if strings.Contains(r.screen.String(), "INF") {
		t.Errorf("info logs on the terminal; screen:\n%s", r.screen)
	}
	// Every status line drawn replaced the previous one in place.
	if !strings.Contains(r.raw.String(), "\r\x1b[2K"+status) {
		t.Errorf("the status line is not drawn with \\r and erase-line")
	}
}

// TestResultOnATerminal: with stdout on the same terminal, a hang that is
// resumed ends with the event lines, then the result text, and no status
// line; --quiet shows the result alone.
func TestResultOnATerminal(t *testing.T) {
	t.Parallel()
	t.Run("status line", func(t *testing.T) {
		t.Parallel()
		p := scenarioHangResumed(t).proc(t, "issue-tty")
		r := startTTY(t, p)
		if code := r.wait(); code != 0 {
			t.Fatalf("exit %d; screen:\n%s", code, r.screen)
		}
		r.checkClean("issue-tty · ")
		lines := r.screen.Lines()
		for _, want := range []string{
			"attempt 1: Bash: {\"command\":\"sleep 1\"}",
			"attempt 1: hang detected: no output for 1s while Bash ran",
			"attempt 1: will resume session ",
			"attempt 2: resuming session ",
			"issue-tty succeeded (exit 0) at attempt 2, ",
		} {
			if !lineWith(lines, want) {
				t.Errorf("no event line %q; screen:\n%s", want, r.screen)
			}
		}
		if last := lines[len(lines)-1]; last != "All done." {
			t.Errorf("last line %q, want the result; screen:\n%s", last, r.screen)
		}
	})
	t.Run("quiet", func(t *testing.T) {
		t.Parallel()
		p := scenarioSuccess(t).proc(t, "issue-tty", "--quiet")
		r := startTTY(t, p)
		if code := r.wait(); code != 0 {
			t.Fatalf("exit %d; screen:\n%s", code, r.screen)
		}
		if got := r.raw.String(); got != "All done.\r\n" {
			t.Errorf("terminal got %q, want the result alone", got)
		}
	})
}

// A hang that is resumed is printed once on a terminal: its event line
// says it, and the warning the supervisor logs for it (which a log off a
// terminal keeps: TestNoTerminalNoEscapes) is left out; the stop's line
// names it as its reason, and no other line mentions it. --log-level debug
// shows every record, that warning too (docs/design.md §D15).
func TestAHangIsPrintedOnceOnATerminal(t *testing.T) {
	t.Parallel()
	const (
		line    = "attempt 1: hang detected: no output for 1s while Bash ran"
		stop    = "attempt 1: stopping claude's process tree (hang); SIGKILL after "
		warning = "WRN hang detected: no output within the limit"
	)
	for _, tc := range []struct {
		name   string
		args   []string
		logged bool
	}{{"default", nil, false}, {"debug", []string{"--log-level", "debug"}, true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := scenarioHangResumed(t).proc(t, "issue-once", tc.args...)
			r := startTTY(t, p)
			if code := r.wait(); code != 0 {
				t.Fatalf("exit %d; screen:\n%s", code, r.screen)
			}
			r.checkClean("issue-once · ")
			if !lineWith(r.screen.Lines(), "attempt 2: resuming session ") {
				t.Fatalf("the hang was not resumed; screen:\n%s", r.screen)
			}
			// Everything the terminal received, status line redraws
			// included: counted where no line wraps.
			raw := r.raw.String()
			want := 1
			if tc.logged {
				want = 2
			}
			if n := strings.Count(raw, "hang detected"); n != want {
				t.Errorf("the terminal got %q %d times, want %d; screen:\n%s", "hang detected", n, want, r.screen)
			}
			if got := strings.Contains(r.screen.String(), warning); got != tc.logged {
				t.Errorf("the warning %q shown: %v, want %v; screen:\n%s", warning, got, tc.logged, r.screen)
			}
			if tc.logged {
				return
			}
			// On the screen (its scrollback included): the hang's line and
			// the stop's, each once, and no other line mentions the hang.
			var said, stopped int
			for _, l := range r.screen.Lines() {
				switch {
				case timePrefix.MatchString(l) && strings.HasSuffix(l, line):
					said++
				case timePrefix.MatchString(l) && strings.Contains(l, stop):
					stopped++
				case strings.Contains(l, "hang"):
					t.Errorf("another line mentions the hang: %q", l)
				}
			}
			if said != 1 || stopped != 1 {
				t.Errorf("%d lines %q and %d lines %q, want one each; screen:\n%s", said, line, stopped, stop, r.screen)
			}
		})
	}
}

// A status line never wraps, even on a narrow terminal: the parts that
// matter least (the session id first) give way.
func TestStatusLineOnANarrowTerminal(t *testing.T) {
	t.Parallel()
	p := newProc(t, "issue-narrow", testchild.Hang, []string{testchild.EnvLines + "=1"}, "--idle-timeout", "20s", "--max-attempts", "1")
	r := startTTYCols(t, p, 30)
	// idle_timeout 20s: the countdown shows at once, and is what stays.
	r.waitFor("a status line that kept the countdown", func() bool {
		return strings.HasPrefix(r.screen.Current(), "issue-narrow · hang in ")
	})
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := r.wait(); code != 143 {
		t.Errorf("exit %d, want 143", code)
	}
	r.checkClean("issue-narrow · ")
	for _, l := range strings.Split(r.raw.String(), "\r\x1b[2K") {
		if strings.HasPrefix(l, "issue-narrow · ") && !strings.Contains(l, "\n") && len([]rune(l)) > 29 {
			t.Errorf("a status line of %d columns on a 30-column terminal: %q", len([]rune(l)), l)
		}
	}
}
