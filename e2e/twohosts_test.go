package e2e_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/testing/fakeapi"
)

// Two machines, one volume: host A's malarun runs in UTS and PID namespaces
// of its own (another hostname; it is PID 1 there, as in a container), with
// the state dir, HOME and working directory that host B's malarun uses too.
// While A runs, B exits 7 naming A. A's malarun is SIGKILLed, and its PID
// namespace, CLI and tools die with it, as a pod's do. B then reclaims the
// run: it resumes the same session, with the earlier conversation, and
// succeeds.
func TestTwoHostsOneVolume(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakeapi.Bash("echo step-one"), fakeapi.Stall(), fakeapi.Text("Finished on host B."))
	requireNamespaces(t)
	flags := []string{"--idle-timeout", "1m"}

	// Host A. --kill-child: if the test dies, unshare takes the namespace
	// down with it.
	started := time.Now()
	a := exec.Command("unshare", append([]string{"--uts", "--pid", "--fork", "--mount-proc", "--kill-child",
		"sh", "-c", `hostname host-a && exec "$@"`, "sh", e2e.malarun}, e.malarunArgs(flags...)...)...)
	a.Env = e.environ()
	var aOut, aErr bytes.Buffer
	a.Stdout, a.Stderr = &aOut, &aErr
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if a.ProcessState == nil {
			a.Process.Kill()
			a.Wait()
		}
	})
	// A's CLI ran the Bash call and its next request is held.
	session := e.waitToolResultSaved()
	aPid := childOf(t, a.Process.Pid)
	if ns := nsPids(t, aPid); len(ns) != 2 || ns[1] != "1" {
		t.Fatalf("host A's malarun (pid %d) is not PID 1 of a namespace of its own: NSpid %q", aPid, ns)
	}

	// Host B while A runs: busy, and it says who holds the issue.
	b := e.run(flags...)
	b.wantCode(t, 7)
	if !strings.Contains(b.stderr, "(pid 1 on host-a since ") {
		t.Errorf("host B does not name host A's malarun:\n%s", b.stderr)
	}

	// A dies outright; its namespace ends everything it started.
	if err := syscall.Kill(aPid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e.wait(a, &aOut, &aErr, started)
	if pids := e.processes(); len(pids) > 0 {
		t.Fatalf("processes of host A outlived its PID namespace: %v", pids)
	}

	// Host B again: reclaims and resumes A's session.
	r := e.run(flags...)
	r.wantCode(t, 0)
	if r.stdout != "Finished on host B.\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	if !strings.Contains(r.stderr, `"reclaimed":true`) {
		t.Errorf("host B did not reclaim the run:\n%s", r.stderr)
	}
	reqs := e.api.ConversationRequests()
	last := reqs[len(reqs)-1]
	if last.SessionID != session || !last.HasToolUse("toolu_1") || !last.HasToolResult("toolu_1") ||
		!strings.Contains(last.AllText(), e.task) || !strings.Contains(last.AllText(), "Continue on issue issue-e2e.") {
		t.Errorf("host B's request does not continue host A's session %s: session %s, tool use %v, result %v",
			session, last.SessionID, last.HasToolUse("toolu_1"), last.HasToolResult("toolu_1"))
		dumpRequests(t, e)
	}
	if t.Failed() {
		t.Logf("host A's malarun:\n%s", aErr.String())
	}
}

// malarunArgs are the arguments env.start gives malarun.
func (e *env) malarunArgs(flags ...string) []string {
	e.t.Helper()
	prompt := filepath.Join(e.home, "task.md")
	if err := os.WriteFile(prompt, []byte(e.task), 0o600); err != nil {
		e.t.Fatal(err)
	}
	args := append([]string{"issue-e2e", "--prompt", prompt, "--claude-bin", e2e.claude, "--cwd", e.work}, flags...)
	return append(append(args, "--", "--allowedTools", "Bash"), e.args...)
}

// requireNamespaces: the test needs `unshare` with new UTS, PID and mount
// namespaces, which takes root. CI runs as root: there a failure is a
// failure; elsewhere the test is skipped, loudly.
func requireNamespaces(t *testing.T) {
	t.Helper()
	out, err := exec.Command("unshare", "--uts", "--pid", "--fork", "--mount-proc",
		"sh", "-c", `hostname probe-host && echo "$(hostname) $$"`).CombinedOutput()
	if err == nil && strings.TrimSpace(string(out)) == "probe-host 1" {
		return
	}
	msg := fmt.Sprintf("unshare --uts --pid --fork --mount-proc does not work here (%v: %s); it needs root", err, bytes.TrimSpace(out))
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + "; CI=true, so this is a failure")
	}
	t.Skip("\n" + strings.Repeat("!", 78) + "\nSKIPPING the two-hosts test: " + msg + "\n" + strings.Repeat("!", 78))
}

// nsPids is pid's NSpid line: its pid in each PID namespace it is in, the
// outermost first.
func nsPids(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			return strings.Fields(rest)
		}
	}
	return nil
}
