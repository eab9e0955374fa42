package proc

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
)

// A run's own cgroup (docs/design.md §D28). A process in a cgroup v2 group
// stays in it whatever it does: setsid, a cleared environment, a parent
// that dies. So the kernel, not the process's goodwill, says which
// processes are the run's, and cgroup.kill ends them all at once. The
// group is made under malarun's own (no other part of the hierarchy is
// touched), each attempt's CLI is cloned straight into it
// (CLONE_INTO_CGROUP: nothing it forks is ever outside), and it is
// removed when the run ends, or by the malarun that reclaims the run.

// cgroupPrefix starts the name of every group malarun makes: one that
// malarun ends or removes must bear it (and the rest of its run's name).
const cgroupPrefix = "malarun-"

// Cgroup is a run's cgroup: its path and an open descriptor of its folder,
// which clone3 takes to start a child inside it.
type Cgroup struct {
	Path string
	dir  *os.File
	// refused is why a child could not be started inside it (the kernel
	// has no clone3, or refused the move): the run goes on without it.
	refused error
	// killed: cgroup.kill was written to it. No child may be cloned into
	// it again (the kernel would kill it: docs/design.md §F31) until Ready
	// made it anew.
	killed bool
}

// CgroupName is the group's name for a run, from its marker: the same
// for every malarun of the run, so the one that reclaims it knows what
// name a recorded path must end in.
func CgroupName(marker string) string {
	sum := sha256.Sum256([]byte(marker))
	return cgroupPrefix + hex.EncodeToString(sum[:8])
}

// fd is the descriptor clone3 starts a child in (UseCgroupFD); -1 once a
// start inside it was refused.
func (c *Cgroup) fd() int {
	if c == nil || c.dir == nil || c.refused != nil {
		return -1
	}
	return int(c.dir.Fd())
}

// Refused is why the run's children could not be started inside the
// group (nil: they were, or none was started yet).
func (c *Cgroup) Refused() error {
	if c == nil {
		return nil
	}
	return c.refused
}
