package e2e_test

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/testing/fakeapi"
)

// retryFlags keep retries quick: no backoff, and an idle limit short enough
// for a test yet long enough for the CLI to start on a loaded CI machine.
var retryFlags = []string{"--idle-timeout", "4s", "--kill-grace", "1s", "--backoff", "0s"}

// The API stalls once after some work; malarun resumes the same session.
func TestRealCLIStallThenResume(t *testing.T) {
	e := newEnvAlone(t, fakeapi.Bash("echo step-one"), fakeapi.Stall(), fakeapi.Text("Resumed and done."))
	r := e.run(retryFlags...)
	r.wantCode(t, 0)
	if r.stdout != "Resumed and done.\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	reqs := e.api.ConversationRequests()
	if len(reqs) != 3 {
		t.Fatalf("%d conversation requests, want 3", len(reqs))
	}
	resumed := reqs[2]
	if resumed.SessionID != reqs[0].SessionID {
		t.Errorf("resumed request in session %q, the first in %q", resumed.SessionID, reqs[0].SessionID)
	}
	all := resumed.AllText()
	for _, want := range []string{e.task, "Continue on issue issue-e2e."} {
		if !strings.Contains(all, want) {
			t.Errorf("resumed request lacks %q", want)
		}
	}
	if !resumed.HasToolUse("toolu_1") || !resumed.HasToolResult("toolu_1") {
		t.Errorf("resumed request lacks the completed tool call and its result")
	}
	if n := r.logCount("attempt started"); n != 2 {
		t.Errorf("%d attempts, want 2", n)
	}
	// From the stall to the resumed request, less the idle timeout: what
	// detection, killing the tree and starting the CLI again cost.
	stall := e.api.Stalls()[0].Time
	t.Logf("hang detected to resumed request: %v (stall to resumed request %v, idle_timeout 4s)",
		resumed.Time.Sub(stall)-4*time.Second, resumed.Time.Sub(stall))
}

// slowCommand runs for 30 s on every pinned CLI version: 2.1.330 refuses a
// standalone sleep (docs/design.md §F18), and python3 may be missing from a CI
// image; tail -f /dev/null waits without using the CPU.
const slowCommand = "timeout 30 tail -f /dev/null; echo finished"

// A tool still running when the tree is killed is dropped from the resumed
// history by the CLI (docs/design.md §F16): the resume prompt must name it.
func TestRealCLIResumePromptNamesInterruptedTool(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakeapi.Bash(slowCommand), fakeapi.Text("Checked, done."))
	// The idle limit only has to outlast the CLI's start on a loaded machine:
	// the tool limit is what this test is about.
	r := e.run("--idle-timeout", "20s", "--tool-timeout", "2s", "--kill-grace", "1s", "--backoff", "0s")
	r.wantCode(t, 0)
	reqs := e.api.ConversationRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d conversation requests, want 2", len(reqs))
	}
	last := reqs[1].LastUserText()
	for _, want := range []string{"Continue on issue issue-e2e.", "Bash", slowCommand, "Check their effects"} {
		if !strings.Contains(last, want) {
			t.Errorf("resume prompt lacks %q:\n%s", want, last)
		}
	}
	if !strings.Contains(r.stderr, "while Bash ran (tool_timeout)") {
		t.Errorf("the log does not say the tool timed out:\n%s", r.stderr)
	}
}

// The API stalls every time: fresh starts (no reply ever came, so there is
// nothing to resume) until max_idle_retries is spent.
func TestRealCLIStallsEveryTime(t *testing.T) {
	e := newEnvAlone(t, fakeapi.Repeat(fakeapi.Stall(), -1))
	r := e.run(retryFlags...)
	r.wantCode(t, 3)
	reqs := e.api.ConversationRequests()
	if len(reqs) != 3 {
		t.Fatalf("%d conversation requests, want 3 (max_idle_retries 2, plus the first)", len(reqs))
	}
	seen := map[string]bool{}
	for _, q := range reqs {
		seen[q.SessionID] = true
		if !strings.Contains(q.AllText(), e.task) {
			t.Errorf("request %d lacks the task", q.Seq)
		}
	}
	if len(seen) != 3 {
		t.Errorf("sessions %v: each fresh start should have its own", seen)
	}
	if !strings.Contains(r.stderr, "3 attempts in a row without progress") {
		t.Errorf("stderr does not say why:\n%s", r.stderr)
	}
}

// SIGKILL to the claude process alone, from outside, mid-run: a crash,
// resumed.
func TestRealCLIKilledFromOutsideIsResumed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakeapi.Bash("echo step-one"), fakeapi.Stall(), fakeapi.Text("Back again."))
	started := time.Now()
	cmd, stdout, stderr := e.start("--idle-timeout", "1m", "--backoff", "0s")
	e.waitStall(1)
	claude := childOf(t, cmd.Process.Pid)
	if err := syscall.Kill(claude, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := e.wait(cmd, stdout, stderr, started)
	r.wantCode(t, 0)
	if !strings.Contains(r.stderr, "was killed by signal 9") {
		t.Errorf("the crash is not reported:\n%s", r.stderr)
	}
	reqs := e.api.ConversationRequests()
	if len(reqs) != 3 || reqs[2].SessionID != reqs[0].SessionID || !strings.Contains(reqs[2].AllText(), "Continue on issue issue-e2e.") {
		t.Errorf("want 3 requests, the last resuming the first session")
	}
}

// 529 overloaded, then success: the CLI retries by itself, and its api_retry
// lines keep malarun from calling that a hang. The server asks for a 6s
// wait, longer than the 4s idle limit: only the api_retry line's delay
// keeps malarun from killing the CLI while it waits.
func TestRealCLIOverloadedThenSuccess(t *testing.T) {
	overloaded := fakeapi.HTTPError(529, "overloaded_error", "Overloaded", http.Header{"Retry-After": {"6"}})
	e := newEnvAlone(t, fakeapi.Repeat(overloaded, 2), fakeapi.Text("Made it."))
	r := e.run("--idle-timeout", "4s")
	r.wantCode(t, 0)
	if n := r.logCount("claude is retrying an API request"); n != 2 {
		t.Errorf("%d api_retry lines logged, want 2", n)
	}
	if n := r.logCount("attempt started"); n != 1 {
		t.Errorf("%d attempts: malarun interfered with the CLI's own retries", n)
	}
}

// CI cancels with SIGTERM: malarun stops the tree and exits 143.
func TestRealCLISigtermDuringStall(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakeapi.Stall())
	started := time.Now()
	cmd, stdout, stderr := e.start("--idle-timeout", "1m", "--shutdown-grace", "3s")
	e.waitStall(1)
	cmd.Process.Signal(syscall.SIGTERM)
	r := e.wait(cmd, stdout, stderr, started)
	r.wantCode(t, 143)
	if r.took > 30*time.Second {
		t.Errorf("took %v", r.took)
	}
}

// childOf finds the one child process of pid.
func childOf(t *testing.T, pid int) int {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	for _, d := range entries {
		c, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c))
		if err != nil {
			continue
		}
		f := bytes.Fields(st[bytes.LastIndexByte(st, ')')+1:])
		if len(f) > 1 && string(f[1]) == strconv.Itoa(pid) {
			return c
		}
	}
	t.Fatalf("malarun %d has no child", pid)
	return 0
}

// 429 until the CLI gives up: a temporary failure, exit 75, never retried
// by malarun. CLAUDE_CODE_MAX_RETRIES keeps the CLI's own retries short.
func TestRealCLIRateLimitIsTempFail(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakeapi.Repeat(fakeapi.RateLimited(1), -1))
	e.extraEnv = []string{"CLAUDE_CODE_MAX_RETRIES=1"}
	r := e.run("--idle-timeout", "10s")
	r.wantCode(t, 75)
	if !strings.Contains(r.stderr, "API status 429") {
		t.Errorf("stderr does not name the 429:\n%s", r.stderr)
	}
	if n := r.logCount("attempt started"); n != 1 {
		t.Errorf("%d attempts: a rate limit must not be retried", n)
	}
}
