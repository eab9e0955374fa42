package proc

import (
	"syscall"
	"time"
)

// GuardWithoutPdeathsig makes s start argv as its guard, as it does where
// the kernel has no parent-death signal, and start children without one,
// as there: on Linux this is the only way to see the guard alone keep a
// killed malarun's tree from living on.
// GuardPid is the pid of s's guard, 0 if none was started.
func GuardPid(s *Spawner) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.guard == nil {
		return 0
	}
	return s.guard.pid
}

func GuardWithoutPdeathsig(s *Spawner, argv ...string) {
	s.guardArgv = argv
	s.attr = func() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
}

// TreeWalks counts the stops' looks at the tree.
func (p *Process) TreeWalks() int64 { return p.treeWalks.Load() }

// GraceWalks counts the stops' looks at the tree in their grace.
func (p *Process) GraceWalks() int64 { return p.graceWalks.Load() }

// GraceTimerFires is how many times the grace's backoff timer can fire in
// grace: pollEvery, doubling to graceWalksAtMost. A late timer (a loaded
// machine) fires fewer times, never more.
func GraceTimerFires(grace time.Duration) int64 {
	var n int64
	for at, wait := pollEvery, pollEvery; at < grace; at += wait {
		n++
		wait = min(2*wait, graceWalksAtMost)
	}
	return n
}
