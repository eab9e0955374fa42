package journal

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/testing/recordtest"
)

// A FIFO (or a huge sparse file) planted as an issue's record or lock
// holds nothing: reading is refused at once as a damaged record, taking
// the lock fails at once, and the listing goes on with the other issues
// (issue 32).
func TestPlantedRecordAndLockNeverHang(t *testing.T) {
	state := t.TempDir()
	for _, issue := range []string{"fifo-record", "huge-record", "fifo-lock", "good"} {
		if err := os.MkdirAll(filepath.Join(state, issue), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(state, "fifo-record", RecordFile), 0o600); err != nil {
		t.Fatal(err)
	}
	if f, err := os.Create(filepath.Join(state, "huge-record", RecordFile)); err != nil {
		t.Fatal(err)
	} else {
		f.Truncate(3 << 30)
		f.Close()
	}
	if err := syscall.Mkfifo(filepath.Join(state, "fifo-lock", LockFile), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "good", RecordFile), recordtest.Encoded(t, recordtest.Sample()), 0o600); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	for _, issue := range []string{"fifo-record", "huge-record"} {
		e, ok := Read(state, issue)
		var de *decodeError
		if !ok || !errors.As(e.Err, &de) {
			t.Errorf("%s: ok %v, err %v, want a damaged record", issue, ok, e.Err)
		}
	}
	if _, err := Acquire(state, "fifo-lock", "test"); err == nil || !strings.Contains(err.Error(), "is not a regular file") {
		t.Errorf("a FIFO lock: %v", err)
	}
	entries, err := List(state)
	if err != nil {
		t.Fatal(err)
	}
	// Every issue is listed, each with its own verdict: one planted file
	// does not stop the listing of the others.
	var listed []string
	for _, e := range entries {
		listed = append(listed, e.Issue)
	}
	if got := strings.Join(listed, " "); got != "fifo-record good huge-record" {
		t.Errorf("listed %q", got)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("took %v", took)
	}
}
