package testchild

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"

	"github.com/malarun/malarun/internal/proc"
)

// leaveOrphan double-forks: it runs orphanParent, which starts orphanChild
// and exits at once. The orphan re-parents to the nearest child subreaper
// (malarun) or to PID 1, and exits as soon as its parent is gone: its zombie
// is then the subreaper's to reap, not this process's.
func leaveOrphan() (int, uint64) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), EnvBehaviour+"="+orphanParent, EnvArgsFile+"=")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	var pid int
	var start uint64
	if _, serr := fmt.Sscan(string(out), &pid, &start); err != nil || serr != nil {
		fmt.Fprintf(os.Stderr, "testchild: orphan parent: %v %v %q\n", err, serr, out)
		os.Exit(93)
	}
	return pid, start
}

// startOrphanChild starts orphanChild with its stdin a pipe that only this
// process holds, so the orphan reads EOF, and exits, once this process has.
func startOrphanChild() int {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), EnvBehaviour+"="+orphanChild, EnvArgsFile+"=")
	w, err := cmd.StdinPipe()
	if err != nil {
		return 93
	}
	if err := cmd.Start(); err != nil {
		return 93
	}
	// Read while the orphan is surely alive (blocked on stdin), so the
	// test can tell it from a later process that reuses its pid.
	start, err := proc.StartTime(cmd.Process.Pid)
	if err != nil {
		return 93
	}
	fmt.Println(cmd.Process.Pid, start)
	runtime.KeepAlive(w) // open until exit: a collected pipe would be closed early
	return 0
}
