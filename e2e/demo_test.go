package e2e_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// make demo (scripts/demo.sh): the real CLI, a fake API that stalls mid-
// answer once; malarun detects the silence, resumes the session, the task
// finishes, and the story is printed. It exits 0 and leaves nothing in its
// temporary folder (issue 34: the README's first command).
func TestDemo(t *testing.T) {
	if e2e.claude == "" {
		t.Skip("real claude CLI missing (make e2e-deps)")
	}
	s, dir := runDemo(t, "demo.sh")
	for _, want := range []string{"hang detected", "retry decision: resume", "attempt 2 · resumed the session", "succeeded (exit 0) · 2 attempts"} {
		if !strings.Contains(s, want) {
			t.Errorf("the demo does not show %q:\n%s", want, s)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "malarun-demo.*")); len(left) > 0 {
		t.Errorf("the demo left %v", left)
	}
}

// make demo-fleet (scripts/demo-fleet.sh): the laptop fleet recipe with no
// key, six issues against one fake API that stalls one answer; every issue
// succeeds (the stalled one resumed), each gets its line, the summary says
// so, and nothing is left in its temporary folder (issue 42).
func TestDemoFleet(t *testing.T) {
	if e2e.claude == "" {
		t.Skip("real claude CLI missing (make e2e-deps)")
	}
	s, dir := runDemo(t, "demo-fleet.sh")
	for i := 1; i <= 6; i++ {
		if want := fmt.Sprintf("issue-%d: succeeded", i); !strings.Contains(s, want) {
			t.Errorf("the demo does not say %q:\n%s", want, s)
		}
	}
	// The banner is the command that ran, whole: a copy of it needs
	// nothing the demo set quietly (issue 49: it lacked --claude-bin and MALARUN).
	for _, want := range []string{"env -i PATH=\"$PATH\"", "HOME=", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1",
		"MALARUN=" + e2e.malarun, "--claude-bin " + e2e.claude, "deploy/xargs/malarun-fleet.sh"} {
		if !strings.Contains(s, want) {
			t.Errorf("the banner lacks %q:\n%s", want, s)
		}
	}
	for _, want := range []string{"6 issues", "Status     succeeded 6", "1 run succeeded after malarun stepped in: 1 hang"} {
		if !strings.Contains(s, want) {
			t.Errorf("the summary does not say %q:\n%s", want, s)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "malarun-demo-fleet.*")); len(left) > 0 {
		t.Errorf("the demo left %v", left)
	}
}

// runDemo runs scripts/<script> as its make target does, with the fake API
// built for it and a short idle_timeout, in a temporary folder of its own
// (the demo's TMPDIR, so that what it leaves can be seen). It returns what
// the demo printed and that folder; a demo that fails fails the test.
func runDemo(t *testing.T, script string) (output, dir string) {
	t.Helper()
	dir = t.TempDir()
	fake := filepath.Join(dir, "fakeapi")
	build := exec.Command("go", "build", "-o", fake, "./cmd/fakeapi")
	build.Dir = e2e.root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build fakeapi: %v\n%s", err, out)
	}
	cmd := exec.Command("bash", filepath.Join(e2e.root, "scripts", script), e2e.malarun, fake, e2e.claude)
	cmd.Env = append(os.Environ(), "TMPDIR="+dir, "DEMO_IDLE_TIMEOUT=3s")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	return string(out), dir
}
