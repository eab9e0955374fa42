package proc

import (
	"os"

	"golang.org/x/sys/unix"
)

// SpawnerWithoutSubreaper is a Spawner as where the kernel has no child
// subreaper (darwin): orphans of its trees go elsewhere, and are found by
// the marker. It makes this process stop being a subreaper until restore.
func SpawnerWithoutSubreaper() (s *Spawner, restore func()) {
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
	s = &Spawner{self: os.Getpid(), pgid: unix.Getpgrp(), attr: childAttr, live: map[int]*Process{}}
	return s, func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }
}

// CgroupAt is a Cgroup for the folder path, whatever it is: a test of what
// happens when the kernel refuses to start a child in it.
func CgroupAt(t interface{ Fatal(...any) }, path string) *Cgroup {
	dir, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return &Cgroup{Path: path, dir: dir}
}

// Admits is the check NewCgroup makes of a group before a run relies on it.
func (c *Cgroup) Admits() error { return c.admits() }

// Walks counts the stops' walks of the machine's process table.
func (s *Spawner) Walks() int64 { return s.walks.Load() }

// ReadsFamily reports whether trees are read from malarun's descendants.
func (s *Spawner) ReadsFamily() bool { return s.readsFamily }

// Killed reports whether cgroup.kill was written to the group since it was
// last made.
func (c *Cgroup) Killed() bool { return c.killed }

// Pids are the processes in the group now.
func (c *Cgroup) Pids() []int { return c.pids() }

// Where a walk of a tree reads its processes.
const (
	FromFamily  = fromFamily
	FromMachine = fromMachine
)

// TreeFrom is the tree's live members as read from src.
func TreeFrom(p *Process, src tableSource) []procStat { return p.membersIn(src) }
