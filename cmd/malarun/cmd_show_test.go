package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/testing/testchild"
)

// showFolder makes a run folder of issue-1 under a state dir, from a
// recorded transcript, without a record or a timeline: show finds the
// newest run folder and tells it without times.
func showFolder(t *testing.T, c *cli) (state, runDir string) {
	t.Helper()
	state = t.TempDir()
	runDir = filepath.Join(state, "issue-1", "runs", "20261122T120401Z-3f9a1c")
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(repoPath("testdata/transcripts/tool-use-success.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(runDir, "attempt-1.jsonl"), b, 0o600)
	os.WriteFile(filepath.Join(runDir, "prompt.md"), []byte("Fix \x1b]0;pwned\x07the bug.\n"), 0o600)
	// An older run, and a folder that is not a run: neither is shown.
	os.MkdirAll(filepath.Join(state, "issue-1", "runs", "20261121T000000Z-000000"), 0o700)
	os.MkdirAll(filepath.Join(state, "issue-1", "runs", "zzz"), 0o700)
	return state, runDir
}

func TestShowFormats(t *testing.T) {
	c := newCLI(t)
	state, _ := showFolder(t, c)
	c.env["MALARUN_STATE_DIR"] = state
	o := c.run("show", "issue-1", "--format", "json")
	if o.code != 0 {
		t.Fatalf("exit %d\n%s", o.code, o.stderr)
	}
	var story struct {
		Header struct {
			RunID string `json:"run_id"`
			Timed bool
		}
		Summary struct {
			ToolCalls int `json:"tool_calls"`
		}
	}
	if err := json.Unmarshal([]byte(o.stdout), &story); err != nil || story.Header.RunID != "20261122T120401Z-3f9a1c" || story.Header.Timed || story.Summary.ToolCalls != 1 {
		t.Errorf("json: %+v, %v\n%s", story, err, o.stdout)
	}
	for _, f := range []string{"text", "md", "html"} {
		o := c.run("show", "issue-1", "--format", f)
		if o.code != 0 || !strings.Contains(o.stdout, "echo hello-from-tool") {
			t.Errorf("--format %s: exit %d, no tool call:\n%s\n%s", f, o.code, o.stdout, o.stderr)
		}
		if strings.ContainsAny(o.stdout, "\x1b\x07") {
			t.Errorf("--format %s: a terminal control from the prompt is in the output: %q", f, o.stdout)
		}
	}
	if o := c.run("show", "issue-1", "--attempt", "1", "--format", "json"); o.code != 0 || !strings.Contains(o.stdout, `"kind":"tool_call"`) {
		t.Errorf("--attempt 1: exit %d\n%s", o.code, o.stdout)
	}
	if o := c.run("show", "issue-1", "--attempt", "2"); o.code != exitFailure || !strings.Contains(o.stderr, "has no attempt 2 (its attempts: [1])") {
		t.Errorf("--attempt 2 of a run of one: exit %d\n%s", o.code, o.stderr)
	}
}

func TestShowMistakes(t *testing.T) {
	c := newCLI(t)
	state, _ := showFolder(t, c)
	c.env["MALARUN_STATE_DIR"] = state
	c.run("show").wantUsage(t, "accepts 1 arg")
	c.run("show", "../x").wantUsage(t, `"../x"`)
	c.run("show", "issue-1", "--format", "pdf").wantUsage(t, `--format "pdf": one of text, md, json, html`)
	c.run("show", "issue-1", "--run", "../../etc").wantUsage(t, `--run "../../etc" is not a run id`)
	c.run("show", "issue-1", "--attempt", "-1").wantUsage(t, "--attempt -1")
	if o := c.run("show", "issue-1", "--run", "20261120T000000Z-000000"); o.code != exitFailure || !strings.Contains(o.stderr, "has no run 20261120T000000Z-000000") {
		t.Errorf("a run that is not there: exit %d, %s", o.code, o.stderr)
	}
	// A runs/<id> that is a symbolic link to a folder outside is not followed.
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(state, "issue-1", "runs", "20261120T000000Z-111111")); err != nil {
		t.Fatal(err)
	}
	if o := c.run("show", "issue-1", "--run", "20261120T000000Z-111111"); o.code != exitFailure || !strings.Contains(o.stderr, "is a symbolic link, which malarun does not follow") {
		t.Errorf("a symlinked run folder: exit %d, %s", o.code, o.stderr)
	}
	if o := c.run("show", "issue-2"); o.code != exitFailure || !strings.Contains(o.stderr, "issue issue-2 has no runs in "+state) {
		t.Errorf("an issue with no runs: exit %d, %s", o.code, o.stderr)
	}
	// A run folder without a timeline cannot be followed: it was recorded
	// before malarun kept one, so it is over.
	if o := c.run("show", "issue-1", "--follow"); o.code != exitFailure || !strings.Contains(o.stderr, "cannot be followed") {
		t.Errorf("--follow without a timeline: exit %d, %s", o.code, o.stderr)
	}
}

func TestPagerCommand(t *testing.T) {
	for _, tt := range []struct {
		env  []string
		want string
	}{
		{nil, "less"},
		{[]string{"PAGER=more"}, "more"},
		{[]string{"PAGER=more", "MALARUN_PAGER=most -s"}, "most -s"},
		{[]string{"PAGER="}, ""},
		{[]string{"PAGER=less", "PAGER=cat"}, "cat"},
		{[]string{"MALARUN_PAGER=", "PAGER=less"}, ""},
	} {
		if got := pagerCommand(tt.env); got != tt.want {
			t.Errorf("pagerCommand(%q) = %q, want %q", tt.env, got, tt.want)
		}
	}
}

// Under GitHub Actions the runner reads stdout for workflow commands: the
// model's "::error::" or "##[" stays text there.
func TestShowDefusesWorkflowCommands(t *testing.T) {
	c := newCLI(t)
	state, runDir := showFolder(t, c)
	c.env["MALARUN_STATE_DIR"] = state
	c.env["GITHUB_ACTIONS"] = "true"
	os.WriteFile(filepath.Join(runDir, "prompt.md"), []byte("::error::planted\n##[error]planted\n"), 0o600)
	for _, f := range []string{"text", "md", "json"} {
		o := c.run("show", "issue-1", "--format", f)
		for _, l := range strings.Split(o.stdout, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "::") || strings.Contains(l, "##[") {
				t.Errorf("--format %s: a workflow command reaches the runner: %q", f, l)
			}
		}
		if o.code != 0 || !strings.Contains(o.stdout, "planted") {
			t.Errorf("--format %s: exit %d\n%s", f, o.code, o.stdout)
		}
	}
}

// --follow on a run that goes on ends at a Ctrl-C (exit 130), and, without
// one, when the run's malarun exits.
func TestShowFollowEndsOnASignalAndWithTheRun(t *testing.T) {
	t.Parallel() // a malarun process of its own: its own folders, nothing shared
	p := newProc(t, "issue-follow", testchild.Hang, []string{testchild.EnvLines + "=1"})
	p.start(nil, nil)
	p.claudePid() // the attempt runs
	follow := func() (*exec.Cmd, *bufio.Scanner) {
		show := exec.Command(os.Args[0], "show", p.issue, "--follow", "--state-dir", p.stateDir)
		show.Env = p.cmd.Env
		out, err := show.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := show.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { show.Process.Kill(); show.Wait() })
		lines := bufio.NewScanner(out)
		for lines.Scan() { // the running attempt is shown
			if strings.Contains(lines.Text(), "attempt 1 ·") {
				return show, lines
			}
		}
		t.Fatal("show --follow ended before the running attempt")
		return nil, nil
	}
	show, _ := follow()
	show.Process.Signal(syscall.SIGINT)
	if code := exitCode(t, waitLimit(t, show)); code != 130 {
		t.Errorf("show --follow after SIGINT: exit %d, want 130", code)
	}
	show, lines := follow()
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(); code != 143 {
		t.Fatalf("the run: exit %d", code)
	}
	var rest strings.Builder
	for lines.Scan() {
		rest.WriteString(lines.Text() + "\n")
	}
	if code := exitCode(t, waitLimit(t, show)); code != 0 || !strings.Contains(rest.String(), "run finished: interrupted") ||
		!strings.Contains(rest.String(), "stopped following: the run is not going on: interrupted") {
		t.Errorf("show --follow after the run ended: exit %d\n%s", code, rest.String())
	}
}

// waitLimit waits for cmd, at most exitLimit (a hang is a failure).
func waitLimit(t *testing.T, cmd *exec.Cmd) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(exitLimit):
		cmd.Process.Kill()
		t.Fatalf("%v did not exit within %v", cmd.Args, exitLimit)
		return nil
	}
}
