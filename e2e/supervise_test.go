package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/testing/fakeapi"
)

func TestRealCLIPlainSuccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakeapi.Text("Hello from the fake API."))
	r := e.run()
	r.wantCode(t, 0)
	if r.stdout != "Hello from the fake API.\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	reqs := e.api.ConversationRequests()
	if len(reqs) != 1 || !strings.Contains(reqs[0].AllText(), e.task) {
		t.Fatalf("%d conversation requests; the first should carry the task", len(reqs))
	}
	if reqs[0].SessionID == "" || !strings.Contains(r.stderr, reqs[0].SessionID) {
		t.Errorf("malarun's log does not name the session %q the API saw", reqs[0].SessionID)
	}
	if strings.Contains(r.stderr, "sk-ant-e2e-dummy") {
		t.Errorf("the API key leaked into malarun's log")
	}
}

func TestRealCLIStallIsKilledAsHang(t *testing.T) {
	e := newEnvAlone(t, fakeapi.Stall())
	r := e.run("--idle-timeout", "4s", "--kill-grace", "2s", "--max-attempts", "1")
	r.wantCode(t, 3)
	if !strings.Contains(r.stderr, "no output for 4s in a reply, between its parts (idle_timeout)") {
		t.Errorf("stderr does not say why:\n%s", r.stderr)
	}
	if n := len(e.api.Stalls()); n != 1 {
		t.Errorf("%d stalls, want 1", n)
	}
	if r.took > 20*time.Second {
		t.Errorf("took %v for a 4s idle timeout", r.took)
	}
}

// The Bash tool starts a setsid process that ignores SIGTERM, then the API
// stalls: killing the CLI's process group is not enough (docs/design.md §F9), and
// malarun must still leave nothing behind.
func TestRealCLISetsidToolProcessIsKilled(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "sleeper.pid")
	e := newEnvAlone(t,
		fakeapi.Bash(`setsid sh -c 'echo $$ > `+pidFile+`; trap "" TERM; sleep 300' >/dev/null 2>&1 &`),
		fakeapi.Stall(),
	)
	r := e.run("--idle-timeout", "3s", "--kill-grace", "500ms", "--max-attempts", "1")
	r.wantCode(t, 3)
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the tool never ran: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid == 0 || proc.Alive(pid, 0) {
		t.Errorf("the setsid tool process %d is still alive", pid)
	}
	reqs := e.api.ConversationRequests()
	if len(reqs) != 2 || !reqs[1].HasToolUse("toolu_1") || !reqs[1].HasToolResult("toolu_1") {
		t.Errorf("want 2 conversation requests, the second with the tool result; got %d", len(reqs))
	}
}

func TestRealCLIPromptTooLongOnFirstExchange(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakeapi.PromptTooLong(210000, 200000))
	r := e.run()
	r.wantCode(t, 1)
	if !strings.Contains(r.stderr, "Prompt is too long") || !strings.Contains(r.stderr, "API status 400") {
		t.Errorf("stderr does not explain:\n%s", r.stderr)
	}
	if n := len(e.api.ConversationRequests()); n != 1 {
		t.Errorf("%d conversation requests: a too-long first exchange must not be retried", n)
	}
}

func TestRealCLIAuthFailureStopsEarly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakeapi.Repeat(fakeapi.AuthError(), -1))
	r := e.run()
	r.wantCode(t, 8)
	if !strings.Contains(r.stderr, "authentication") {
		t.Errorf("stderr does not say authentication:\n%s", r.stderr)
	}
	if n := len(e.api.ConversationRequests()); n >= 10 {
		t.Errorf("%d requests: malarun sat through the CLI's own retries", n)
	}
	if r.took > 30*time.Second {
		t.Errorf("took %v", r.took)
	}
}

// killedOnceCLI is a claude that dies by SIGKILL before its first line the
// first time it runs, as under the OOM killer, and is the real CLI after.
func killedOnceCLI(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin, marker := filepath.Join(dir, "claude"), filepath.Join(dir, "killed-once")
	script := fmt.Sprintf("#!/bin/sh\nif [ ! -e '%s' ]; then : > '%s'; kill -9 $$; fi\nexec '%s' \"$@\"\n", marker, marker, e2e.claude)
	if err := os.WriteFile(bin, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return bin
}

// A CLI killed from outside before its first line (the OOM killer under
// memory pressure): nothing ran, so malarun starts it again and the run
// succeeds, where it used to fail the issue for good (exit 1, retry never).
func TestRealCLIKilledBeforeFirstLineStartsAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakeapi.Text("Done after a kill."))
	e.claudeBin = killedOnceCLI(t)
	r := e.run("--backoff", "0s", "--json")
	r.wantCode(t, 0)
	var rep struct {
		Attempts []struct {
			Outcome string `json:"outcome"`
			Reason  string `json:"reason"`
		} `json:"attempts"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Attempts) != 2 || rep.Attempts[0].Outcome != "crash" {
		t.Errorf("want a crash then a success in the report (%v):\n%s", err, r.stdout)
	}
	if !strings.Contains(r.stderr, "before its first line (a signal malarun did not send)") {
		t.Errorf("the first attempt's end is not explained:\n%s", r.stderr)
	}
}
