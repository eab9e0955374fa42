package proc_test

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// Where orphans come home (malarun is the subreaper) a stop reads the
// tree among malarun's descendants, not every process of the machine
// (issue 40): an orphaned setsid grandchild that ignores SIGTERM is found,
// killed after the grace, and the machine's table is never walked.
func TestAStopReadsOnlyMalarunsDescendants(t *testing.T) {
	f := newFixture(t)
	requireFamily(t, f)
	p := f.start(testchild.Grandchild)
	gpid := pidFrom(t, f.waitForLine(p, `{"type":"system","subtype":"fake_grandchild"`))
	unix.Kill(p.Pid, unix.SIGKILL)
	<-p.Done()
	before := f.sp.Walks()
	if !containsPid(p.Tree(), gpid) {
		t.Fatalf("the orphaned grandchild %d is not in the tree %v", gpid, p.Tree())
	}
	rep := p.Stop(100*time.Millisecond, nil)
	if rep.Killed != 1 || len(rep.Left) != 0 {
		t.Errorf("report %+v: want the grandchild killed after the grace, nothing left", rep)
	}
	assertGone(t, gpid)
	if walks := f.sp.Walks() - before; walks != 0 {
		t.Errorf("the stop walked the machine's process table %d times, want none", walks)
	}
}

// The kernel's lists of children are read one at a time and can miss a
// process that moves meanwhile, so "nothing is left" is believed only when
// malarun has no child at all (ECHILD). With a child of its own beside the
// tree (a plain os/exec one in its own group), one walk of the machine
// decides, and the tree still ends.
func TestAStopIsSureOfTheEndBesideAnotherChild(t *testing.T) {
	f := newFixture(t)
	requireFamily(t, f)
	other := exec.Command(os.Args[0])
	other.Env = testchild.Env(testchild.IgnoreTerm)
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	p := f.start(testchild.Grandchild)
	gpid := pidFrom(t, f.waitForLine(p, `{"type":"system","subtype":"fake_grandchild"`))
	before := f.sp.Walks()
	rep := p.Stop(50*time.Millisecond, nil)
	if rep.Killed != 2 || len(rep.Left) != 0 {
		t.Errorf("report %+v: want the child and its grandchild killed, nothing left", rep)
	}
	assertGone(t, p.Pid, gpid)
	if walks := f.sp.Walks() - before; walks != 1 {
		t.Errorf("the stop walked the machine's process table %d times, want once (to be sure beside another child)", walks)
	}
	if err := unix.Kill(other.Process.Pid, 0); err != nil {
		t.Errorf("the other child, not the tree's, was ended too: %v", err)
	}
}

// requireFamily skips, saying so, where orphans do not come home or the
// kernel keeps no lists of children; where they do, the spawner must read
// trees from malarun's descendants.
func requireFamily(t *testing.T, f *fixture) {
	t.Helper()
	if _, err := os.Stat("/proc/thread-self/children"); err != nil || !f.sp.Subreaper() {
		t.Skipf("SKIPPED: subreaper %v, the kernel's lists of children: %v (CONFIG_PROC_CHILDREN): stops walk the machine here", f.sp.Subreaper(), err)
	}
	if !f.sp.ReadsFamily() {
		t.Fatal("the subreaper, on a kernel that lists children, does not read trees from its descendants")
	}
}

// BenchmarkFindTheTree is one walk of a live tree (a child and its setsid
// grandchild) during a stop: from malarun's descendants, and from every
// process of the machine (the walk where orphans do not come home).
func BenchmarkFindTheTree(b *testing.B) {
	f := newFixture(b)
	p := f.start(testchild.Grandchild)
	f.waitForLine(p, `{"type":"system","subtype":"fake_grandchild"`)
	b.Run("family", func(b *testing.B) {
		for b.Loop() {
			if len(proc.TreeFrom(p, proc.FromFamily)) != 2 {
				b.Fatal("tree not found")
			}
		}
	})
	b.Run("machine", func(b *testing.B) {
		for b.Loop() {
			if len(proc.TreeFrom(p, proc.FromMachine)) != 2 {
				b.Fatal("tree not found")
			}
		}
	})
}
