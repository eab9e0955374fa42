package proc_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/testing/qemutest"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// An orphan that re-parents to malarun and dies while the CLI still runs
// must not stay a zombie until the tree is stopped: as PID 1 in a container
// nothing else would ever reap it.
func TestAdoptedZombieIsReapedWhileChildRuns(t *testing.T) {
	qemutest.SkipUnderQEMU(t, qemutest.NoSubreaper)
	f := newFixture(t)
	if !f.sp.Subreaper() {
		t.Fatal("the test process could not become a child subreaper: the orphan would go to init")
	}
	p := f.start(testchild.Orphaner)
	pid, start, err := orphanFrom(f.waitForLine(p, orphanPrefix))
	if err != nil {
		t.Fatal(err)
	}

	gone := waitFor(10*time.Second, func() bool { return !sameProcess(pid, start) })
	select {
	case <-p.Done():
		t.Fatalf("the child exited (%+v): the test needs it running", p.Exit())
	default:
	}
	if !gone {
		st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		t.Fatalf("orphan %d was not reaped while the child ran: %s", pid, st)
	}
}

const orphanPrefix = `{"type":"system","subtype":"fake_orphan"`

// sameProcess reports whether pid still names the process that started at
// start, a zombie included (only reaping removes it from /proc).
func sameProcess(pid int, start uint64) bool {
	st, err := proc.StartTime(pid)
	return err == nil && st == start
}

// orphanFrom reads the pid and start time from an OrphanLine.
func orphanFrom(line string) (int, uint64, error) {
	pid, err := numberAfter(line, "pid")
	if err != nil {
		return 0, 0, err
	}
	start, err := numberAfter(line, "start")
	return int(pid), start, err
}
