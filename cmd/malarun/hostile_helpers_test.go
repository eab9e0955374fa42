package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// exitLimit bounds how long a test waits for malarun to exit: far more
// than any of these runs takes, so that only a hang reaches it.
const exitLimit = 60 * time.Second

// start starts p with stdout and stderr as given (nil: p's buffers).
func (p *proc) start(stdout, stderr io.Writer) {
	p.t.Helper()
	if stdout == nil {
		stdout = &p.stdout
	}
	if stderr == nil {
		stderr = &p.stderr
	}
	p.cmd.Stdout, p.cmd.Stderr = stdout, stderr
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	})
}

// wait waits for p to exit, at most exitLimit (a hang is a failure), and
// returns its exit code.
func (p *proc) wait() int {
	p.t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		return exitCode(p.t, err)
	case <-time.After(exitLimit):
		p.cmd.Process.Kill()
		<-done
		p.t.Fatalf("malarun did not exit within %v: it hangs; stderr:\n%s", exitLimit, p.stderr.String())
		return -1
	}
}

// again is a new malarun process for the same issue, state and prompt.
func (p *proc) again(args ...string) *proc {
	q := &proc{t: p.t, issue: p.issue, stateDir: p.stateDir, prompt: p.prompt}
	q.cmd = exec.Command(p.cmd.Path, append(append([]string(nil), p.cmd.Args[1:]...), args...)...)
	q.cmd.Env, q.cmd.Dir = p.cmd.Env, p.cmd.Dir
	return q
}

// transcriptHolds reports whether attempt n's transcript has a line with s.
func (p *proc) transcriptHolds(n int, s string) bool {
	return testchild.FileHolds(filepath.Join(p.stateDir, p.issue, "runs", "*", fmt.Sprintf("attempt-%d.jsonl", n)), s)
}

// waitTranscript waits until attempt n's transcript holds s: the fake
// claude has printed it.
func (p *proc) waitTranscript(n int, s string) {
	p.t.Helper()
	if !testchild.WaitUntil(exitLimit, nil, func() bool { return p.transcriptHolds(n, s) }) {
		p.t.Fatalf("attempt %d never printed %q; stderr:\n%s", n, s, p.stderr.String())
	}
}

// record reads the issue's record as `malarun status` would.
func (p *proc) record() record.Record {
	p.t.Helper()
	e, ok := journal.Read(p.stateDir, p.issue)
	if !ok || e.Err != nil {
		p.t.Fatalf("no readable record: %v, %v", ok, e.Err)
	}
	return e.Record
}

// recordOnce waits until the issue's record satisfies ok and returns it:
// the handshake for what malarun records after claude printed it (the
// session id, the tree), which a transcript line alone does not promise
// (under load the record was read before malarun had saved the session).
func (p *proc) recordOnce(what string, ok func(record.Record) bool) record.Record {
	p.t.Helper()
	var rec record.Record
	if !testchild.WaitUntil(exitLimit, nil, func() bool {
		e, found := journal.Read(p.stateDir, p.issue)
		rec = e.Record
		return found && e.Err == nil && ok(rec)
	}) {
		p.t.Fatalf("the record never held %s; stderr:\n%s", what, p.stderr.String())
	}
	return rec
}

// hasSession: the record names the attempt's session.
func hasSession(r record.Record) bool { return r.SessionID != "" }

// claudePid is the pid of the running attempt's claude, from the record.
func (p *proc) claudePid() int {
	p.t.Helper()
	var pid int
	if !testchild.WaitUntil(exitLimit, nil, func() bool {
		e, ok := journal.Read(p.stateDir, p.issue)
		if ok && e.Err == nil && len(e.Record.Tree) > 0 {
			pid = e.Record.Tree[0].Pid
		}
		return pid != 0
	}) {
		p.t.Fatal("the record never named claude's pid")
	}
	return pid
}

// sigMask reads one of a process's signal masks (SigIgn, SigCgt, ...)
// from /proc/<pid>/status.
func sigMask(t *testing.T, pid int, field string) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
	}
	t.Fatalf("/proc/%d/status has no %s", pid, field)
	return 0
}

func sigBit(sig syscall.Signal) uint64 { return 1 << (uint(sig) - 1) }

// waitBlockedOnFIFO waits until a thread of pid is blocked opening a FIFO
// that has no partner yet (the kernel's wait_for_partner): malarun has
// reached the open, long after its signal handling was set up.
func waitBlockedOnFIFO(t *testing.T, pid int) {
	t.Helper()
	if !testchild.WaitUntil(exitLimit, nil, func() bool { return blockedOnFIFO(pid) }) {
		t.Fatalf("pid %d never blocked opening a FIFO", pid)
	}
}

// leftOf lists the live processes started for p: each has p's own HOME
// in its environment, as newProc gives it to malarun and malarun to claude.
func leftOf(p *proc) []int {
	var home string
	for _, kv := range p.cmd.Env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	var pids []int
	for _, pid := range testchild.ProcessesWithEnv("HOME=" + home) {
		if !testchild.Zombie(pid) { // a zombie is dead; its parent reaps it
			pids = append(pids, pid)
		}
	}
	return pids
}

// assertNothingLeft fails if a process of p's run is still alive.
func assertNothingLeft(t *testing.T, p *proc) {
	t.Helper()
	if left := leftOf(p); len(left) > 0 {
		t.Errorf("processes of the run are still alive: %v", left)
	}
}

// gatedRun is a run whose fake claude prints init and a tool call, then
// waits for the test to open its gate before it finishes with a success.
func gatedRun(t *testing.T, issue string, args ...string) (p *proc, open func()) {
	gate := filepath.Join(t.TempDir(), "gate")
	transcript := writeTranscript(t, testchild.InitLine, testchild.ToolLine, testchild.ToolDone, testchild.TextLine, testchild.Result)
	p = newProc(t, issue, testchild.Gated, []string{testchild.EnvTranscript + "=" + transcript, testchild.EnvLines + "=2",
		testchild.EnvGate + "=" + gate}, args...)
	return p, func() {
		if err := os.WriteFile(gate, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// readUntil reads r until s has been read (or r ends) and returns what it read.
func readUntil(r io.Reader, s string) string {
	var got []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(got, []byte(s)) {
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			break
		}
	}
	return string(got)
}
