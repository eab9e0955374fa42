package e2e_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/testing/fakeapi"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// gatedTool is a Bash call that writes its shell's pid to pidFile, then
// waits until gate exists: the test decides when the tool ends. A loop of
// `timeout 0.2 tail -f /dev/null`, since 2.1.330 refuses a bare sleep
// (docs/design.md §F18).
func gatedTool(pidFile, gate string) fakeapi.Step {
	return fakeapi.Bash(`echo $$ > ` + pidFile + `; timeout 60 sh -c 'until [ -e ` + gate + ` ]; do timeout 0.2 tail -f /dev/null; done'`)
}

// waitPid waits until the tool wrote its pid, and returns it.
func waitPid(t *testing.T, pidFile string) int {
	t.Helper()
	var pid int
	if !testchild.WaitUntil(2*time.Minute, nil, func() bool {
		b, err := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	}) {
		t.Fatal("the tool never ran")
	}
	return pid
}

func (e *env) record() record.Record {
	e.t.Helper()
	en, ok := journal.Read(filepath.Join(e.home, "state"), "issue-e2e")
	if !ok || en.Err != nil {
		e.t.Fatalf("no readable record: %v %v", ok, en.Err)
	}
	return en.Record
}

// The terminal closes while the real CLI runs a tool (a laptop lid, a
// dropped ssh session): SIGHUP, then EIO on every write. The run stops
// with exit 129, the CLI and the tool are gone, the record says
// interrupted, and the next invocation resumes the session.
func TestRealCLIClosedTerminalIsResumed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile, gate := filepath.Join(dir, "tool.pid"), filepath.Join(dir, "gate")
	e := newEnv(t, gatedTool(pidFile, gate), fakeapi.Text("Resumed and done."))
	cmd, _, _ := e.command("--idle-timeout", "1m", "--shutdown-grace", "3s")
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	started := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	go io.Copy(io.Discard, ptmx) // a terminal that is read
	tool := waitPid(t, pidFile)
	session := e.record().SessionID
	ptmx.Close()
	// Its output went to the terminal: nothing to show from these buffers.
	e.wait(cmd, &bytes.Buffer{}, &bytes.Buffer{}, started).wantCode(t, 129)
	if proc.Alive(tool, 0) {
		t.Errorf("the tool (pid %d) outlived malarun", tool)
	}
	if pids := e.processes(); len(pids) > 0 {
		t.Errorf("processes of the run left: %v", pids)
	}
	rec := e.record()
	if rec.Status != record.Interrupted || rec.Reclaims != 0 || len(rec.OutputFailures) != 1 || rec.OutputFailures[0].Output != "stderr" {
		t.Errorf("record: status %s, reclaims %d, output failures %+v", rec.Status, rec.Reclaims, rec.OutputFailures)
	}
	os.WriteFile(gate, nil, 0o600) // a rerun of the tool would end at once
	r := e.run("--idle-timeout", "1m")
	r.wantCode(t, 0)
	if rec := e.record(); rec.SessionID != session || rec.Status != record.Succeeded || rec.Reclaims != 0 {
		t.Errorf("the next invocation: session %s (want %s), status %s, reclaims %d", rec.SessionID, session, rec.Status, rec.Reclaims)
	}
}

// The log reader goes away mid-run (`malarun ... 2>&1 | head`): the run
// goes on to the CLI's result, which reaches stdout; the record notes when
// stderr was lost.
func TestRealCLILogReaderGone(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile, gate := filepath.Join(dir, "tool.pid"), filepath.Join(dir, "gate")
	e := newEnv(t, gatedTool(pidFile, gate), fakeapi.Text("Done despite the closed log."))
	cmd, stdout, _ := e.command("--idle-timeout", "1m")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = w
	started := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	waitPid(t, pidFile)
	r.Close()
	os.WriteFile(gate, nil, 0o600)
	res := e.wait(cmd, stdout, &bytes.Buffer{}, started)
	res.wantCode(t, 0)
	if res.stdout != "Done despite the closed log.\n" {
		t.Errorf("stdout %q", res.stdout)
	}
	rec := e.record()
	if rec.Status != record.Succeeded || len(rec.OutputFailures) != 1 || !strings.Contains(rec.OutputFailures[0].Error, "broken pipe") {
		t.Errorf("record: status %s, output failures %+v", rec.Status, rec.OutputFailures)
	}
}

// The lock file is removed while the real CLI works (a cleanup job): a
// second malarun for the issue exits 7 and leaves the run alone, which
// then ends as it would have.
func TestRealCLIRemovedLockKeepsTheRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile, gate := filepath.Join(dir, "tool.pid"), filepath.Join(dir, "gate")
	e := newEnv(t, gatedTool(pidFile, gate), fakeapi.Text("The first malarun finished."))
	started := time.Now()
	cmd, stdout, stderr := e.start("--idle-timeout", "1m")
	tool := waitPid(t, pidFile)
	if err := os.Remove(filepath.Join(e.home, "state", "issue-e2e", journal.LockFile)); err != nil {
		t.Fatal(err)
	}
	second := e.run("--idle-timeout", "1m")
	second.wantCode(t, 7)
	if !proc.Alive(tool, 0) {
		t.Fatal("the second malarun killed the first one's tool")
	}
	os.WriteFile(gate, nil, 0o600)
	first := e.wait(cmd, stdout, stderr, started)
	first.wantCode(t, 0)
	if first.stdout != "The first malarun finished.\n" || strings.Contains(first.stderr, "file exists") {
		t.Errorf("first malarun: stdout %q\n%s", first.stdout, first.stderr)
	}
}

// A result of 3 MiB from the real CLI, with text that needs escaping: on
// stdout and in the --json report byte for byte (the decoder keeps 1 MiB;
// the rest is copied from the transcript).
func TestRealCLIResultOverOneMiBIsWhole(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for b.Len() < 3<<20 {
		b.WriteString("line with \"quotes\", a \\ backslash, <html> & é 😀\ttab\n")
	}
	text := b.String()
	e := newEnv(t, fakeapi.Text(text), fakeapi.Text(text))
	r := e.run()
	r.wantCode(t, 0)
	if got, want := sha256.Sum256([]byte(r.stdout)), sha256.Sum256([]byte(text+"\n")); got != want {
		t.Errorf("stdout: %d bytes, want %d, not the same", len(r.stdout), len(text)+1)
	}
	// A second run of the issue, as a report.
	r = e.run("--json")
	r.wantCode(t, 0)
	var report struct {
		Result          string `json:"result"`
		ResultTruncated bool   `json:"result_truncated"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &report); err != nil {
		t.Fatal(err)
	}
	if report.Result != text || report.ResultTruncated {
		t.Errorf("the report's result: %d bytes, truncated %v, want %d bytes", len(report.Result), report.ResultTruncated, len(text))
	}
}
