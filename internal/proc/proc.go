// Package proc starts the CLI in its own process group with files (never
// pipes) for its standard streams, and ends its whole process tree: the
// group, every descendant found in the process table, and whatever
// re-parents to malarun as a child subreaper, including tool processes that
// called setsid (the Bash tool does; docs/design.md §F9). Orphans that
// re-parent to malarun (as subreaper, or as PID 1 in a container) are
// reaped as they die, without ever taking the exit status that the CLI's
// own wait needs.
//
// The decisions are made over a process table (table.go) by code shared by
// every kernel; each kernel supplies only the seam: the table, a process's
// environment, the child's spawn attributes, orphan handling and the boot's
// identity (os_linux.go, os_darwin.go). Where the kernel has no subreaper
// and no parent-death signal (darwin), the run's marker and a guard process
// stand in for them (guard.go, docs/design.md §D21).
package proc

import (
	"os"
	"time"

	// Builds only for the kernels malarun supports, with one clear error elsewhere.
	_ "github.com/malarun/malarun/internal/platform"
)

// Spec describes one child process.
type Spec struct {
	Path string   // a path, or a name looked up on PATH
	Args []string // without argv[0]
	Dir  string
	Env  []string
	// StdinPath is the file the child reads as stdin; "" means /dev/null.
	// Never the parent's stdin: a child that inherits an open terminal or
	// pipe can wait for EOF forever.
	StdinPath string
	// Stdout and Stderr must be regular files: the real CLI drops output
	// still pending in a pipe when it exits (docs/design.md §F13).
	Stdout, Stderr *os.File
	// Marker is an environment entry (NAME=value) that Env holds and every
	// process of the tree inherits. Where orphans do not re-parent to
	// malarun (no subreaper: darwin), it finds the tree's setsid escapees,
	// and a guard uses it to end the tree if malarun dies. "" if none.
	Marker string
	// Cgroup is the run's cgroup (NewCgroup), which the child starts in
	// and never leaves; nil: none. If the kernel refuses to start it
	// there, it starts outside, and Cgroup.Refused says why.
	Cgroup *Cgroup
}

// Exit is how the direct child ended.
type Exit struct {
	Code   int       // exit code, -1 when killed by a signal
	Signal os.Signal // the signal that killed it, nil otherwise
	Err    error     // a wait error other than a non-zero exit
}

// Killed reports whether the child died of a signal.
func (e Exit) Killed() bool { return e.Signal != nil }

// StopReport says what ending a tree took.
type StopReport struct {
	Termed int   // processes sent SIGTERM
	Killed int   // processes sent SIGKILL after the grace
	Left   []int // pids that could not be ended (e.g. stuck in the kernel)
	// Escaped are the run's processes found outside its cgroup once the
	// group was empty (root moved them out): ended too.
	Escaped  []int
	Duration time.Duration // from the call to the last process gone
}
