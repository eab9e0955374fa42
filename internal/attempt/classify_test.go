package attempt

import (
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/endpoint"
)

func TestUnreachableReason(t *testing.T) {
	f, _ := endpoint.Known("ECONNREFUSED")
	got := unreachableReason("http://127.0.0.1:1", f)
	if want := "cannot reach the API at http://127.0.0.1:1: connection refused (ECONNREFUSED); check ANTHROPIC_BASE_URL and the network"; got != want {
		t.Errorf("reason %q, want %q", got, want)
	}
	cli := endpoint.FromResultText("API Error: Unable to connect to API (ConnectionRefused)")
	if got := unreachableReason("http://h", cli); !strings.Contains(got, "(claude's own error)") {
		t.Errorf("a cause from claude's text does not say so: %q", got)
	}
}

// Before its first line, a CLI killed by a signal malarun did not send is a
// crash (retried: nothing ran); one that exits on its own is final.
func TestBeforeTheFirstLine(t *testing.T) {
	cases := []struct {
		exit   Exit
		stop   bool // malarun stopped it for a hang first
		ending Ending
		reason string
	}{
		{killedBy(syscall.SIGKILL), false, Crash, "claude was killed by signal 9 (killed) before its first line (a signal malarun did not send)"},
		{killedBy(syscall.SIGSEGV), false, Crash, "killed by signal 11"},
		{Exit{Code: 1}, false, EarlyExit, "claude exited with code 1 before its first line"},
		{Exit{Code: 137}, false, EarlyExit, "exited with code 137"},
		{killedBy(syscall.SIGKILL), true, Hang, "no output for 1m0s before claude's first line (idle_timeout, at least the CLI's MCP start-up wait)"},
	}
	for _, c := range cases {
		m := New(limits, t0)
		if c.stop {
			m.Step(wakeUp, t0.Add(firstLineWait))
		}
		m.Step(streamEnd, t0.Add(firstLineWait+time.Second))
		ending, reason := Classify(Ended{Machine: m, Log: NewLog("s1"), Exit: c.exit})
		if ending != c.ending || !strings.Contains(reason, c.reason) {
			t.Errorf("%+v (stopped %v): %v %q, want %v with %q", c.exit, c.stop, ending, reason, c.ending, c.reason)
		}
	}
}

// Usage-limit texts are recognised as the regular expression they
// replaced recognised them, for ASCII text (it also folded a few non-ASCII
// letters, such as the Kelvin sign, which no CLI prints here).
func FuzzUsageLimitTextAsTheRegexpDid(f *testing.F) {
	for _, s := range []string{"Claude AI usage limit reached|1749924000", "You've HIT YOUR LIMIT · resets 2am", "usage limit", "hit your limi", ""} {
		f.Add(s)
	}
	re := regexp.MustCompile(`(?i)usage limit reached|hit your limit`)
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range []byte(s) {
			if c >= 0x80 {
				return
			}
		}
		if got, want := isUsageLimitText(s), re.MatchString(s); got != want {
			t.Errorf("isUsageLimitText(%q) = %v, the regexp said %v", s, got, want)
		}
	})
}

// killedBy is the Exit of a process sig killed, as the supervisor reads it
// from the process's status.
func killedBy(sig syscall.Signal) Exit {
	return Exit{Code: -1, Signal: int(sig), SignalName: sig.String()}
}
