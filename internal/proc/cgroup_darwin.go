package proc

import (
	"errors"
	"time"
)

// darwin has no cgroups: a run's processes are found by its marker, and a
// guard ends them if malarun dies (guard.go).

// CanContain: darwin cannot.
const CanContain = false

// NewCgroup: darwin has none.
func NewCgroup(string) (*Cgroup, error) {
	return nil, errors.ErrUnsupported
}

func (c *Cgroup) pids() []int        { return nil }
func (c *Cgroup) subtreePids() []int { return nil }
func (c *Cgroup) killAll()           {}
func (c *Cgroup) thaw()              {}

// Ready: there is no group to make ready.
func (c *Cgroup) Ready() error { return nil }

// Remove: there is nothing to remove.
func (c *Cgroup) Remove() error { return nil }

// EndCgroup: a record from a Linux host names a group this kernel cannot
// have; nothing is ended.
func EndCgroup(string, string, time.Duration) (int, error) { return 0, nil }
