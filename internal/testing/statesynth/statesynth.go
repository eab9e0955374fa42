// Package statesynth writes state directories as an attacker would leave
// them, through malarun's own encoders, for the tests and benchmarks of
// what reads them (malarun summary's bounds, issue 49). Test support: the
// malarun binary never links it. (Not in internal/testing/synth: the
// journal's tests use synth's transcripts, and this imports the journal.)
package statesynth

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/timeline"
)

// Hostile says what HostileStateDir plants: Issues records (a stopped run
// each, its reason short, but for BigReasons of them whose reasons are
// ReasonBytes long, each different), and one issue whose timeline holds
// Phases hangs, each in a phase of its own name (200 bytes). They are the
// state directories of issue 49's bounds: 20,000 issues with ten 10 MB
// reasons, and a timeline of 300,000 distinct phases.
type Hostile struct {
	Issues      int
	BigReasons  int
	ReasonBytes int
	Phases      int
}

// HostileStateDir writes h into stateDir as malarun would write each file
// (records through record.Encode, so each is one malarun could write;
// a timeline of entries), with the contents an attacker picks.
func HostileStateDir(stateDir string, h Hostile) error {
	started := time.Date(2026, 11, 26, 22, 0, 0, 0, time.UTC)
	for i := range h.Issues {
		// A reason of its own, even with its digits left out (a group each).
		reason := fmt.Sprintf("no output for %ds while writing text (3 attempts): variant %s", 60+i%7, letters(i))
		if i < h.BigReasons {
			// Plain words, so that the record stays under the 16 MiB a
			// record may be (JSON escapes would make it several times
			// larger: a damaged record, not a long reason).
			reason = fmt.Sprintf("%d: ", i) + strings.Repeat("the model said so ", h.ReasonBytes/18)
		}
		if err := writeRecord(stateDir, fmt.Sprintf("issue-%05d", i), reason, started.Add(time.Duration(i)*time.Second)); err != nil {
			return err
		}
	}
	if h.Phases == 0 {
		return nil
	}
	const issue = "phases-1"
	if err := writeRecord(stateDir, issue, "hung", started); err != nil {
		return err
	}
	runDir := filepath.Join(stateDir, issue, "runs", runID(started))
	f, err := os.OpenFile(filepath.Join(runDir, timeline.FileName), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	pad := strings.Repeat("p", 190)
	for i := range h.Phases {
		e := timeline.Entry{Time: started.Add(time.Duration(i) * time.Millisecond), Event: "hang_detected", Issue: issue,
			Phase: fmt.Sprintf("%08d%s", i, pad), LimitMS: 60000}
		line, err := json.Marshal(e)
		if err != nil {
			f.Close()
			return err
		}
		w.Write(line)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// letters is n in the letters a to z: "a", "b", ... "ba".
func letters(n int) string {
	s := string(rune('a' + n%26))
	for n /= 26; n > 0; n /= 26 {
		s = string(rune('a'+n%26)) + s
	}
	return s
}

func runID(started time.Time) string { return started.UTC().Format("20060102T150405Z") + "-0a1b2c" }

// writeRecord writes a stopped run's record for issue (its run folder
// made, empty).
func writeRecord(stateDir, issue, reason string, started time.Time) error {
	id := runID(started)
	runDir := filepath.Join(stateDir, issue, "runs", id)
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		return err
	}
	r := record.Record{Issue: issue, Status: record.Stopped, Reason: reason, ExitCode: 3, CostUSD: 0.0002, TotalCostUSD: 0.0002,
		Cwd: "/work", RunID: id, RunDir: runDir, Runs: []string{id}, Marker: issue + "/" + id, Attempts: 3,
		StartedAt: started, UpdatedAt: started.Add(time.Minute), Owner: record.Owner{Pid: 4242, Host: "runner-1", StartedAt: started}}
	data, err := record.Encode(r)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(stateDir, issue, journal.RecordFile), data, 0o600)
}
