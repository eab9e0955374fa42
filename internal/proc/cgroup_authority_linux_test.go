package proc_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// A stop of a tree its cgroup holds asks the group who is a member, not a
// walk of every process of the machine (issue 40): through a grace of
// many polls it never walks the machine's table (the check at the end for
// what left the group reads malarun's descendants; without the kernel's
// lists of children it is the one walk), ends the tree with cgroup.kill,
// and the next child started in the group lives (the group is made anew:
// docs/design.md §F31).
func TestAGroupHeldStopWalksNoOtherProcess(t *testing.T) {
	cg := requireCgroup(t, proc.CgroupName(t.Name()))
	f := newFixture(t)
	marker := envMark + "=" + t.Name()
	p := f.startIn(cg, testchild.Grandchild, marker) // a tree that ignores SIGTERM
	gpid := pidFrom(t, f.waitForLine(p, `{"type":"system","subtype":"fake_grandchild"`))
	t.Cleanup(func() { unix.Kill(gpid, unix.SIGKILL) })
	before := f.sp.Walks()
	rep := p.Stop(300*time.Millisecond, nil) // about 30 polls of the tree
	want := int64(1)
	if f.sp.ReadsFamily() {
		want = 0
	}
	if walks := f.sp.Walks() - before; walks != want {
		t.Errorf("the stop walked the machine's process table %d times, want %d (reads malarun's descendants: %v)", walks, want, f.sp.ReadsFamily())
	}
	if rep.Killed != 2 || len(rep.Left) != 0 || len(rep.Escaped) != 0 || !cg.Killed() {
		t.Errorf("report %+v, killed by cgroup.kill %v: want the child and its grandchild killed, nothing left", rep, cg.Killed())
	}
	if proc.Alive(gpid, 0) || proc.Alive(p.Pid, 0) {
		t.Errorf("a process outlived the stop")
	}
	next := f.startIn(cg, testchild.Replay, marker)
	f.waitForLine(next, testchild.InitLine)
	<-next.Done()
	if e := next.Exit(); e.Signal != nil || e.Code != 0 || cg.Killed() {
		t.Errorf("the next child in the group ended with %+v (killed flag %v): the group was not made anew", e, cg.Killed())
	}
}

// A tool that freezes its own group (root can) wedges nothing: the stop
// thaws it so the tree acts on SIGTERM, and the next child starts in it.
func TestAFrozenGroupWedgesNothing(t *testing.T) {
	cg := requireCgroup(t, proc.CgroupName(t.Name()))
	f := newFixture(t)
	marker := envMark + "=" + t.Name()
	p := f.startIn(cg, testchild.FreezesGroup, marker)
	f.waitForLine(p, testchild.ToolLine)
	if !waitFrozen(cg.Path) {
		t.Fatal("the child never froze its group")
	}
	start := time.Now()
	rep := p.Stop(10*time.Second, nil)
	if took := time.Since(start); took > 5*time.Second || rep.Termed == 0 || len(rep.Left) != 0 {
		t.Errorf("the stop of a frozen tree took %v (report %+v): want SIGTERM acted on at once", took, rep)
	}
	started := make(chan *proc.Process, 1)
	go func() { started <- f.startIn(cg, testchild.Replay, marker) }()
	select {
	case next := <-started:
		f.waitForLine(next, testchild.InitLine)
		<-next.Done()
	case <-time.After(20 * time.Second):
		t.Fatal("starting a child in the group that was frozen hangs")
	}
}

// waitFrozen waits until the group at path reports itself frozen.
func waitFrozen(path string) bool {
	return testchild.WaitUntil(10*time.Second, nil, func() bool {
		b, _ := os.ReadFile(filepath.Join(path, "cgroup.events"))
		return strings.Contains(string(b), "frozen 1")
	})
}

// A tool process that moved itself out of the run's group (root can) is
// still found while malarun lives (it is malarun's by the subreaper and
// the marker), ended, and named in the stop's report.
func TestAProcessThatLeftTheGroupIsEndedAndNamed(t *testing.T) {
	cg := requireCgroup(t, proc.CgroupName(t.Name()))
	f := newFixture(t)
	marker := envMark + "=" + t.Name()
	p := f.startIn(cg, testchild.LeavesGroup, marker)
	gpid := pidFrom(t, f.waitForLine(p, `{"type":"system","subtype":"fake_grandchild"`))
	t.Cleanup(func() { unix.Kill(gpid, unix.SIGKILL) })
	for _, pid := range cg.Pids() {
		if pid == gpid {
			t.Fatalf("the grandchild %d is still in the group", gpid)
		}
	}
	rep := p.Stop(200*time.Millisecond, nil)
	if len(rep.Escaped) != 1 || rep.Escaped[0] != gpid || len(rep.Left) != 0 {
		t.Errorf("report %+v: want the grandchild %d named as escaped, and ended", rep, gpid)
	}
	waitGone(t, gpid)
	if proc.Alive(gpid, 0) {
		t.Errorf("the process that left the group outlived the stop")
	}
}
