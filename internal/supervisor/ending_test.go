package supervisor

import (
	"syscall"
	"testing"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/proc"
)

// oddSignal is an os.Signal that is no syscall.Signal: it has a name only.
type oddSignal struct{}

func (oddSignal) String() string { return "odd signal" }
func (oddSignal) Signal()        {}

// How claude's process ended reaches attempt as the process's status said
// it: the code, or the signal's number and the system's name for it (the
// words of "was killed by signal 9 (killed)").
func TestExitOfKeepsTheSignal(t *testing.T) {
	for _, c := range []struct {
		in   proc.Exit
		want attempt.Exit
	}{
		{proc.Exit{Code: 1}, attempt.Exit{Code: 1}},
		{proc.Exit{Code: 0}, attempt.Exit{}},
		{proc.Exit{Code: -1, Signal: syscall.SIGKILL}, attempt.Exit{Code: -1, Signal: 9, SignalName: syscall.SIGKILL.String()}},
		{proc.Exit{Code: -1, Signal: syscall.SIGTERM}, attempt.Exit{Code: -1, Signal: 15, SignalName: syscall.SIGTERM.String()}},
		{proc.Exit{Code: -1, Signal: oddSignal{}}, attempt.Exit{Code: -1, SignalName: "odd signal"}},
	} {
		if got := exitOf(c.in); got != c.want {
			t.Errorf("exitOf(%+v) = %+v, want %+v", c.in, got, c.want)
		}
		if got := exitOf(c.in); got.Killed() != (c.in.Signal != nil) {
			t.Errorf("exitOf(%+v).Killed() = %v", c.in, got.Killed())
		}
	}
}
