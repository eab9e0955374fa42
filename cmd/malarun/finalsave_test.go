package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/record"

	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/supervisor"
	"github.com/malarun/malarun/internal/testing/testchild"
	"github.com/malarun/malarun/internal/ui"
)

// refuseFinalSave saves every record but the one that ends the run: a
// disk that fills at the worst moment.
type refuseFinalSave struct{ supervisor.RecordWriter }

func (f refuseFinalSave) Save(r record.Record) error {
	if r.Status != record.Processing {
		return errors.New("write record.json: no space left on device")
	}
	return f.RecordWriter.Save(r)
}

// TestAFailedFinalSaveIsReclaimed is the exit code table's row for
// outcome error, acted out: the run succeeds, its last save fails, malarun
// exits 1 with outcome error and the row says as_recorded; the record still
// says processing, so the next invocation reclaims the run and resumes the
// same session.
func TestAFailedFinalSaveIsReclaimed(t *testing.T) {
	c := newCLI(t)
	state, prompt := t.TempDir(), c.prompt()
	for _, kv := range testchild.Env(testchild.Replay) {
		k, v, _ := strings.Cut(kv, "=")
		c.env[k] = v
	}
	invoke := func(records func(supervisor.RecordWriter) supervisor.RecordWriter) (int, ui.Report) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		d := &deps{stdin: c.stdin, stdout: &stdout, stderr: &stderr, signals: c.signals,
			getenv: func(k string) string { return c.env[k] }, environ: c.environ,
			runSupervisor: func(ctx context.Context, cfg supervisor.Config, sd supervisor.Deps) (event.Report, error) {
				sd.Records = records
				return supervisor.Run(ctx, cfg, sd)
			}}
		code := execute(context.Background(), []string{"issue-1", "--prompt", prompt, "--json", "--claude-bin", os.Args[0],
			"--state-dir", state, "--backoff", "0s"}, d)
		return code, checkReport(t, stdout.String())
	}

	code, first := invoke(func(w supervisor.RecordWriter) supervisor.RecordWriter { return refuseFinalSave{w} })
	if code != 1 || first.Outcome != "error" || !strings.Contains(first.Reason, "the run succeeded, but record the run") {
		t.Fatalf("exit %d, outcome %q, reason %q; want 1, error, the unsaved success", code, first.Outcome, first.Reason)
	}
	var row *exitRow
	for _, r := range exitCodes() {
		if r.code == code && string(r.outcome) == first.Outcome {
			row = &r
		}
	}
	if row == nil || row.next != nextAsRecorded {
		t.Fatalf("exit %d outcome %s: the table's row %+v, want next %q", code, first.Outcome, row, nextAsRecorded)
	}
	e, ok := journal.Read(state, "issue-1")
	if !ok || e.Err != nil || e.Record.Status != record.Processing || e.Record.SessionID != first.SessionID || first.SessionID == "" {
		t.Fatalf("record after the failed save: %+v %v; want processing in session %q", e.Record, e.Err, first.SessionID)
	}

	var resumed recordSaves
	code, next := invoke(func(w supervisor.RecordWriter) supervisor.RecordWriter { resumed.RecordWriter = w; return &resumed })
	if code != 0 || next.Outcome != "success" {
		t.Fatalf("next invocation: exit %d, outcome %q (%s)", code, next.Outcome, next.Reason)
	}
	if len(next.Attempts) != 1 || !next.Attempts[0].Resume || next.Attempts[0].Session != first.SessionID || next.RunDir != first.RunDir {
		t.Errorf("next invocation: run %s attempts %+v; want the same run %s resuming session %s", next.RunDir, next.Attempts, first.RunDir, first.SessionID)
	}
	if len(resumed.saved) == 0 || resumed.saved[0].Reclaims != 1 {
		t.Errorf("the next invocation's first save %+v; want one reclaim counted", resumed.saved)
	}
	if e, _ := journal.Read(state, "issue-1"); e.Record.Reclaims != 0 || e.Record.Status != record.Succeeded {
		t.Errorf("record after the reclaim: status %s, reclaims %d; want succeeded, 0 (a success ends the streak)", e.Record.Status, e.Record.Reclaims)
	}
}

// recordSaves keeps every record saved durably.
type recordSaves struct {
	supervisor.RecordWriter
	saved []record.Record
}

func (r *recordSaves) Save(rec record.Record) error {
	r.saved = append(r.saved, rec)
	return r.RecordWriter.Save(rec)
}
