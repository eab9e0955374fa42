package proc

import (
	"errors"
	"os"
	"syscall"
	"testing"
)

// Only the errors clone3 gives when it will not start a child in a group
// make the spawner try again outside it; a passing failure does not cost
// the run its group.
func TestCgroupRefusal(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&os.PathError{Op: "fork/exec", Path: "claude", Err: syscall.ENOSYS}, true},
		{&os.PathError{Op: "fork/exec", Path: "claude", Err: syscall.EBUSY}, true},
		{&os.PathError{Op: "fork/exec", Path: "claude", Err: syscall.EACCES}, true},
		{&os.PathError{Op: "fork/exec", Path: "claude", Err: syscall.ETXTBSY}, false},
		{&os.PathError{Op: "fork/exec", Path: "claude", Err: syscall.EAGAIN}, false},
		{&os.PathError{Op: "fork/exec", Path: "claude", Err: syscall.ENOENT}, false},
		{errors.New("something else"), false},
	} {
		if got := cgroupRefusal(tc.err); got != tc.want {
			t.Errorf("cgroupRefusal(%v) = %v", tc.err, got)
		}
	}
}
