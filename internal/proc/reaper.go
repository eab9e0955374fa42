package proc

import (
	"os"
	"os/signal"

	"golang.org/x/sys/unix"
)

// Orphans of a tree re-parent to malarun (the child subreaper, or PID 1 in
// a container) and, once they die, stay zombies until malarun waits for
// them. They are reaped while the CLI runs (reapWhileRunning) and while a
// tree is stopped (Process.members); both go through reapAdopted.
//
// The danger is taking an exit status that another wait owns: cmd.Wait for
// the CLI would then fail with ECHILD and the attempt would have no exit
// code. So reapAdopted:
//
//   - waits for given pids only, never wait4(-1) or waitid(P_ALL): those
//     return whichever child is ready first, the CLI included. A peek with
//     waitid(P_ALL, WNOWAIT) takes nothing, but shows one child at a time:
//     while the CLI's zombie waits for cmd.Wait it is the one shown, and
//     hides the orphans behind it. /proc lists them all (malarun's
//     own children, where the kernel keeps that list: family.go).
//   - never waits for a pid in s.live. A pid enters s.live under s.mu in the
//     same critical section as the fork, and leaves it under s.mu only once
//     cmd.Wait has returned. So, holding s.mu, a child of malarun that is not
//     in s.live is not one that cmd.Wait is waiting for.
//   - never waits for a process in malarun's own process group: that is
//     where children started with plain os/exec (not through a Spawner) are,
//     and their own Wait owns their status. A tree's orphans are in the
//     CLI's group or in groups of their own (setsid).
//   - reads each candidate again under s.mu. The snapshot was taken before
//     the lock: since then the zombie may have been reaped by another pass
//     and its pid given to a new child. Once it is seen, under the lock, as
//     the same process (start time), still a zombie and still adopted, only
//     a waiter holding s.mu could reap it, so wait4(pid) reaps exactly it.

// reapWhileRunning reaps adopted zombies on every SIGCHLD until stop is
// closed. The kernel sends SIGCHLD when a child of malarun dies, adopted
// ones included, and when an orphan that is already a zombie re-parents to
// it. Signals that arrive together merge into one, which is fine: each pass
// looks at every child. The first pass takes what died before; a SIGCHLD
// left over from the last child's end costs one more pass.
func (s *Spawner) reapWhileRunning(sigchld <-chan os.Signal, stop <-chan struct{}) {
	for {
		if procs, err := s.children(); err == nil {
			s.reapAdopted(procs)
		}
		select {
		case <-sigchld:
		case <-stop:
			return
		}
	}
}

// childSignals is the Spawner's SIGCHLD channel, asked for once and kept
// for the process's life (called with s.mu held). Not signal.Stop at each
// child's end: Stop waits for os/signal's goroutine by spinning on
// Gosched, and on a loaded machine (sixteen CLIs on two cores), just after
// the SIGCHLD of the CLI's exit, that spin was 6 % of malarun's CPU.
func (s *Spawner) childSignals() <-chan os.Signal {
	if s.sigchld == nil {
		s.sigchld = make(chan os.Signal, 1)
		signal.Notify(s.sigchld, unix.SIGCHLD)
	}
	return s.sigchld
}

// reapAdopted waits for the adopted zombies in procs (see the rules above).
// It returns the ones it could not reap yet: a multi-threaded process shows
// as a zombie before its last thread is gone, and cannot be waited for
// until then (its end brings another SIGCHLD).
func (s *Spawner) reapAdopted(procs []procStat) map[int]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	var pending map[int]bool
	for _, seen := range procs {
		if !seen.zombie() || !s.adoptedLocked(seen) {
			continue
		}
		now, err := readStat(seen.Pid)
		if err != nil || now.StartTime != seen.StartTime || !now.zombie() || !s.adoptedLocked(now) {
			continue
		}
		var ws unix.WaitStatus
		if pid, _ := unix.Wait4(now.Pid, &ws, unix.WNOHANG, nil); pid != now.Pid {
			if pending == nil {
				pending = map[int]bool{}
			}
			pending[now.Pid] = true
		}
	}
	return pending
}

// adopted reports whether p is a child of malarun that it did not start:
// an orphan of some tree that re-parented to it.
func (s *Spawner) adopted(p procStat) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.adoptedLocked(p)
}

func (s *Spawner) adoptedLocked(p procStat) bool {
	return p.PPid == s.self && p.Pgid != s.pgid && s.live[p.Pid] == nil && (s.guard == nil || p.Pid != s.guard.pid)
}
