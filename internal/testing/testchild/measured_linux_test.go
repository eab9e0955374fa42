package testchild_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/malarun/malarun/internal/testing/testchild"
)

// Linux only: the test watches a grandchild that is not its child go
// through a pidfd (unix.PidfdOpen), which macOS does not have.
func TestObeyTreeDiesOfSIGTERMAlone(t *testing.T) {
	cmd := child(t, testchild.ObeyTree, "", nil)
	printed := startReading(t, cmd, 2)
	var gc struct{ Pid, Parent int }
	if err := json.Unmarshal([]byte(printed[1]), &gc); err != nil || gc.Pid == 0 {
		t.Fatalf("grandchild line %q: %v", printed[1], err)
	}
	t.Cleanup(func() { unix.Kill(gc.Pid, unix.SIGKILL) })
	if gc.Parent != cmd.Process.Pid || !strings.Contains(printed[0], `"subtype":"init"`) {
		t.Errorf("lines %q: want init, then the grandchild with the child as its parent", printed)
	}
	if sid, err := unix.Getsid(gc.Pid); err != nil || sid != gc.Pid {
		t.Errorf("grandchild session %d (err %v), want its own (%d), as the Bash tool does", sid, err, gc.Pid)
	}
	pidfd, err := unix.PidfdOpen(gc.Pid, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pidfd)

	for _, pid := range []int{cmd.Process.Pid, gc.Pid} {
		if err := unix.Kill(pid, unix.SIGTERM); err != nil {
			t.Fatal(err)
		}
	}
	checkDiedOfTERM(t, cmd)
	// A pidfd polls readable once its process has exited; the grandchild is
	// not this test's child, so this is how to see it go.
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 10_000)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n != 1 {
			t.Fatalf("grandchild still alive 10 s after SIGTERM (poll %d, %v)", n, err)
		}
		break
	}
}
