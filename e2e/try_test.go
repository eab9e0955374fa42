package e2e_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// make try (scripts/try.sh): a newcomer's own task against the fake API,
// with no key. The fake model runs the prompt's ```sh blocks as Bash calls;
// with FAULT=stall the API stalls once and malarun resumes the session.
// The run exits 0, the answer says what ran and that it is no Claude,
// nothing is written to the caller's HOME, and every command the script
// prints to look at the run works as printed, in a fresh shell with
// nothing of this one's environment (issue 49).
func TestTryOnYourOwnTask(t *testing.T) {
	if e2e.claude == "" {
		t.Skip("real claude CLI missing (make e2e-deps)")
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "fakeapi")
	build := exec.Command("go", "build", "-o", fake, "./cmd/fakeapi")
	build.Dir = e2e.root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build fakeapi: %v\n%s", err, out)
	}
	task := filepath.Join(dir, "my task.md") // a space: every printed path must be quoted
	if err := os.WriteFile(task, []byte("Say hello twice.\n\n```sh\necho step-one\n```\n\n```bash\necho step-two && pwd\n```\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	home, tmp := filepath.Join(dir, "home"), filepath.Join(dir, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("bash", filepath.Join(e2e.root, "scripts", "try.sh"), e2e.malarun, fake, e2e.claude, task)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+home, "TMPDIR="+tmp, "TRY_FAULT=stall", "MALARUN_TEXT_TIMEOUT=3s",
		"ANTHROPIC_API_KEY=a-real-looking-key-that-must-not-reach-the-run", "CLAUDE_CONFIG_DIR="+filepath.Join(home, "elsewhere"))
	out, err := cmd.CombinedOutput()
	s := string(out)
	if err != nil {
		t.Fatalf("try.sh: %v\n%s", err, s)
	}
	for _, want := range []string{
		"not Claude", "1. echo step-one -> ok: step-one", "2. echo step-two && pwd -> ok: step-two",
		"hang detected", "attempt 2 · resumed the session", "succeeded (exit 0) · 2 attempts",
		"env -i PATH=\"$PATH\"", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1",
		"--claude-bin " + e2e.claude, "MALARUN_TEXT_TIMEOUT=3s", "MALARUN_TOOL_TIMEOUT=2m",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("try does not show %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "a-real-looking-key") {
		t.Errorf("the caller's key reached the run:\n%s", s)
	}
	if left, _ := os.ReadDir(home); len(left) > 0 {
		t.Errorf("the caller's HOME got %v", left)
	}

	// Each printed command, copied into a fresh shell in another folder.
	var ran int
	for line := range strings.SplitSeq(s, "\n") {
		c, ok := strings.CutPrefix(line, "  ")
		if !ok || !(strings.HasPrefix(c, "/") || strings.HasPrefix(c, "ls ")) {
			continue
		}
		sh := exec.Command("sh", "-c", c)
		sh.Dir = home
		sh.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
		var stdout, stderr bytes.Buffer
		sh.Stdout, sh.Stderr = &stdout, &stderr
		if err := sh.Run(); err != nil || stdout.Len() == 0 && !strings.Contains(c, "> ") {
			t.Errorf("printed command %q: %v, %d bytes out\n%s", c, err, stdout.Len(), stderr.String())
		}
		ran++
	}
	if ran < 5 {
		t.Errorf("ran %d printed commands, want the show, page, status, summary and ls lines:\n%s", ran, s)
	}
	if page, err := filepath.Glob(filepath.Join(tmp, "malarun-try.*", "show.html")); err != nil || len(page) != 1 {
		t.Errorf("the page of the run: %v %v", page, err)
	}
}

// make try's wiring: the variables reach the script, the CLI is the
// pinned one's link, and a missing PROMPT is named (make -n runs nothing).
func TestMakeTryWiring(t *testing.T) {
	onceAcrossCLIs(t)
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	out, err := exec.Command("make", "-n", "-C", e2e.root, "try", "PROMPT=t.md", "FAULT=stall", "WORKDIR=/w", "ISSUE=mine").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n try: %v\n%s", err, out)
	}
	for _, want := range []string{"TRY_FAULT=stall TRY_WORKDIR=/w TRY_ISSUE=mine scripts/try.sh", filepath.Join(e2e.root, "bin", "claude") + ` "t.md"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("make -n try lacks %q:\n%s", want, out)
		}
	}
	missing := exec.Command("bash", filepath.Join(e2e.root, "scripts", "try.sh"), "malarun", "fakeapi", "claude", "")
	if out, err := missing.CombinedOutput(); err == nil || !strings.Contains(string(out), "make try PROMPT=task.md") {
		t.Errorf("try without a prompt: %v\n%s", err, out)
	}
}
