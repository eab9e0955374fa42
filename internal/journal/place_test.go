package journal

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/testing/recordtest"
)

// A record is followed only from the issue folder it belongs to, and its
// run folder is always that issue's runs/<run id>: never a path from the file.
func TestRecordIsCheckedAgainstItsFolder(t *testing.T) {
	state := t.TempDir()
	dir := filepath.Join(state, "issue-1")
	os.MkdirAll(dir, 0o700)
	write := func(r record.Record) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, RecordFile), recordtest.Raw(t, r), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := recordtest.Sample()
	r.RunDir = filepath.Join(dir, "runs", recordtest.RunID)
	write(r)
	if e, ok := Read(state, "issue-1"); !ok || e.Err != nil || e.Record.RunDir != r.RunDir {
		t.Fatalf("a record in place: %+v", e)
	}
	// A state directory restored at another path: the run folder is where
	// the record is now.
	r.RunDir = filepath.Join("/old/state/issue-1/runs", recordtest.RunID)
	write(r)
	if e, _ := Read(state, "issue-1"); e.Err != nil || e.Record.RunDir != filepath.Join(dir, "runs", recordtest.RunID) {
		t.Fatalf("a moved state dir: %+v", e)
	}
	for name, edit := range map[string]func(*record.Record){
		"run dir elsewhere":    func(r *record.Record) { r.RunDir = "/home/victim/project/" + recordtest.RunID },
		"run dir of an issue":  func(r *record.Record) { r.RunDir = filepath.Join(state, "issue-2", "runs", recordtest.RunID) },
		"run dir of a sibling": func(r *record.Record) { r.RunDir = filepath.Join(dir, "runs", "20261122T120401Z-000000") },
		"run dir not in runs":  func(r *record.Record) { r.RunDir = filepath.Join(dir, "x", recordtest.RunID) },
		"another issue's":      func(r *record.Record) { r.Issue, r.Marker = "issue-2", "issue-2/"+recordtest.RunID },
		"run dir relative":     func(r *record.Record) { r.RunDir = filepath.Join("issue-1", "runs", recordtest.RunID) },
		"run dir with dot-dots": func(r *record.Record) {
			r.RunDir = filepath.Join(dir, "runs") + "/../../issue-1/runs/" + recordtest.RunID
		},
	} {
		r := recordtest.Sample()
		edit(&r)
		write(r)
		e, ok := Read(state, "issue-1")
		var de *decodeError
		if !ok || !errors.As(e.Err, &de) || !strings.Contains(e.Err.Error(), "--reset") {
			t.Errorf("%s: read as %+v, %v", name, e.Record, e.Err)
		}
	}
}

func TestHugeRecordIsDamagedWithoutReadingIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), RecordFile)
	f, _ := os.Create(path)
	f.Truncate(maxRecordBytes + 1) // sparse: costs no disk
	f.Close()
	_, err := ReadRecord(path)
	var de *decodeError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "larger than any record") {
		t.Fatalf("err = %v", err)
	}
}

// The ids malarun draws are the ones a record accepts.
func TestNewIDsAreValid(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 4, 1, 0, time.UTC)
	if id := NewRunID(now); !record.ValidRunID(id) || !strings.HasPrefix(id, "20261122T120401Z-") {
		t.Errorf("NewRunID = %q", id)
	}
	if a, b := NewUUID(), NewUUID(); !record.ValidSessionID(a) || a == b {
		t.Errorf("NewUUID = %q, then %q", a, b)
	}
}
