// Package e2e_test drives the built malarun binary against the real Claude
// Code CLI (installed by `make e2e-deps`), which talks to a fake Anthropic
// API (internal/testing/fakeapi) on 127.0.0.1: no network, no key. Each test gets
// its own HOME, so the processes a test started can be found afterwards by
// that HOME in their environment, and proven gone.
//
// The CLI under test is MALARUN_CLAUDE_BIN if set, else the installed
// MALARUN_CLAUDE_VERSION (default: the current pinned version), so one
// suite runs against every version the Makefile pins (see cliversion_test.go).
package e2e_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/testing/fakeapi"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// suite holds what TestMain prepared.
type suite struct {
	malarun string // the built binary
	root    string // the repository
	claude  string // the real CLI, "" when missing
	wanted  string // where the real CLI was looked for
	// claudeVersion is what `claude --version` printed, e.g. "2.1.330".
	claudeVersion string
}

func setup() (suite, func(), error) {
	_, here, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(here))
	tmp, err := os.MkdirTemp("", "malarun-e2e-")
	if err != nil {
		return suite{}, nil, err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	s := suite{malarun: filepath.Join(tmp, "malarun"), root: root}
	// MALARUN_E2E_TAGS builds malarun with tags: cpuprofile profiles each
	// malarun of a fleet into MALARUN_CPUPROFILE (docs/testing.md).
	build := exec.Command("go", "build", "-tags", os.Getenv("MALARUN_E2E_TAGS"), "-o", s.malarun, "./cmd/malarun")
	build.Dir = root
	// Static, as make build and the release binaries: the soak measures
	// malarun's CPU as users run it.
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		cleanup()
		return suite{}, nil, fmt.Errorf("build malarun: %v\n%s", err, out)
	}
	choice := chooseCLI(root, os.Getenv)
	s.wanted = choice.bin
	bin, err := resolveBin(choice.bin)
	if err == nil {
		_, err = os.Stat(bin)
	}
	if err != nil {
		return s, cleanup, nil // missing: TestMain decides whether that fails
	}
	s.claude = bin
	if s.claudeVersion, err = cliVersion(s.claude, tmp); err != nil {
		cleanup()
		return suite{}, nil, err
	}
	if choice.version != "" && s.claudeVersion != choice.version {
		cleanup()
		return suite{}, nil, fmt.Errorf("%s reports version %s, want %s: reinstall it (make e2e-deps)", s.claude, s.claudeVersion, choice.version)
	}
	return s, cleanup, nil
}

// the suite, set once by TestMain before any test runs and never changed.
var e2e suite

func TestMain(m *testing.M) {
	// The memory test runs malarun with this test binary as a fake claude.
	testchild.MaybeRun()
	testchild.UnignoreSignals()
	s, cleanup, err := setup()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	e2e = s
	if s.claude == "" {
		msg := "e2e: the real claude CLI " + s.wanted + " is missing: run `make e2e-deps` (or set MALARUN_CLAUDE_BIN)"
		if os.Getenv("CI") == "true" {
			fmt.Fprintln(os.Stderr, msg+"; CI=true, so this is a failure")
			cleanup()
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "\n"+strings.Repeat("!", 78)+"\n"+msg+"; SKIPPING the end-to-end tests\n"+strings.Repeat("!", 78))
	} else {
		fmt.Fprintf(os.Stderr, "e2e: against claude %s (%s)\n", s.claudeVersion, s.claude)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// env is one test's world: a fake API, a HOME, a working directory.
type env struct {
	t    *testing.T
	api  *fakeapi.Server
	home string
	work string
	task string // the prompt
	args []string
	// extraEnv is added to malarun's environment (and so the CLI's).
	extraEnv []string
	// claudeBin, when set, is given as --claude-bin instead of the real
	// CLI (a wrapper that records something and execs it).
	claudeBin string
	// waitLimit bounds a run (default 2 minutes): beyond it malarun is
	// killed and the test fails.
	waitLimit time.Duration
	// issue and stateDir, when set, are the issue id and the state dir
	// instead of issue-e2e in the test's own (the soak puts its whole
	// fleet in one state dir, as a night's fleet is, and sums it up).
	issue, stateDir string
}

// issueID is the issue the test's malarun runs.
func (e *env) issueID() string { return cmp.Or(e.issue, "issue-e2e") }

// stateDirPath is the state dir the test's malarun keeps.
func (e *env) stateDirPath() string { return cmp.Or(e.stateDir, filepath.Join(e.home, "state")) }

// The test runs beside the suite's other such tests (t.Parallel): each has
// its own HOME, working folder, state directory and fake API, and most of a
// test's time is the CLI starting and malarun's timers running. A test
// whose idle_timeout is a few seconds uses newEnvAlone instead: a healthy
// CLI slowed down by its neighbours could look hung to it.
func newEnv(t *testing.T, steps ...fakeapi.Step) *env {
	t.Helper()
	return newEnvWith(t, fakeapi.WithScript(steps...))
}

// newEnvAlone is newEnv for a test that does not run in parallel (see newEnv).
func newEnvAlone(t *testing.T, steps ...fakeapi.Step) *env {
	t.Helper()
	return newEnv(t, steps...)
}

// newEnvWith is newEnv with the fake API built from opts.
func newEnvWith(t *testing.T, opts ...fakeapi.Option) *env {
	t.Helper()
	if e2e.claude == "" {
		t.Skip("real claude CLI missing (make e2e-deps)")
	}
	e := &env{t: t, api: fakeapi.Start(t, opts...), home: t.TempDir(), work: t.TempDir()}
	e.task = "Fix issue " + t.Name() + ": make the tests pass."
	t.Cleanup(e.assertNoProcessLeft)
	return e
}

// result is one malarun run.
type result struct {
	code   int
	stdout string
	stderr string
	took   time.Duration
	pid    int
}

// environ is what malarun (and so the CLI) runs with: nothing from the
// developer's own environment that could reach a real account.
func (e *env) environ() []string {
	return append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + e.home,
		"ANTHROPIC_BASE_URL=" + e.api.URL(),
		"ANTHROPIC_API_KEY=sk-ant-e2e-dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"MALARUN_LOG_FORMAT=json",
		"MALARUN_STATE_DIR=" + e.stateDirPath(),
		"MALARUN_CPUPROFILE=" + os.Getenv("MALARUN_CPUPROFILE"),
	}, e.extraEnv...)
}

// start launches malarun on the test's task with flags; extra claude args
// go after "--".
func (e *env) start(flags ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	e.t.Helper()
	cmd, stdout, stderr := e.command(flags...)
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	return cmd, stdout, stderr
}

// command is malarun on the test's task with flags, not started yet, its
// stdout and stderr to the buffers it returns.
func (e *env) command(flags ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	e.t.Helper()
	prompt := filepath.Join(e.home, "task.md")
	if err := os.WriteFile(prompt, []byte(e.task), 0o600); err != nil {
		e.t.Fatal(err)
	}
	bin := e2e.claude
	if e.claudeBin != "" {
		bin = e.claudeBin
	}
	args := append([]string{e.issueID(), "--prompt", prompt, "--claude-bin", bin, "--cwd", e.work}, flags...)
	args = append(append(args, "--", "--allowedTools", "Bash"), e.args...)
	cmd := exec.Command(e2e.malarun, args...)
	cmd.Env = e.environ()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return cmd, &stdout, &stderr
}

// wait waits for a started malarun, killing it (a failure) after
// waitLimit (2 minutes unless the test says).
func (e *env) wait(cmd *exec.Cmd, stdout, stderr *bytes.Buffer, started time.Time) result {
	e.t.Helper()
	limit := cmp.Or(e.waitLimit, 2*time.Minute)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		e.t.Fatalf("malarun did not finish within %v; stderr:\n%s", limit, stderr)
	}
	r := result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String(), took: time.Since(started), pid: cmd.Process.Pid}
	e.t.Logf("malarun exit %d after %v", r.code, r.took.Round(time.Millisecond))
	return r
}

// run runs malarun to the end.
func (e *env) run(flags ...string) result {
	e.t.Helper()
	started := time.Now()
	cmd, stdout, stderr := e.start(flags...)
	return e.wait(cmd, stdout, stderr, started)
}

func (r result) wantCode(t *testing.T, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
}

// logCount counts malarun's JSON log lines with the given message.
func (r result) logCount(msg string) int {
	return strings.Count(r.stderr, `"message":"`+msg+`"`)
}

// assertNoProcessLeft fails the test if any process still runs with this
// test's HOME: the CLI, its tools, anything they started.
func (e *env) assertNoProcessLeft() {
	if pids := e.processes(); len(pids) > 0 {
		for _, pid := range pids {
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			e.t.Errorf("process %d left behind: %s", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// processes lists the live processes whose environment holds this HOME.
func (e *env) processes() []int { return testchild.ProcessesWithEnv("HOME=" + e.home) }

// waitStall waits until the fake API holds its n-th stalled request.
func (e *env) waitStall(n int) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := e.api.WaitStalls(ctx, n); err != nil {
		e.t.Fatalf("waiting for stall %d: %v", n, err)
	}
}
