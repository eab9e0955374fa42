package supervisor_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/supervisor"
	"github.com/malarun/malarun/internal/testing/qemutest"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// failingFinal saves every record but the one that ends the run: a full
// disk at the worst moment. (CI runs as root: a read-only folder would not fail.)
type failingFinal struct {
	supervisor.RecordWriter
	refused *record.Record
}

func (f *failingFinal) Save(r record.Record) error {
	if r.Status != record.Processing {
		f.refused = &r
		return errors.New("write record.json: no space left on device")
	}
	return f.RecordWriter.Save(r)
}

// The error the command exits with is also the run's end in the report
// and the finished event: malarun's own trouble (outcome error, exit 1),
// never the end the record could not keep, nor its usage limit.
func TestAnUnsavedEndOfRunIsAnError(t *testing.T) {
	for _, c := range []struct {
		name    string
		harness func(t *testing.T) *harness
		status  record.Status
		says    string
	}{
		{"success", func(t *testing.T) *harness { return newHarness(t, testchild.Replay) }, record.Succeeded,
			"the run succeeded, but record the run: write record.json: no space left on device"},
		{"failure", func(t *testing.T) *harness { return newHarness(t, testchild.CrashMidLine) }, record.Stopped, "the run ended: retries exhausted"},
		{"a usage limit", func(t *testing.T) *harness {
			h, _ := limited(t, time.Now().Add(time.Hour).Truncate(time.Second))
			h.cfg.LimitWait = time.Minute
			return h
		}, record.Waiting, "the run ended: rate or usage limit reached: usage limit (five_hour)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := c.harness(t)
				f := &failingFinal{}
				h.records = func(w supervisor.RecordWriter) supervisor.RecordWriter { f.RecordWriter = w; return f }
				var finished []event.Event
				h.observer = func(e event.Event) {
					if e.Kind == event.RunFinished {
						finished = append(finished, e)
					}
				}
				rep, err, _ := h.run()
				if err == nil || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), `may still say "processing"`) {
					t.Fatalf("err = %v, want one that says %q and that the record may be stale", err, c.says)
				}
				if len(finished) != 1 || finished[0].Outcome != string(outcome.Error) || finished[0].ExitCode != 1 ||
					finished[0].Reason != err.Error() || finished[0].UsageLimit != (record.UsageLimit{}) {
					t.Errorf("finished events %+v, want one saying the error the run exits with (error, exit 1, no limit)", finished)
				}
				if rep.UsageLimit != (record.UsageLimit{}) {
					t.Errorf("the report names the limit %+v, want none: the run exits 1, not 75", rep.UsageLimit)
				}
				var re *supervisor.RunError
				if errors.As(err, &re) {
					// A plain error is malarun's own trouble: exit 1, never the run's own code.
					t.Errorf("err is a RunError of kind %v; want a plain error", re.Kind)
				}
				if f.refused == nil || f.refused.Status != c.status {
					t.Fatalf("the refused save was %+v, want status %s", f.refused, c.status)
				}
				rec, ok, lerr := journalOf(t, h)
				if lerr != nil || !ok || rec.Status != record.Processing {
					t.Errorf("record on disk: %v %v %v; the test must leave it at processing", rec.Status, ok, lerr)
				}
			})
		})
	}
}

func journalOf(t *testing.T, h *harness) (record.Record, bool, error) {
	t.Helper()
	e, ok := journal.Read(h.cfg.StateDir, h.cfg.IssueID)
	return e.Record, ok, e.Err
}

// A record in processing whose lock is free is reclaimed: its malarun died.
// But when its owner is provably alive (same boot and PID namespace, the
// pid under its recorded start time), the lock file was only removed: the
// run is not taken over, even with --reset, and nothing of it is killed.
func TestLiveOwnerIsNeverTakenOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		owner := startSleeper(t) // stands in for the malarun that holds the run
		for _, reset := range []bool{false, true} {
			h := newHarness(t, testchild.Replay, testchild.EnvTranscript+"="+transcripts+"text-success.jsonl")
			h.cfg.Reset = reset
			rec := plantRecord(t, h, func(r *record.Record) {
				self := proc.Self()
				start, _ := proc.StartTime(owner.Process.Pid)
				r.Status = record.Processing
				r.Owner = record.Owner{Pid: owner.Process.Pid, Host: "box", StartedAt: time.Now(), StartTime: start, BootID: self.BootID, PidNS: self.PidNS}
				r.Tree = []record.ProcRef{{Pid: owner.Process.Pid, StartTime: start}}
			})
			_, err, _ := h.run()
			wantKind(t, err, outcome.Busy, fmt.Sprintf("pid %d on box", owner.Process.Pid))
			if !proc.Alive(owner.Process.Pid, 0) {
				t.Fatal("the live owner's recorded process was killed")
			}
			if got, _, _ := journalOf(t, h); got.Status != record.Processing || got.Reclaims != rec.Reclaims || got.Owner.Pid != owner.Process.Pid {
				t.Errorf("reset %v: the record was changed: %+v", reset, got)
			}
			if len(h.attempts()) != 0 {
				t.Errorf("reset %v: claude was started", reset)
			}
		}
	})
}

// The owner's pid alive under another start time is a stranger that
// reuses the pid: the run is reclaimed and the stranger left alone.
func TestReusedOwnerPidIsReclaimedAndLeftAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stranger := startSleeper(t)
		h := newHarness(t, testchild.ResumeAware)
		plantRecord(t, h, func(r *record.Record) {
			self := proc.Self()
			start, _ := proc.StartTime(stranger.Process.Pid)
			r.Status = record.Processing
			r.Owner = record.Owner{Pid: stranger.Process.Pid, Host: "box", StartTime: start + 1, BootID: self.BootID, PidNS: self.PidNS}
			r.Tree = []record.ProcRef{{Pid: stranger.Process.Pid, StartTime: start + 1}}
		})
		if _, err, _ := h.run(); err != nil {
			t.Fatalf("reclaim: %v\n%s", err, h.logs.String())
		}
		if !proc.Alive(stranger.Process.Pid, 0) {
			t.Error("a process that only reuses a recorded pid was killed")
		}
		if got, _, _ := journalOf(t, h); got.Status != record.Succeeded {
			t.Errorf("record %+v", got)
		}
	})
}

// startSleeper starts a process that lives until the test ends.
func startSleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	qemutest.SkipReexec(t)
	cmd := exec.Command(os.Args[0])
	cmd.Env = testchild.Env(testchild.IgnoreTerm)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil { // its init line: it runs
		t.Fatal(err)
	}
	return cmd
}

// plantRecord writes a record for h's issue as a malarun that is not
// running would have left it: a run folder with its prompt, a session.
func plantRecord(t *testing.T, h *harness, edit func(*record.Record)) record.Record {
	t.Helper()
	j, err := journal.Acquire(h.cfg.StateDir, h.cfg.IssueID, "planted")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Release()
	runID := journal.NewRunID(time.Now())
	runDir := filepath.Join(j.Dir(), "runs", runID)
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(runDir, "prompt.md"), h.cfg.Prompt, 0o600)
	cwd, _ := os.Getwd()
	rec := record.Record{Issue: h.cfg.IssueID, Status: record.Interrupted, Cwd: cwd, Home: os.Getenv("HOME"),
		RunID: runID, RunDir: runDir, Runs: []string{runID}, Sessions: []string{testchild.SessionID},
		SessionID: testchild.SessionID, SessionTalked: true, Attempts: 1, Marker: h.cfg.IssueID + "/" + runID}
	edit(&rec)
	if err := j.Save(rec); err != nil {
		t.Fatal(err)
	}
	return rec
}
