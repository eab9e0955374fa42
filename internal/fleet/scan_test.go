package fleet

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/timeline"
)

// TestHostileStateIsNamedNeverFollowed: what a state directory can hold
// that malarun never wrote is counted and named, and nothing in it hangs
// the scan or is followed: a timeline that is a FIFO, a link or a sparse
// file of a gigabyte, a running attempt's transcript that is a FIFO, a
// record that is a link to another issue's, an issue folder that is a
// link (named, not followed: it could lead anywhere), the not-run folder
// as a link.
func TestHostileStateIsNamedNeverFollowed(t *testing.T) {
	dir := t.TempDir()
	spec := func(id string) issueSpec {
		return issueSpec{id: id, status: record.Succeeded, cost: 0.1, started: at(0, 0), attempts: 1,
			timeline: []timeline.Entry{finishedLine(at(0, 5), "success", 0, 0.1, stream.Tokens{InputTokens: 1})}}
	}
	fifoTimeline := writeIssue(t, dir, spec("fifo-timeline"))
	replace(t, filepath.Join(fifoTimeline, timeline.FileName), func(p string) error { return syscall.Mkfifo(p, 0o600) })
	linkTimeline := writeIssue(t, dir, spec("link-timeline"))
	replace(t, filepath.Join(linkTimeline, timeline.FileName), func(p string) error { return os.Symlink("/etc/passwd", p) })
	sparse := writeIssue(t, dir, spec("sparse-timeline"))
	replace(t, filepath.Join(sparse, timeline.FileName), func(p string) error {
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		defer f.Close()
		return f.Truncate(1 << 30)
	})
	running := spec("fifo-transcript")
	running.status, running.transcript = record.Processing, []string{"{}"}
	runDir := writeIssue(t, dir, running)
	replace(t, filepath.Join(runDir, "attempt-2.jsonl"), func(p string) error { return syscall.Mkfifo(p, 0o600) })
	j, err := journal.Acquire(dir, "fifo-transcript", "pid 1")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Release()
	writeIssue(t, dir, spec("linked-record"))
	replace(t, filepath.Join(dir, "linked-record", journal.RecordFile), func(p string) error {
		return os.Symlink(filepath.Join(dir, "fifo-timeline", journal.RecordFile), p)
	})
	for _, name := range []string{"-rf", "..hidden", "a b", "tab\there", "UPPER"} {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	elsewhere := t.TempDir()
	writeIssue(t, elsewhere, spec("moved-away"))
	for link, to := range map[string]string{"moved-away": filepath.Join(elsewhere, "moved-away"), "dangling\x1b[31m": "/nowhere",
		"not-run": elsewhere} {
		if err := os.Symlink(to, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}

	done := make(chan struct{})
	var sc Scanned
	go func() {
		defer close(done)
		sc, err = Scan(dir, Options{ValidID: validID, Now: nightNow})
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the scan did not end in a minute: something blocked it")
	}
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Issue{}
	for _, is := range sc.Issues {
		got[is.ID] = is
	}
	if _, ok := got["moved-away"]; ok {
		t.Errorf("the issue folder that is a link was followed")
	}
	if want := []string{"dangling^[[31m", "moved-away", "not-run"}; !slices.Equal(sc.Linked, want) {
		t.Errorf("links named %q, want %q (inert)", sc.Linked, want)
	}
	if !strings.Contains(sc.NotRunError, "not a folder") {
		t.Errorf("the not-run folder as a link: %q, want it refused", sc.NotRunError)
	}
	for id, want := range map[string]string{"fifo-timeline": "timeline: ", "link-timeline": "timeline: ", "linked-record": "issue record"} {
		if is := got[id]; !strings.HasPrefix(is.Damaged, want) {
			t.Errorf("%s: status %q, damage %q; want it damaged (%s...)", id, is.Status, is.Damaged, want)
		}
	}
	if is := got["sparse-timeline"]; is.Damaged != "" || is.Outcome != "" {
		t.Errorf("a gigabyte of zeros as the timeline: damage %q, outcome %q; want no entry and no damage (nothing there is an entry)", is.Damaged, is.Outcome)
	}
	if is := got["fifo-transcript"]; is.Running != 2 || is.Phase != "" {
		t.Errorf("a FIFO as the running transcript: attempt %d, phase %q; want attempt 2, phase unknown", is.Running, is.Phase)
	}
	if len(sc.Skipped) != 5 {
		t.Errorf("skipped %q, want the 5 folders that are not issue ids", sc.Skipped)
	}
	s := Summarize(dir, sc, time.Time{}, nightNow)
	if n := len(s.Damaged); n != 3 {
		t.Errorf("%d damaged named, want 3 (the FIFO and the link as the timeline, the record that is a link): %+v", n, s.Damaged)
	}
}

// replace puts make's file at path instead of what is there.
func replace(t *testing.T, path string, make func(string) error) {
	t.Helper()
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := make(path); err != nil {
		t.Fatal(err)
	}
}

// TestRunningBeforeClaudesFirstLine: a running attempt whose transcript is
// still empty (the CLI takes seconds to start) says so.
func TestRunningBeforeClaudesFirstLine(t *testing.T) {
	dir := t.TempDir()
	writeIssue(t, dir, issueSpec{id: "new-1", status: record.Processing, started: at(8, 0), attempts: 0, transcript: []string{}})
	j, err := journal.Acquire(dir, "new-1", "pid 1")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Release()
	sc, err := Scan(dir, Options{ValidID: validID, Now: nightNow})
	if err != nil || len(sc.Issues) != 1 {
		t.Fatalf("%d issues, %v", len(sc.Issues), err)
	}
	if is := sc.Issues[0]; is.Running != 1 || is.Phase != "starting" || is.Doing != "before claude's first line" {
		t.Errorf("attempt %d, phase %q, doing %q; want attempt 1 before claude's first line", is.Running, is.Phase, is.Doing)
	}
}
