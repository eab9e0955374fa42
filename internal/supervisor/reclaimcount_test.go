package supervisor_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// editRecord sets fields of the issue's record as a file (what a malarun
// killed outright leaves: processing, its lock free).
func editRecord(t *testing.T, h *harness, fields map[string]any) {
	t.Helper()
	path := filepath.Join(h.cfg.StateDir, h.cfg.IssueID, journal.RecordFile)
	b, _ := os.ReadFile(path)
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for k, v := range fields {
		raw[k] = v
	}
	b, _ = json.Marshal(raw)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// After a takeover the counts are the run's: the attempt killed with the
// dead malarun is one of them (and uses none of max_attempts), and the
// takeover is kept after the run ends.
func TestReclaimKeepsTheRunsCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := interruptedRun(t)
		rec := recordOf(t, h)
		// The dead malarun's attempt: started (its transcript exists), never
		// recorded as finished.
		editRecord(t, h, map[string]any{"status": "processing", "attempts": 0})
		// This invocation's one attempt crashes. max_attempts is 1: were the
		// killed attempt charged, the run would have used 2 of it.
		crashNext(t, h)
		rep, err, _ := h.run()
		wantKind(t, err, outcome.RetriesExhausted, "1 attempts, the most max_attempts allows")
		if rep.Attempts != 2 || len(rep.History) != 1 || rep.History[0].N != 2 || rep.Reclaims != 1 || !rep.Reclaimed {
			t.Errorf("report: attempts %d, history %d, reclaims %d, reclaimed %v", rep.Attempts, len(rep.History), rep.Reclaims, rep.Reclaimed)
		}
		r := recordOf(t, h)
		if r.Attempts != 2 || r.RunReclaims != 1 || r.Reclaims != 0 || r.RunID != rec.RunID {
			t.Errorf("record: attempts %d, run_reclaims %d, reclaims %d", r.Attempts, r.RunReclaims, r.Reclaims)
		}
	})
}

// Two malaruns died on the run, each with an attempt running: both
// attempts count, and neither uses max_attempts.
func TestTwoReclaimsChargeNoKilledAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := interruptedRun(t)
		rec := recordOf(t, h)
		// What the first reclaim recorded (attempt 1 killed), then a second
		// malarun killed during attempt 2.
		editRecord(t, h, map[string]any{"status": "processing", "attempts": 1, "killed_attempts": 1, "run_reclaims": 1, "reclaims": 1})
		if err := os.WriteFile(filepath.Join(rec.RunDir, "attempt-2.jsonl"), []byte(testchild.InitLine+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		crashNext(t, h)
		rep, err, _ := h.run()
		wantKind(t, err, outcome.RetriesExhausted, "1 attempts, the most max_attempts allows")
		r := recordOf(t, h)
		if rep.Attempts != 3 || r.Attempts != 3 || r.KilledAttempts != 2 || r.RunReclaims != 2 || rep.Reclaims != 2 {
			t.Errorf("after two reclaims: report attempts %d reclaims %d; record attempts %d killed %d run_reclaims %d",
				rep.Attempts, rep.Reclaims, r.Attempts, r.KilledAttempts, r.RunReclaims)
		}
	})
}

// crashNext makes the next attempt's claude exit 1 after its init line.
func crashNext(t *testing.T, h *harness) {
	h.cfg.Env = testchild.Env(testchild.Replay, testchild.EnvArgsFile+"="+h.args, testchild.EnvExit+"=1",
		testchild.EnvTranscript+"="+transcriptFile(t, testchild.InitLine))
}
