package supervisor_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/supervisor"
	"github.com/malarun/malarun/internal/testchild"
)

// failingFinal saves every record but the one that ends the run: a full
// disk at the worst moment. (CI runs as root: a read-only folder would not fail.)
type failingFinal struct {
	supervisor.RecordWriter
	refused *journal.Record
}

func (f *failingFinal) Save(r journal.Record) error {
	if r.Status != journal.Processing {
		f.refused = &r
		return errors.New("write record.json: no space left on device")
	}
	return f.RecordWriter.Save(r)
}

func TestAnUnsavedEndOfRunIsAnError(t *testing.T) {
	for _, c := range []struct {
		name      string
		behaviour string
		status    journal.Status
		says      string
	}{
		{"success", testchild.Replay, journal.Succeeded, "the run succeeded, but record the run: write record.json: no space left on device"},
		{"failure", testchild.CrashMidLine, journal.Stopped, "the run ended: retries exhausted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, c.behaviour)
			f := &failingFinal{}
			h.records = func(w supervisor.RecordWriter) supervisor.RecordWriter { f.RecordWriter = w; return f }
			_, err, _ := h.run()
			if err == nil || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), `may still say "processing"`) {
				t.Fatalf("err = %v, want one that says %q and that the record may be stale", err, c.says)
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
			if lerr != nil || !ok || rec.Status != journal.Processing {
				t.Errorf("record on disk: %v %v %v; the test must leave it at processing", rec.Status, ok, lerr)
			}
		})
	}
}

func journalOf(t *testing.T, h *harness) (journal.Record, bool, error) {
	t.Helper()
	e, ok := journal.Read(h.cfg.StateDir, h.cfg.IssueID)
	return e.Record, ok, e.Err
}
