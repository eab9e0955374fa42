package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// A shutdown signal in each phase of a run ends it at once, resumably,
// with 128 + the signal. Each phase is reached by a handshake: a log line
// malarun wrote, or a thread blocked opening a FIFO. The four signals take
// turns over the phases, so each meets several.
func TestSignalInEveryPhase(t *testing.T) {
	t.Parallel() // a malarun process of its own: its own folders, nothing shared
	signals := []syscall.Signal{syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGINT, syscall.SIGTERM}
	type phase struct {
		name string
		// start returns the process, what to wait for before signalling,
		// and the status the record must then have ("" for none at all).
		start func(t *testing.T) (p *proc, ready func() bool, status record.Status)
	}
	logHolds := func(p *proc, stderr, msg string) func() bool {
		return func() bool { return testchild.FileHolds(stderr, `"message":"`+msg+`"`) }
	}
	withStderr := func(t *testing.T, p *proc) string {
		path := filepath.Join(t.TempDir(), "stderr")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		p.start(nil, f)
		return path
	}
	phases := []phase{
		{"prompt read", func(t *testing.T) (*proc, func() bool, record.Status) {
			fifo := filepath.Join(t.TempDir(), "prompt")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			p := newProc(t, "issue-phase", testchild.Replay, nil)
			p.cmd.Args[3] = fifo
			p.start(nil, nil)
			return p, func() bool { return blockedOnFIFO(p.cmd.Process.Pid) }, ""
		}},
		{"attempt", func(t *testing.T) (*proc, func() bool, record.Status) {
			p := scenarioHangResumed(t).proc(t, "issue-phase")
			p.start(nil, nil)
			return p, func() bool { return p.transcriptHolds(1, `"name":"Bash"`) }, record.Interrupted
		}},
		{"stopping a hang", func(t *testing.T) (*proc, func() bool, record.Status) {
			// claude ignores SIGTERM, and kill_grace is long: only the
			// signal's shutdown_grace ends the wait.
			p := newProc(t, "issue-phase", testchild.IgnoreTerm, nil,
				"--idle-timeout", "1s", "--kill-grace", "10m", "--shutdown-grace", "1s", "--max-attempts", "3")
			return p, logHolds(p, withStderr(t, p), "hang detected: no output within the limit"), record.Interrupted
		}},
		{"backoff", func(t *testing.T) (*proc, func() bool, record.Status) {
			s := scenarioHangResumed(t)
			p := newProc(t, "issue-phase", s.behaviour, s.env, "--idle-timeout", "30s", "--tool-timeout", "1s",
				"--max-attempts", "3", "--backoff", "10m")
			return p, logHolds(p, withStderr(t, p), "waiting before the next attempt"), record.Interrupted
		}},
		{"usage limit wait", func(t *testing.T) (*proc, func() bool, record.Status) {
			p := newProc(t, "issue-phase", testchild.UsageLimited,
				[]string{testchild.EnvResetsAt + "=" + strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)}, "--limit-wait", "2h")
			return p, logHolds(p, withStderr(t, p), "usage limit: waiting for the reset, then resuming the session"), record.Waiting
		}},
	}
	for i, ph := range phases {
		sig := signals[i%len(signals)]
		t.Run(fmt.Sprintf("%s/%v", ph.name, sig), func(t *testing.T) {
			p, ready, status := ph.start(t)
			if !testchild.WaitUntil(exitLimit, nil, ready) {
				t.Fatalf("the run never reached %s", ph.name)
			}
			sent := time.Now()
			p.cmd.Process.Signal(sig)
			if code, want := p.wait(), 128+int(sig); code != want {
				t.Fatalf("exit %d, want %d", code, want)
			}
			// Far below the waits the phase was in (10 minutes of kill_grace
			// or backoff, an hour's limit): the signal cut them short.
			if took := time.Since(sent); took > 30*time.Second {
				t.Errorf("malarun took %v to stop", took)
			}
			e, ok := journal.Read(p.stateDir, p.issue)
			switch {
			case status == "" && ok:
				t.Errorf("a record was written before anything started: %+v", e.Record)
			case status != "" && (!ok || e.Err != nil || e.Record.Status != status || e.Record.Reclaims != 0 || len(e.Record.Tree) != 0):
				t.Errorf("record %+v (%v), want status %s, no reclaim, no tree", e.Record, e.Err, status)
			}
			assertNothingLeft(t, p)
		})
	}
}

// blockedOnFIFO reports whether a thread of pid is blocked opening a FIFO.
func blockedOnFIFO(pid int) bool {
	chans, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/wchan", pid))
	for _, c := range chans {
		if b, _ := os.ReadFile(c); string(b) == "wait_for_partner" {
			return true
		}
	}
	return false
}
