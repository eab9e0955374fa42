package proc_test

import (
	"testing"

	"github.com/malarun/malarun/internal/proc"
	"golang.org/x/sys/unix"
)

// A child must not outlive its malarun when malarun is killed outright:
// on Linux the kernel's parent-death signal kills it. Its setsid
// grandchild is not the kernel's to kill: the next malarun of the run
// reclaims it by its marker (or, where there is one, the guard ends it:
// TestGuardEndsTheTreeOfAKilledSpawner).
func TestChildDiesWithItsSpawner(t *testing.T) {
	spawner, child, grandchild := startSpawner(t, spawnerPdeathsig)
	t.Cleanup(func() { unix.Kill(grandchild, unix.SIGKILL) })
	// A pidfd becomes readable when the process exits: wait on it instead
	// of polling.
	pidfd, err := unix.PidfdOpen(child, 0)
	if err != nil {
		t.Fatalf("pidfd_open(%d): %v", child, err)
	}
	defer unix.Close(pidfd)
	killSpawner(t, spawner)
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 5000)
	if n != 1 || proc.Alive(child, 0) {
		unix.Kill(child, unix.SIGKILL)
		t.Fatalf("child %d outlived its killed spawner (poll %d, %v)", child, n, err)
	}
}
