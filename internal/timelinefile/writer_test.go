package timelinefile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/timeline"
)

// A FIFO or a symbolic link planted as a run folder's timeline: the
// writer neither blocks on the FIFO nor appends through the link; it keeps
// the failure (the supervisor warns once) and writes nothing.
func TestWriterRefusesPlantedFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "elsewhere")
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, link} {
		start := time.Now()
		w := NewWriter(path)
		w.Append(timeline.Entry{Event: "run_started", Issue: "i"})
		if w.err == nil || time.Since(start) > time.Second {
			t.Errorf("%s: err %v after %v", path, w.err, time.Since(start))
		}
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Errorf("the link's target was written: %v", err)
	}
	good := filepath.Join(dir, timeline.FileName)
	w := NewWriter(good)
	w.Append(timeline.Entry{Event: "run_started", Issue: "i"})
	if b, _ := os.ReadFile(good); w.err != nil || !strings.Contains(string(b), `"event":"run_started"`) {
		t.Errorf("a regular timeline: %v, %q", w.err, b)
	}
}
