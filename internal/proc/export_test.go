package proc

import "syscall"

// GuardWithoutPdeathsig makes s start argv as its guard, as it does where
// the kernel has no parent-death signal, and start children without one,
// as there: on Linux this is the only way to see the guard alone keep a
// killed malarun's tree from living on.
func GuardWithoutPdeathsig(s *Spawner, argv ...string) {
	s.guardArgv = argv
	s.attr = func() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
}
