// Package proc starts the CLI in its own process group with files (never
// pipes) for its standard streams, and ends its whole process tree: the
// group, every descendant found in /proc, and whatever re-parents to malarun
// as a child subreaper, including tool processes that called setsid (the
// Bash tool does; docs/design.md §F9). Orphans that re-parent to malarun (as
// subreaper, or as PID 1 in a container) are reaped as they die, without
// ever taking the exit status that the CLI's own wait needs.
package proc

import (
	"os"
	"time"
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
	Termed   int           // processes sent SIGTERM
	Killed   int           // processes sent SIGKILL after the grace
	Left     []int         // pids that could not be ended (e.g. stuck in the kernel)
	Duration time.Duration // from the call to the last process gone
}
