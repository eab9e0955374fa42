package e2e_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/testing/fakeapi"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// fakeRun is malarun run by a test with the fake child (this test binary)
// as claude: no real CLI needed.
type fakeRun struct {
	t        *testing.T
	state    string
	prompt   string
	argsFile string
	env      []string
}

func newFakeRun(t *testing.T, behaviour string, env ...string) *fakeRun {
	onceAcrossCLIs(t) // the fake child, not the real CLI
	dir := t.TempDir()
	f := &fakeRun{t: t, state: filepath.Join(dir, "state"), prompt: filepath.Join(dir, "task.md"), argsFile: filepath.Join(dir, "args")}
	os.WriteFile(f.prompt, []byte("Fix issue 7."), 0o600)
	f.env = append(testchild.Env(behaviour, append(env, testchild.EnvArgsFile+"="+f.argsFile)...), "MALARUN_LOG_FORMAT=json")
	return f
}

func (f *fakeRun) command(flags ...string) (*exec.Cmd, *bytes.Buffer) {
	args := append([]string{"issue-7", "--prompt", f.prompt, "--claude-bin", os.Args[0], "--state-dir", f.state,
		"--kill-grace", "500ms", "--backoff", "0s"}, flags...)
	cmd := exec.Command(e2e.malarun, args...)
	cmd.Env = f.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, &out
}

// run runs malarun to the end and returns its exit code and output.
func (f *fakeRun) run(flags ...string) (int, string) {
	cmd, out := f.command(flags...)
	cmd.Run()
	return cmd.ProcessState.ExitCode(), out.String()
}

// runJSON runs malarun to the end with --json: its exit code, its
// stderr, and the report it printed.
func (f *fakeRun) runJSON(flags ...string) (int, string, map[string]any) {
	cmd, out := f.command(append(flags, "--json")...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Run()
	var rep map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		f.t.Fatalf("the --json report: %v\n%s\nstderr:\n%s", err, stdout.Bytes(), out)
	}
	return cmd.ProcessState.ExitCode(), out.String(), rep
}

// startAndWait starts malarun and waits until attempt n's transcript holds
// a line containing s: the fake child is running.
func (f *fakeRun) startAndWait(n int, s string, flags ...string) (*exec.Cmd, *bytes.Buffer) {
	cmd, out := f.command(flags...)
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	pattern := filepath.Join(f.state, "issue-7", "runs", "*", "attempt-"+strconv.Itoa(n)+".jsonl")
	if testchild.WaitUntil(20*time.Second, nil, func() bool { return testchild.FileHolds(pattern, s) }) {
		return cmd, out
	}
	cmd.Process.Kill()
	cmd.Wait()
	f.t.Fatalf("attempt %d never printed %q; malarun said:\n%s", n, s, out)
	return nil, nil
}

func (f *fakeRun) status() map[string]any {
	cmd := exec.Command(e2e.malarun, "status", "issue-7", "--json", "--state-dir", f.state)
	out, err := cmd.Output()
	if err != nil {
		f.t.Fatalf("status: %v\n%s", err, out)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		f.t.Fatalf("status JSON: %v\n%s", err, out)
	}
	return m
}

func (f *fakeRun) attempts() []string {
	b, _ := os.ReadFile(f.argsFile)
	recs := strings.Split(string(b), testchild.AttemptSeparator)
	return recs[:len(recs)-1]
}

var sessionRe = regexp.MustCompile(`--(session-id|resume)\n([0-9a-f-]{36})`)

func sessionOf(t *testing.T, attempt string) (flag, id string) {
	m := sessionRe.FindStringSubmatch(attempt)
	if m == nil {
		t.Fatalf("no session flag in %q", attempt)
	}
	return m[1], m[2]
}

// malarun is SIGKILLed mid-run, leaving a setsid tool process behind; the
// next invocation ends that process and resumes the same session.
func TestKilledMalarunIsReclaimedAndResumed(t *testing.T) {
	f := newFakeRun(t, testchild.ResumeAware, testchild.EnvLines+"=2", testchild.EnvGrandchild+"=1",
		testchild.EnvTranscript+"="+writeLines(t, testchild.InitLine, testchild.ToolLine))
	cmd, _ := f.startAndWait(1, `"subtype":"fake_grandchild"`)
	b, _ := os.ReadFile(globOne(t, filepath.Join(f.state, "issue-7", "runs", "*", "attempt-1.jsonl")))
	m := regexp.MustCompile(`"pid":(\d+),"parent":(\d+)`).FindSubmatch(b)
	grandchild, _ := strconv.Atoi(string(m[1]))
	child, _ := strconv.Atoi(string(m[2]))
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if !proc.Alive(grandchild, 0) {
		t.Fatalf("the setsid grandchild died with malarun: the test proves nothing")
	}

	code, out, rep := f.runJSON()
	if code != 0 {
		t.Fatalf("second malarun: exit %d\n%s", code, out)
	}
	// The killed attempt happened: the run had two, one of them this
	// invocation's, and one takeover.
	if rep["attempts_total"] != float64(2) || len(rep["attempts"].([]any)) != 1 || rep["reclaims"] != float64(1) || rep["reclaimed"] != true {
		t.Errorf("report after the reclaim: attempts_total %v, attempts %v, reclaims %v, reclaimed %v",
			rep["attempts_total"], len(rep["attempts"].([]any)), rep["reclaims"], rep["reclaimed"])
	}
	at := f.attempts()
	if len(at) != 2 {
		t.Fatalf("%d attempts, want 2", len(at))
	}
	_, id1 := sessionOf(t, at[0])
	flag, id2 := sessionOf(t, at[1])
	if flag != "resume" || id1 != id2 {
		t.Errorf("second run: --%s %s, want --resume %s", flag, id2, id1)
	}
	for _, want := range []string{"Continue on issue issue-7.", `Bash: {"command":"sleep 1"}`} {
		if !strings.Contains(at[1], want) {
			t.Errorf("resume prompt lacks %q:\n%s", want, at[1])
		}
	}
	if proc.Alive(grandchild, 0) || proc.Alive(child, 0) {
		t.Errorf("processes of the first run are still alive (child %d: %v, grandchild %d: %v)", child, proc.Alive(child, 0), grandchild, proc.Alive(grandchild, 0))
	}
	st := f.status()
	if st["status"] != "succeeded" || st["reclaims"] != float64(0) || st["run_reclaims"] != float64(1) || st["attempts"] != float64(2) ||
		len(st["sessions"].([]any)) != 1 {
		t.Errorf("status after the reclaimed run: %v", st)
	}
	if !strings.Contains(out, `"reclaimed":true`) {
		t.Errorf("the reclaim is not logged:\n%s", out)
	}
}

// The escapee of issue 32: a tool process that leaves with setsid and an
// empty environment (`setsid env -i cmd &`) carries no marker, so only the
// run's cgroup, named in the record, lets the next malarun end it after
// malarun was SIGKILLed (§D28). The group is gone at the end.
func TestReclaimEndsAnEscapeeWithAClearedEnvironment(t *testing.T) {
	f := newFakeRun(t, testchild.ResumeAware, testchild.EnvLines+"=2", testchild.EnvGrandchild+"=1", testchild.EnvBareGrandchild+"=1",
		testchild.EnvTranscript+"="+writeLines(t, testchild.InitLine, testchild.ToolLine))
	cmd, _ := f.startAndWait(1, `"subtype":"fake_grandchild"`)
	b, _ := os.ReadFile(globOne(t, filepath.Join(f.state, "issue-7", "runs", "*", "attempt-1.jsonl")))
	m := regexp.MustCompile(`"pid":(\d+),"parent":(\d+)`).FindSubmatch(b)
	grandchild, _ := strconv.Atoi(string(m[1]))
	t.Cleanup(func() { syscall.Kill(grandchild, syscall.SIGKILL) })
	cg, _ := f.status()["cgroup"].(string)
	if cg == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the run has no cgroup: CI's machines let malarun make one")
		}
		t.Skip("SKIPPED: malarun could make no cgroup here (not root?), so the reclaim cannot find a bare escapee")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if !proc.Alive(grandchild, 0) {
		t.Fatalf("the setsid grandchild died with malarun: the test proves nothing")
	}
	if env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", grandchild)); strings.Contains(string(env), "MALARUN_RUN=") {
		t.Fatalf("the escapee carries the run's marker: its environment was not cleared")
	}
	code, out, _ := f.runJSON()
	if code != 0 {
		t.Fatalf("second malarun: exit %d\n%s", code, out)
	}
	// Ended before anything of the new run started: by the reclaim, not by
	// the end of the next attempt.
	if !strings.Contains(out, "ended the processes a previous malarun left running") || !strings.Contains(out, `"found":1`) {
		t.Errorf("the reclaim found nothing to end:\n%s", out)
	}
	if proc.Alive(grandchild, 0) {
		t.Errorf("the escapee %d outlived the reclaim", grandchild)
	}
	if _, err := os.Stat(cg); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the run's cgroup %s is left: %v", cg, err)
	}
	if st := f.status(); st["cgroup"] != nil {
		t.Errorf("the finished run's record still names a cgroup: %v", st["cgroup"])
	}
}

// Two malaruns for one issue: the second exits 7 at once, naming the first.
func TestSecondMalarunForAnIssueExits7(t *testing.T) {
	f := newFakeRun(t, testchild.Hang)
	first, _ := f.startAndWait(1, `"subtype":"init"`, "--idle-timeout", "1h")
	code, out := f.run("--idle-timeout", "1h")
	if code != 7 || !strings.Contains(out, "being run by another malarun (pid "+strconv.Itoa(first.Process.Pid)) {
		t.Errorf("second malarun: exit %d\n%s", code, out)
	}
	first.Process.Signal(syscall.SIGTERM)
	first.Wait()
	if c := first.ProcessState.ExitCode(); c != 143 {
		t.Errorf("first malarun after SIGTERM: exit %d", c)
	}
	if n := len(f.attempts()); n != 1 {
		t.Errorf("claude ran %d times, want once", n)
	}
}

// Two malaruns started together: exactly one runs claude.
func TestTwoMalarunsStartedTogether(t *testing.T) {
	f := newFakeRun(t, testchild.Replay)
	a, outA := f.command()
	b, outB := f.command()
	a.Start()
	b.Start()
	a.Wait()
	b.Wait()
	codes := []int{a.ProcessState.ExitCode(), b.ProcessState.ExitCode()}
	ok := codes[0] == 0 && codes[1] == 7 || codes[0] == 7 && codes[1] == 0
	// The second may also start after the first finished: then both succeed.
	if !ok && !(codes[0] == 0 && codes[1] == 0 && len(f.attempts()) == 2) {
		t.Errorf("exit codes %v\n%s\n%s", codes, outA, outB)
	}
	if codes[0] == 7 || codes[1] == 7 {
		if n := len(f.attempts()); n != 1 {
			t.Errorf("claude ran %d times", n)
		}
	}
}

// A malarun killed mid-run four times: the fifth finds the issue poisoned.
// One stopped by SIGTERM four times is not poisoned.
func TestPoisonAfterFourKillsNotAfterFourSigterms(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		f := newFakeRun(t, testchild.Hang)
		for i := 1; i <= 4; i++ {
			cmd, _ := f.startAndWait(i, `"subtype":"init"`, "--idle-timeout", "1h")
			cmd.Process.Signal(sig)
			cmd.Wait()
		}
		code, out := f.run("--idle-timeout", "300ms", "--max-attempts", "1")
		st := f.status()
		if sig == syscall.SIGKILL {
			if code != 6 || !strings.Contains(out, "poisoned") || st["poisoned"] != true ||
				!strings.Contains(st["reason"].(string), "died during this run 4 times in a row (max_reclaims 3)") {
				t.Errorf("after 4 kills: exit %d, status %v\n%s", code, st, out)
			}
			if n := len(f.attempts()); n != 4 {
				t.Errorf("claude ran %d times, want 4 (none for the poisoned run)", n)
			}
			// --reset starts the issue over.
			if code, out := f.run("--reset", "--idle-timeout", "300ms", "--max-attempts", "1"); code != 3 {
				t.Errorf("--reset: exit %d\n%s", code, out)
			}
			continue
		}
		if code != 3 || st["poisoned"] == true || st["reclaims"] != float64(0) {
			t.Errorf("after 4 SIGTERMs: exit %d, status %v\n%s", code, st, out)
		}
	}
}

// A record damaged by hand: a clear error naming the file, exit 2.
func TestTruncatedRecordIsAClearError(t *testing.T) {
	f := newFakeRun(t, testchild.Replay)
	if code, out := f.run(); code != 0 {
		t.Fatalf("first run: %d\n%s", code, out)
	}
	rec := filepath.Join(f.state, "issue-7", "record.json")
	b, _ := os.ReadFile(rec)
	os.WriteFile(rec, b[:len(b)/2], 0o600)
	code, out := f.run()
	if code != 2 || !strings.Contains(out, rec) || !strings.Contains(out, "damaged") {
		t.Errorf("exit %d\n%s", code, out)
	}
	if code, out := f.run("--reset"); code != 0 {
		t.Errorf("--reset over a damaged record: exit %d\n%s", code, out)
	}
}

// The journal never holds secrets from the environment.
func TestJournalHoldsNoSecrets(t *testing.T) {
	f := newFakeRun(t, testchild.Replay)
	f.env = append(f.env, "ANTHROPIC_API_KEY=sk-ant-secret-canary", "GITHUB_TOKEN=ghp_canary")
	if code, out := f.run("--log-level", "debug"); code != 0 || strings.Contains(out, "canary") {
		t.Errorf("exit %d; log:\n%s", code, out)
	}
	filepath.Walk(f.state, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && !strings.HasPrefix(info.Name(), "attempt-") {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte("canary")) {
				t.Errorf("%s holds a secret", p)
			}
		}
		return nil
	})
}

// With the real CLI: malarun SIGKILLed while the API stalls after a tool
// call; the next malarun resumes the session, and the API sees the earlier
// conversation.
func TestRealCLIKilledMalarunIsResumed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakeapi.Bash("echo step-one"), fakeapi.Stall(), fakeapi.Text("Resumed by a new malarun."))
	started := time.Now()
	cmd, stdout, stderr := e.start("--idle-timeout", "1m")
	e.waitToolResultSaved()
	cmd.Process.Signal(syscall.SIGKILL)
	e.wait(cmd, stdout, stderr, started)
	r := e.run("--idle-timeout", "1m")
	r.wantCode(t, 0)
	if r.stdout != "Resumed by a new malarun.\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	// The counts are the run's: the killed attempt and the takeover stay.
	var rec struct {
		Attempts       int `json:"attempts"`
		KilledAttempts int `json:"killed_attempts"`
		Reclaims       int `json:"reclaims"`
		RunReclaims    int `json:"run_reclaims"`
	}
	b, _ := os.ReadFile(filepath.Join(e.home, "state", "issue-e2e", "record.json"))
	if err := json.Unmarshal(b, &rec); err != nil || rec.Attempts != 2 || rec.KilledAttempts != 1 || rec.Reclaims != 0 || rec.RunReclaims != 1 {
		t.Errorf("record after the takeover (%v): %+v", err, rec)
	}
	reqs := e.api.ConversationRequests()
	last := reqs[len(reqs)-1]
	if last.SessionID != reqs[0].SessionID || !last.HasToolUse("toolu_1") || !last.HasToolResult("toolu_1") ||
		!strings.Contains(last.AllText(), e.task) || !strings.Contains(last.AllText(), "Continue on issue issue-e2e.") {
		t.Errorf("the resumed request does not carry the earlier conversation: same session %v, tool use %v, result %v, task %v",
			last.SessionID == reqs[0].SessionID, last.HasToolUse("toolu_1"), last.HasToolResult("toolu_1"), strings.Contains(last.AllText(), e.task))
		dumpRequests(t, e)
	}
}

// waitToolResultSaved waits until the first session's request after its
// Bash call (toolu_1) is held by the fake API and the tool result is in
// the CLI's session file, and returns that session. The CLI writes the file
// in the background: stop it only then, or the resumed history may lack
// the result.
func (e *env) waitToolResultSaved() string {
	e.t.Helper()
	e.waitStall(1)
	session := e.api.ConversationRequests()[0].SessionID
	e.waitSessionFile(session, `"tool_use_id":"toolu_1"`)
	return session
}

// waitSessionFile waits until the CLI's session file holds s.
func (e *env) waitSessionFile(session, s string) {
	e.t.Helper()
	pattern := filepath.Join(e.home, ".claude", "projects", "*", session+".jsonl")
	if testchild.WaitUntil(20*time.Second, nil, func() bool { return testchild.FileHolds(pattern, s) }) {
		return
	}
	e.t.Fatalf("the session file of %s never held %q", session, s)
}

func writeLines(t *testing.T, lines ...string) string {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
	return p
}

func globOne(t *testing.T, pattern string) string {
	m, _ := filepath.Glob(pattern)
	if len(m) != 1 {
		t.Fatalf("%s: %d matches", pattern, len(m))
	}
	return m[0]
}

func dumpRequests(t *testing.T, e *env) {
	for _, r := range e.api.Requests() {
		t.Logf("req %d %s kind=%v session=%s stream=%v last=%q", r.Seq, r.Time.Format("15:04:05.000"), r.Kind, r.SessionID, r.Stream, oneLine(r.LastUserText()))
	}
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 100 {
		return s[:100]
	}
	return s
}

// malarun dies during its first attempt, after a Bash call: the record
// already says so, so when the session turns out not to be resumable the
// next malarun refuses a fresh start (exit 4) instead of repeating it.
func TestReclaimKnowsTheDeadRunsSideEffects(t *testing.T) {
	f := newFakeRun(t, testchild.ResumeAware, testchild.EnvLines+"=2",
		testchild.EnvTranscript+"="+writeLines(t, testchild.InitLine, testchild.ToolLine),
		testchild.EnvResumed+"=../testdata/transcripts/resume-not-found.jsonl", testchild.EnvExit+"=1")
	cmd, _ := f.startAndWait(1, `"name":"Bash"`)
	// The record is written as the line is read: wait for it, then kill.
	rec := filepath.Join(f.state, "issue-7", "record.json")
	testchild.WaitUntil(10*time.Second, nil, func() bool { return testchild.FileHolds(rec, `"Bash": 1`) })
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	code, out := f.run()
	if code != 4 || !strings.Contains(out, "side effects (Bash)") {
		t.Errorf("exit %d, want 4 naming Bash\n%s", code, out)
	}
}
