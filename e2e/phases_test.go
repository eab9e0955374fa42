package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/testing/fakeapi"
)

// Liveness by phase (issue 38, docs/design.md §D30) against the real CLI,
// with the allowances scaled down so each test takes seconds; the same
// cases at malarun's defaults, minutes each, are phases_long_test.go.

// sideEffect is a Bash call that appends a line to a file in the working
// folder: how many lines it holds is how many times the call ran.
func sideEffect(e *env) (step fakeapi.Step, ran func() int) {
	path := filepath.Join(e.work, "ran.txt")
	return fakeapi.Bash("echo ran >> " + path), func() int {
		b, _ := os.ReadFile(path)
		return strings.Count(string(b), "ran\n")
	}
}

// A tool call whose input takes longer to write than idle_timeout (the
// API sends it whole, once written: §F32) is healthy: it is not killed,
// it runs once, and the run succeeds on its first attempt.
func TestRealCLILongToolInputRunsOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	call, ran := sideEffect(e)
	e.api.Enqueue(call.WithPace(fakeapi.Pace{InputAfter: 12 * time.Second, Ping: 2 * time.Second}), fakeapi.Text("Written."))
	r := e.run("--idle-timeout", "6s", "--tool-input-timeout", "40s", "--max-attempts", "1")
	r.wantCode(t, 0)
	if n := ran(); n != 1 {
		t.Errorf("the call ran %d times, want once", n)
	}
	if n := r.logCount("attempt started"); n != 1 || strings.Contains(r.stderr, "hang detected") {
		t.Errorf("%d attempts, want 1 and no hang; stderr:\n%s", n, r.stderr)
	}
}

// A stream that stops in the middle of a text block (the API holds it
// open, pinging) is a hang after text_timeout, whatever idle_timeout says:
// the reason names the phase, the session (which has talked: a tool call
// came first) is resumed, and the resume prompt tells the model its reply
// was cut off.
func TestRealCLIMidTextStallIsFoundByTextTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakeapi.Bash("echo looked"), fakeapi.Text("The answer is that the build needs a clean cache.").WithPace(fakeapi.Pace{StallAfter: 1, Ping: time.Second}),
		fakeapi.Text("Done after the stall."))
	r := e.run("--idle-timeout", "1m", "--text-timeout", "3s", "--kill-grace", "1s", "--backoff", "0s")
	r.wantCode(t, 0)
	if !strings.Contains(r.stderr, "while writing text (text_timeout)") {
		t.Errorf("the hang does not name its phase:\n%s", r.stderr)
	}
	stalls := e.api.Stalls()
	reqs := e.api.ConversationRequests()
	if len(stalls) != 1 || len(reqs) != 3 {
		t.Fatalf("%d stalls and %d requests, want 1 and 3", len(stalls), len(reqs))
	}
	if found := reqs[2].Time.Sub(stalls[0].Time); found > 20*time.Second {
		t.Errorf("the resumed request came %v after the stall, for a 3s text_timeout", found)
	}
	if !strings.Contains(reqs[2].LastUserText(), "cut off while you were writing text") {
		t.Errorf("the resume prompt does not say the reply was cut off:\n%s", reqs[2].LastUserText())
	}
}

// Gaps in a thinking block longer than idle_timeout are healthy within
// thinking_timeout.
func TestRealCLIThinkingGapsAreNotAHang(t *testing.T) {
	t.Parallel()
	thought := strings.Repeat("Consider the repository's layout, then the failing test. ", 150) // 3 chunks: 2 gaps
	e := newEnv(t, fakeapi.Combine(fakeapi.Thinking(thought), fakeapi.Text("Thought it through.")).
		WithPace(fakeapi.Pace{ThinkingGap: 7 * time.Second, Ping: 2 * time.Second}))
	r := e.run("--idle-timeout", "4s", "--thinking-timeout", "30s", "--max-attempts", "1")
	r.wantCode(t, 0)
	if r.stdout != "Thought it through.\n" || strings.Contains(r.stderr, "hang detected") {
		t.Errorf("stdout %q; stderr:\n%s", r.stdout, r.stderr)
	}
}

// A request that gets no event at all is a hang after idle_timeout,
// named as a wait for the API's reply; the run goes on.
func TestRealCLIStallBeforeTheFirstEvent(t *testing.T) {
	e := newEnvAlone(t, fakeapi.Text("never").WithPace(fakeapi.Pace{FirstEvent: time.Hour}), fakeapi.Text("Answered the second time."))
	r := e.run("--idle-timeout", "5s", "--kill-grace", "1s", "--backoff", "0s")
	r.wantCode(t, 0)
	if !strings.Contains(r.stderr, "no output for 5s while waiting for the API's reply (idle_timeout)") {
		t.Errorf("the hang does not name its phase:\n%s", r.stderr)
	}
}

// A model that writes the same long tool input on every attempt: the
// first attempt is killed in that phase, the next gets twice the room
// there and finishes; the call runs once (no kill loop, §D30).
func TestRealCLIToolInputGetsRoomAfterAHang(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	call, ran := sideEffect(e)
	slow := call.WithPace(fakeapi.Pace{InputAfter: 9 * time.Second, Ping: 2 * time.Second})
	e.api.Enqueue(fakeapi.Repeat(slow, 2), fakeapi.Text("Written at last."))
	r := e.run("--idle-timeout", "20s", "--tool-input-timeout", "6s", "--kill-grace", "1s", "--backoff", "0s")
	r.wantCode(t, 0)
	if n := r.logCount("attempt started"); n != 2 {
		t.Errorf("%d attempts, want 2", n)
	}
	for _, want := range []string{"while writing the input of a Bash call (tool_input_timeout)", "the next attempts get more room in the phase the hang was in"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if n := ran(); n != 1 {
		t.Errorf("the call ran %d times, want once", n)
	}
}

// malarun turns the CLI's own stream watchdogs off (§F33): the CLI is
// started with them off, and a value the user gives wins, with a warning.
func TestRealCLIGetsTheWatchdogsOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakeapi.Bash("env | grep -E '^(CLAUDE_ENABLE_(STREAM|BYTE)_WATCHDOG|API_FORCE_IDLE_TIMEOUT)=' | sort"), fakeapi.Text("Listed."))
	e.extraEnv = append(e.extraEnv, "CLAUDE_ENABLE_BYTE_WATCHDOG=1")
	r := e.run()
	r.wantCode(t, 0)
	reqs := e.api.ConversationRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	got := reqs[1].AllText()
	for _, want := range []string{"API_FORCE_IDLE_TIMEOUT=0", "CLAUDE_ENABLE_BYTE_WATCHDOG=1", "CLAUDE_ENABLE_STREAM_WATCHDOG=0"} {
		if !strings.Contains(got, want) {
			t.Errorf("claude's tool saw no %s:\n%s", want, got)
		}
	}
	if !strings.Contains(r.stderr, "CLAUDE_ENABLE_BYTE_WATCHDOG is on in claude's environment") {
		t.Errorf("no warning about the user's byte watchdog:\n%s", r.stderr)
	}
}
