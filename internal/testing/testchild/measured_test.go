package testchild_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/testing/qemutest"
	"github.com/malarun/malarun/internal/testing/synth"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// TestMain makes the test binary the fake child when it is started as
// one, before any test runs. A child a fake child starts itself (ObeyTree's
// setsid grandchild) is started with no -test.run: without this it would
// run the tests, in file order, and a test that starts ObeyTree before
// TestHelperChild is reached makes each grandchild start another (seen:
// over a thousand processes when TestObeyTreeDiesOfSIGTERMAlone moved to
// measured_linux_test.go, which sorts first).
func TestMain(m *testing.M) {
	testchild.MaybeRun()
	os.Exit(m.Run())
}

// TestHelperChild is not a test: the tests below re-execute this test
// binary with -test.run selecting it, and TestMain makes it the fake child
// (the os/exec TestHelperProcess pattern).
func TestHelperChild(t *testing.T) {
	b := os.Getenv(testchild.EnvBehaviour)
	if b == "" {
		return // running the tests, not a child
	}
	testchild.MaybeRun()
	t.Fatalf("MaybeRun returned for behaviour %q", b)
}

const session = "0b5c8c43-3f4e-4d43-9a0f-6f1d5e0c2a77"

// child is the fake child running behaviour with the CLI flags args (after
// "--", where the test binary's flag parsing stops) and the report in dir.
func child(t *testing.T, behaviour, report string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	qemutest.SkipReexec(t)
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestHelperChild$", "--"}, args...)...)
	cmd.Env = testchild.Env(behaviour, append(env, testchild.EnvReport+"="+report)...)
	cmd.Stderr = os.Stderr
	return cmd
}

// line is what these tests read of a line the child printed.
type line struct {
	Type, Subtype, Result string
	SessionID             string `json:"session_id"`
	IsError               bool   `json:"is_error"`
	bytes                 int
}

// lines parses every line of out; each must be a JSON object.
func lines(t *testing.T, out []byte) []line {
	t.Helper()
	var ls []line
	for i, b := range bytes.SplitAfter(out, []byte("\n")) {
		if len(b) == 0 {
			break
		}
		l := line{bytes: len(b)}
		if err := json.Unmarshal(b, &l); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		ls = append(ls, l)
	}
	return ls
}

// runToEnd runs the child until it exits and returns its lines, its
// report, and Monotonic just before it started and just after it ended.
func runToEnd(t *testing.T, behaviour string, env []string, args ...string) (ls []line, r testchild.Report, before, after int64) {
	t.Helper()
	report := filepath.Join(t.TempDir(), "report.json")
	cmd := child(t, behaviour, report, env, args...)
	before = testchild.Monotonic()
	out, err := cmd.Output()
	after = testchild.Monotonic()
	if err != nil {
		t.Fatal(err)
	}
	return lines(t, out), readReport(t, report), before, after
}

func readReport(t *testing.T, path string) testchild.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no report: %v", err)
	}
	var r testchild.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("report %s: %v", b, err)
	}
	return r
}

// checkRun checks a whole run in the flags' session: init first, a
// successful result with synth.ResultText last.
func checkRun(t *testing.T, ls []line) {
	t.Helper()
	if len(ls) < 2 {
		t.Fatalf("%d lines", len(ls))
	}
	if first := ls[0]; first.Type != "system" || first.Subtype != "init" || first.SessionID != session {
		t.Errorf("first line %+v", first)
	}
	if last := ls[len(ls)-1]; last.Type != "result" || last.IsError || last.Result != synth.ResultText || last.SessionID != session {
		t.Errorf("last line %+v", last)
	}
}

// A measured run's report brackets its exit in the parent's clock and
// counts some CPU: what the harness subtracts from malarun's rusage.
func checkReport(t *testing.T, r testchild.Report, before, after int64) {
	t.Helper()
	if r.ExitCode != 0 || r.CPUNs <= 0 || r.ExitNs < before || r.ExitNs > after {
		t.Errorf("report %+v, want exit 0, some CPU and an exit time within [%d, %d]", r, before, after)
	}
}

func TestPartialIsARunOfAboutEnvLines(t *testing.T) {
	ls, r, before, after := runToEnd(t, testchild.Partial, []string{testchild.EnvLines + "=300"}, "-p", "--session-id", session)
	checkRun(t, ls)
	if n := len(ls); n < 290 || n > 320 {
		t.Errorf("%d lines, want about 300", n)
	}
	checkReport(t, r, before, after)
}

func TestReplaySessionRewritesEverySessionID(t *testing.T) {
	transcript, err := filepath.Abs("../../../testdata/transcripts/tool-use-success.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(recorded, []byte(session)) {
		t.Fatal("the recording already has the session: this test would prove nothing")
	}
	ls, r, before, after := runToEnd(t, testchild.ReplaySession, []string{testchild.EnvTranscript + "=" + transcript}, "--resume", session)
	if want := bytes.Count(recorded, []byte("\n")); len(ls) != want {
		t.Errorf("%d lines, want the recording's %d", len(ls), want)
	}
	for i, l := range ls {
		if l.SessionID != session {
			t.Errorf("line %d in session %q", i+1, l.SessionID)
		}
	}
	checkReport(t, r, before, after)
}

func TestImageIsOneLineOfEnvSize(t *testing.T) {
	ls, r, before, after := runToEnd(t, testchild.Image, []string{testchild.EnvSize + "=" + strconv.Itoa(1<<20)}, "--session-id", session)
	checkRun(t, ls)
	if len(ls) != 4 || ls[1].Type != "user" || ls[1].bytes < 1<<20 || ls[1].bytes > 1<<20+512 {
		t.Errorf("want init, a user line of 1 MiB and a little, a text, a result; got %d lines, the second %s of %d bytes",
			len(ls), ls[1].Type, ls[1].bytes)
	}
	checkReport(t, r, before, after)
}

func TestSilentTextMarksItsSilence(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "marker")
	const silence = 100 * time.Millisecond
	ls, r, before, after := runToEnd(t, testchild.SilentText,
		[]string{testchild.EnvMarker + "=" + marker, testchild.EnvSilence + "=" + silence.String()}, "--session-id", session)
	checkRun(t, ls)
	if len(ls) != 4 {
		t.Errorf("%d lines, want init, two texts, a result", len(ls))
	}
	checkReport(t, r, before, after)
	b, err := os.ReadFile(marker)
	if err != nil {
		t.Fatal(err)
	}
	began, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || began < before || r.ExitNs-began < silence.Nanoseconds() {
		t.Errorf("silence began at %s (err %v), exit at %d: want after %d and %v before the exit", b, err, r.ExitNs, before, silence)
	}
}

// startReading starts the child and returns the first n lines it prints:
// the handshake. The child is killed when the test ends.
func startReading(t *testing.T, cmd *exec.Cmd, n int) []string {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	br := bufio.NewReader(stdout)
	var got []string
	for range n {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("after %d lines: %v", len(got), err)
		}
		got = append(got, l)
	}
	return got
}

// checkDiedOfTERM waits for the child and checks that SIGTERM ended it.
func checkDiedOfTERM(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	err := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("want death by SIGTERM, got %v", err)
	}
}

func TestTimedHangReportsLastLineAndSIGTERM(t *testing.T) {
	report := filepath.Join(t.TempDir(), "report.json")
	cmd := child(t, testchild.TimedHang, report, nil, "--session-id", session)
	startReading(t, cmd, 4)
	sent := testchild.Monotonic()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	checkDiedOfTERM(t, cmd)
	r := readReport(t, report)
	if r.ExitCode != 143 || r.LastLineNs == 0 || r.TermNs < sent || r.TermNs < r.LastLineNs {
		t.Errorf("report %+v: want exit 143, the last line, then SIGTERM after %d", r, sent)
	}
}
