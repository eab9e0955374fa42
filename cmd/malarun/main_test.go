package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/malarun/malarun/internal/testing/testchild"
)

// envAsMalarun makes the test binary run malarun's main: tests run the real
// command line in a process of its own (its own signals, terminal and
// child subreaper), and that malarun runs the same binary as its fake
// claude (testchild).
const envAsMalarun = "MALARUN_TEST_AS_MALARUN"

func TestMain(m *testing.M) {
	if os.Getenv(envAsMalarun) == "1" {
		// Unset first: the fake claude inherits this environment.
		os.Unsetenv(envAsMalarun)
		main()
	}
	testchild.MaybeRun()
	testchild.UnignoreSignals()
	os.Exit(m.Run())
}

// repoPath is a path in the repository, whatever the test's working
// directory (some tests chdir to a temp dir).
func repoPath(rel string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", rel)
}

// proc is one malarun process run by a test.
type proc struct {
	t        *testing.T
	cmd      *exec.Cmd
	issue    string
	stateDir string
	prompt   string
	stdout   bytes.Buffer
	stderr   bytes.Buffer
}

// newProc prepares `malarun issue --prompt P --claude-bin <this binary>`
// with a fake claude acting out behaviour, in an isolated environment: no
// GITHUB_* or MALARUN_* variable of the test's own leaks in (a test run
// inside GitHub Actions must not write to the job's summary).
func newProc(t *testing.T, issue, behaviour string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, issue: issue, stateDir: t.TempDir()}
	p.prompt = filepath.Join(t.TempDir(), "task.md")
	if err := os.WriteFile(p.prompt, []byte("Fix the bug.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	abs := repoPath("testdata/transcripts")
	var base []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GITHUB_") || strings.HasPrefix(k, "MALARUN_") || k == "NO_COLOR" || k == "TERM" || k == "HOME" || k == "XDG_CONFIG_HOME" {
			continue
		}
		base = append(base, kv)
	}
	base = append(base, envAsMalarun+"=1", testchild.EnvBehaviour+"="+behaviour, "GORACE=atexit_sleep_ms=0",
		"HOME="+t.TempDir(), "TERM=xterm")
	for i, kv := range env {
		env[i] = strings.ReplaceAll(kv, "TRANSCRIPTS/", abs+"/")
	}
	all := append([]string{issue, "--prompt", p.prompt, "--claude-bin", os.Args[0], "--state-dir", p.stateDir,
		"--kill-grace", "5s", "--backoff", "0s"}, args...)
	p.cmd = exec.Command(os.Args[0], all...)
	p.cmd.Env = append(base, env...)
	p.cmd.Dir = t.TempDir()
	return p
}

// run runs malarun with stdout and stderr to buffers (no terminal) and
// returns its exit code.
func (p *proc) run() int {
	p.t.Helper()
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	return exitCode(p.t, p.cmd.Run())
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("malarun did not run: %v", err)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("malarun died of %v", ws.Signal())
	}
	return ee.ExitCode()
}

// Scenarios of the fake claude, each with the flags it needs.
type scenario struct {
	behaviour string
	env       []string
	args      []string
}

// scenarioSuccess: one attempt that calls a tool and succeeds.
func scenarioSuccess(*testing.T) scenario {
	return scenario{testchild.Replay, []string{testchild.EnvTranscript + "=TRANSCRIPTS/tool-use-success.jsonl"}, nil}
}

// scenarioHangResumed: the first attempt starts a Bash tool call and goes
// silent; the second resumes the session and succeeds.
func scenarioHangResumed(t *testing.T) scenario {
	return scenario{testchild.ResumeAware,
		[]string{testchild.EnvLines + "=2", testchild.EnvTranscript + "=" + writeTranscript(t, testchild.InitLine, testchild.ToolLine)},
		// A long idle_timeout: the resumed attempt has plenty of time to start.
		[]string{"--idle-timeout", "30s", "--tool-timeout", "1s", "--max-attempts", "3"}}
}

// scenarioFailure: a hang with no retry left: exit 3.
func scenarioFailure(*testing.T) scenario {
	return scenario{testchild.Hang, []string{testchild.EnvLines + "=1"}, []string{"--idle-timeout", "1s", "--max-attempts", "1"}}
}

func (s scenario) proc(t *testing.T, issue string, args ...string) *proc {
	return newProc(t, issue, s.behaviour, append([]string(nil), s.env...), append(append([]string(nil), s.args...), args...)...)
}

// writeTranscript writes lines as a transcript for the fake claude.
func writeTranscript(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "transcript.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
