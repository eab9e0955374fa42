package proc_test

import (
	"testing"
	"time"

	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/testing/testchild"
	"golang.org/x/sys/unix"
)

// A child must not outlive its malarun when malarun is killed outright:
// on Linux the kernel's parent-death signal kills it. Its setsid
// grandchild is not the kernel's to kill: the next malarun of the run
// reclaims it by its marker (or, where there is one, the guard ends it:
// TestGuardEndsTheTreeOfAKilledSpawner).
func TestChildDiesWithItsSpawner(t *testing.T) {
	spawner, child, grandchild, _ := startSpawner(t, spawnerPdeathsig)
	t.Cleanup(func() { unix.Kill(grandchild, unix.SIGKILL); unix.Kill(child, unix.SIGKILL) })
	// A pidfd becomes readable when the process exits: opened before the
	// kill, so the child cannot be gone (and its pid reused) first.
	pidfd, err := unix.PidfdOpen(child, 0)
	if err != nil {
		t.Fatalf("pidfd_open(%d): %v", child, err)
	}
	killSpawner(t, spawner)
	waitPidfd(t, child, pidfd, 5000)
	if proc.Alive(child, 0) {
		t.Fatalf("child %d outlived its killed spawner", child)
	}
}

// Without a subreaper (as on darwin) a setsid tool whose parent died
// re-parents to init or some other subreaper, out of reach of a walk from
// the CLI: the stop finds it by the run's marker.
func TestStopFindsAnEscapeeByItsMarkerWithoutASubreaper(t *testing.T) {
	f := newFixture(t) // (its own Spawner makes this process a subreaper: first)
	sp, restore := proc.SpawnerWithoutSubreaper()
	defer restore()
	f.sp = sp
	marker := envMark + "=" + t.Name()
	p := f.startMarked(testchild.Grandchild, marker)
	gpid := pidFrom(t, f.waitForLine(p, `{"type":"system","subtype":"fake_grandchild"`))
	t.Cleanup(func() { unix.Kill(gpid, unix.SIGKILL) })
	unix.Kill(p.Pid, unix.SIGKILL) // the grandchild is orphaned, and not malarun's
	<-p.Done()
	rep := p.Stop(100*time.Millisecond, nil)
	if rep.Killed != 1 || len(rep.Left) != 0 {
		t.Errorf("report %+v: want the escapee found and killed after the grace", rep)
	}
	if proc.Alive(gpid, 0) {
		t.Errorf("escapee %d outlived the stop", gpid)
	}
}
