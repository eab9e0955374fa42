package proc_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/testing/qemutest"
	"github.com/malarun/malarun/internal/testing/testchild"
	"golang.org/x/sys/unix"
)

// requireCgroup makes the test's own cgroup, or skips loudly where this
// machine will not let malarun make one (not root, a read-only
// /sys/fs/cgroup); in CI that is a failure: its machines can.
func requireCgroup(t *testing.T, name string) *proc.Cgroup {
	t.Helper()
	// qemu-user implements no clone3, so the check that a new group
	// admits a process (a clone into it) cannot run there.
	qemutest.SkipUnderQEMU(t, "qemu-user has no clone3: a cgroup's admission check (a process cloned into it) cannot run")
	cg, err := proc.NewCgroup(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must be able to make a cgroup: %v", err)
		}
		t.Skipf("SKIPPED: no cgroup can be made here, so containment is not tested: %v", err)
	}
	t.Cleanup(func() { cg.Remove() })
	return cg
}

// The escapee of issue 32: a tool process that leaves with setsid and an
// empty environment (no marker) outlives its malarun's SIGKILL; the
// parent-death signal ends only the CLI. The run's cgroup still holds it,
// and the reclaim ends it there.
func TestReclaimEndsABareEscapeeThroughTheRunsCgroup(t *testing.T) {
	requireCgroup(t, proc.CgroupName(t.Name())) // the machine can; the spawner makes its own
	spawner, said := startSpawnerSaying(t, spawnerCgroup)
	if len(said) != 5 {
		t.Fatalf("spawner said %q", said)
	}
	child, _ := strconv.Atoi(said[0])
	grandchild, _ := strconv.Atoi(said[1])
	path, marker := said[3], said[4]
	t.Cleanup(func() { unix.Kill(child, unix.SIGKILL); unix.Kill(grandchild, unix.SIGKILL); os.Remove(path) })
	killSpawner(t, spawner)
	waitGone(t, child)
	if !proc.Alive(grandchild, 0) {
		t.Fatalf("the escapee %d died with its malarun: nothing to reclaim", grandchild)
	}
	for _, r := range proc.FindMarked(marker) {
		if r.Pid == grandchild {
			t.Fatalf("the escapee %d carries the marker: its environment was not cleared", grandchild)
		}
	}
	found, err := proc.EndCgroup(path, proc.CgroupName(marker), 50*time.Millisecond)
	if err != nil || found != 1 {
		t.Fatalf("EndCgroup: found %d, %v; want the escapee", found, err)
	}
	if proc.Alive(grandchild, 0) {
		t.Errorf("escapee %d outlived the reclaim", grandchild)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cgroup %s not removed: %v", path, err)
	}
}

// Without a subreaper (as when another process holds that role) an
// escapee with no marker is out of reach of any walk: the run's cgroup
// still counts it a member, so a stop ends it.
func TestStopEndsABareEscapeeInTheCgroup(t *testing.T) {
	cg := requireCgroup(t, proc.CgroupName(t.Name()))
	f := newFixture(t)
	sp, restore := proc.SpawnerWithoutSubreaper()
	defer restore()
	f.sp = sp
	marker := envMark + "=" + t.Name()
	p := f.startIn(cg, testchild.Grandchild, marker, testchild.EnvBareGrandchild+"=1")
	if cg.Refused() != nil {
		t.Fatalf("the child was not started in the cgroup: %v", cg.Refused())
	}
	gpid := pidFrom(t, f.waitForLine(p, `{"type":"system","subtype":"fake_grandchild"`))
	t.Cleanup(func() { unix.Kill(gpid, unix.SIGKILL) })
	unix.Kill(p.Pid, unix.SIGKILL)
	<-p.Done()
	rep := p.Stop(50*time.Millisecond, nil)
	if rep.Killed != 1 || len(rep.Left) != 0 {
		t.Errorf("report %+v: want the escapee found in the cgroup and killed after the grace", rep)
	}
	if proc.Alive(gpid, 0) {
		t.Errorf("escapee %d outlived the stop", gpid)
	}
}

// A kernel that will not start the child in the group (here: a folder that
// is no cgroup) must not cost the run: the child starts outside it, and
// Refused says why.
func TestChildStartsOutsideACgroupTheKernelRefuses(t *testing.T) {
	cg := proc.CgroupAt(t, t.TempDir())
	f := newFixture(t)
	p := f.startIn(cg, testchild.Grandchild, "")
	if cg.Refused() == nil {
		t.Fatal("the kernel took a plain folder for a cgroup")
	}
	f.waitForLine(p, `{"type":"system","subtype":"fake_grandchild"`)
}

// A recorded cgroup path is hostile input: only a clean path ending in
// the run's own group name, on a cgroup v2 file system, reached through no
// link, is ever signalled or removed.
func TestEndCgroupTrustsOnlyTheRunsOwnGroup(t *testing.T) {
	name := proc.CgroupName("issue/run")
	tmp := t.TempDir()
	plain := filepath.Join(tmp, name)
	if err := os.Mkdir(plain, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(tmp, "link")
	if err := os.Symlink(tmp, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ what, path string }{
		{"a relative path", name},
		{"an unclean path", "/sys/fs/cgroup/../cgroup/" + name},
		{"another group", "/sys/fs/cgroup"},
		{"another run's group", "/sys/fs/cgroup/" + proc.CgroupName("issue/other")},
		{"a folder that is no cgroup", plain},
		{"a path through a link", filepath.Join(link, name)},
	} {
		found, err := proc.EndCgroup(tc.path, name, 0)
		if found != 0 || err == nil {
			t.Errorf("%s (%s): found %d, err %v; want it refused", tc.what, tc.path, found, err)
		}
	}
	if _, err := os.Stat(plain); err != nil {
		t.Errorf("the plain folder was removed: %v", err)
	}
	if found, err := proc.EndCgroup("/sys/fs/cgroup/"+name, name, 0); found != 0 || err != nil {
		t.Errorf("a group that is gone: found %d, %v; want nothing to do", found, err)
	}
}

// waitGone waits for pid to exit, on a pidfd (no polling).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return // gone already
	}
	waitPidfd(t, pid, pidfd, 10000)
}

// waitPidfd waits up to ms milliseconds for the process behind pidfd to
// exit (the pidfd becomes readable), and closes it.
func waitPidfd(t *testing.T, pid, pidfd, ms int) {
	t.Helper()
	defer unix.Close(pidfd)
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	if n, err := unix.Poll(fds, ms); n != 1 {
		t.Fatalf("process %d did not exit within %d ms (poll %d, %v)", pid, ms, n, err)
	}
}

// A group with a group below it (a malarun run by the agent makes its
// run's group inside this one) is removed with it.
func TestRemoveTakesGroupsBelow(t *testing.T) {
	cg := requireCgroup(t, proc.CgroupName(t.Name()))
	below := filepath.Join(cg.Path, "malarun-below")
	if err := os.Mkdir(below, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := cg.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cg.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s is still there: %v", cg.Path, err)
	}
}
