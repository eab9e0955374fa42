package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// Spawner starts children and knows which of malarun's children it started
// itself, so that it reaps only the orphans that re-parented to malarun and
// never steals an exit status that cmd.Wait needs (ECHILD).
type Spawner struct {
	self      int
	pgid      int // malarun's own process group, where plain os/exec children live
	subreaper bool
	// readsFamily: a tree is found among malarun's descendants (family.go),
	// as orphans come home to it and the kernel lists each one's children.
	readsFamily bool
	guardArgv   []string                    // the guard's command line; nil: no guard (see guard.go)
	attr        func() *syscall.SysProcAttr // the child's: childAttr, but for a test of the guard

	mu   sync.Mutex
	live map[int]*Process // children started here and not yet waited for
	// stopReaping ends the reaper that runs while live is not empty.
	stopReaping chan struct{}
	sigchld     chan os.Signal // see childSignals
	guard       *guardLink     // started with the first child; nil until then, or if it failed
	guardErr    error
	// walks counts the walks of the machine's process table that stops
	// made (none where a tree is read from its group or from malarun's
	// descendants, unless the kernel's word is needed to be sure it is gone).
	walks atomic.Int64
}

// walk is a stop's walk of the machine's process table, counted.
func (s *Spawner) walk() ([]procStat, error) {
	s.walks.Add(1)
	return snapshot()
}

// Option changes what NewSpawner makes.
type Option func(*Spawner)

// WithGuard names the command that runs RunGuard (malarun and
// GuardCommand), for kernels with no parent-death signal: there a guard
// process ends the CLI's tree if malarun dies. Where the kernel kills the
// CLI itself (Linux's Pdeathsig) it is not started.
func WithGuard(argv ...string) Option {
	return func(s *Spawner) {
		if !hasParentDeathSignal && len(argv) > 0 {
			s.guardArgv = argv
		}
	}
}

// NewSpawner makes the calling process a child subreaper where the kernel
// has one (Linux), so that descendants whose parent dies re-parent to it
// instead of init and can still be found, ended and reaped; elsewhere a
// tree's orphans are found by the marker its Spec names. Subreaper status
// is process-wide, and so is the set of children: create one Spawner per
// process, as a second one would take the first one's children for
// orphans and reap them.
func NewSpawner(opts ...Option) *Spawner {
	s := &Spawner{self: os.Getpid(), pgid: unix.Getpgrp(), subreaper: becomeSubreaper(),
		attr: childAttr, live: map[int]*Process{}}
	s.readsFamily = (s.subreaper || s.self == 1) && hasChildLists()
	for _, o := range opts {
		o(s)
	}
	return s
}

// Subreaper reports whether orphans of a tree re-parent to this process.
func (s *Spawner) Subreaper() bool { return s.subreaper }

// GuardError is why the guard could not be started (nil if it was, or is
// not needed): the tree then outlives a malarun that is killed outright
// until the next invocation of the run reclaims it.
func (s *Spawner) GuardError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.guardErr
}

// StartError means the program could not be started at all (not found, not
// executable, bad directory).
type StartError struct {
	Path string
	Err  error
}

func (e *StartError) Error() string { return fmt.Sprintf("start %s: %v", e.Path, e.Err) }
func (e *StartError) Unwrap() error { return e.Err }

// Start spawns spec in a new process group. On Linux the child gets
// SIGKILL if malarun dies (Pdeathsig); that signal fires when the spawning
// OS thread exits (golang/go#27505), so the spawning goroutine stays locked
// to its thread until the child has been waited for. Elsewhere the guard
// (WithGuard) is told to watch the tree.
//
// While any child started here runs, orphans that re-parent to malarun are
// reaped as they die (see reapWhileRunning): as PID 1 in a container, or as
// the subreaper, nothing else would. Process.Stop reaps the rest.
func (s *Spawner) Start(spec Spec) (*Process, error) {
	if spec.Stdout == nil || spec.Stderr == nil {
		return nil, errors.New("proc: Stdout and Stderr must be files")
	}
	stdinPath := spec.StdinPath
	if stdinPath == "" {
		stdinPath = os.DevNull
	}
	stdin, err := os.Open(stdinPath)
	if err != nil {
		return nil, fmt.Errorf("open stdin for the child: %w", err)
	}

	command := func(cgroupFD int) *exec.Cmd {
		cmd := exec.Command(spec.Path, spec.Args...)
		cmd.Dir = spec.Dir
		cmd.Env = spec.Env
		cmd.Stdin = stdin
		cmd.Stdout = spec.Stdout
		cmd.Stderr = spec.Stderr
		cmd.SysProcAttr = s.attr()
		intoCgroup(cmd.SysProcAttr, cgroupFD)
		return cmd
	}

	p := &Process{spawner: s, done: make(chan struct{}), seen: map[int]uint64{}}
	if !s.subreaper && spec.Marker != "" {
		// Orphans go to init or launchd, not here: find them by the marker.
		p.marker, p.marks = spec.Marker, markMemo{}
	}
	started := make(chan error, 1)
	go func() {
		// Never unlocked: the thread must outlive the child (Pdeathsig).
		runtime.LockOSThread()
		// The fork and the record of its pid happen under one lock, so a
		// reaper (which holds it) never sees this child untracked.
		s.mu.Lock()
		if s.guardArgv != nil && s.guard == nil && s.guardErr == nil && spec.Marker != "" {
			s.guard, s.guardErr = s.startGuard()
		}
		if err := spec.Cgroup.Ready(); err != nil {
			// The group cannot take a child (it could not be thawed or made
			// anew after a kill): the run goes on without it.
			spec.Cgroup.refused = err
		}
		cmd := command(spec.Cgroup.fd())
		err := cmd.Start()
		if err != nil && spec.Cgroup.fd() >= 0 && cgroupRefusal(err) {
			// The kernel may have refused to start it inside the group (no
			// clone3, as under qemu's user mode; a group it may not move
			// into): if it starts outside, the tree goes without one, and
			// so does every later child. If not, the plain start's error
			// is the one to report.
			plain := command(-1)
			if err2 := plain.Start(); err2 == nil {
				cmd, spec.Cgroup.refused, err = plain, err, nil
			} else {
				err = err2
			}
		}
		if err == nil {
			if spec.Cgroup.fd() >= 0 {
				p.cgroup = spec.Cgroup
			}
			s.track(cmd.Process.Pid, p)
		}
		s.mu.Unlock()
		stdin.Close()
		if err != nil {
			started <- &StartError{Path: spec.Path, Err: err}
			return
		}
		p.Pid = cmd.Process.Pid
		p.StartTime, _ = StartTime(p.Pid)
		s.tellGuard(guardNote{Op: "watch", Pgid: p.Pid, Start: p.StartTime, Marker: spec.Marker})
		started <- nil

		werr := cmd.Wait()
		s.untrack(p)
		p.exit = exitOf(cmd.ProcessState, werr)
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

func exitOf(st *os.ProcessState, err error) Exit {
	if st == nil {
		return Exit{Code: -1, Err: err}
	}
	e := Exit{Code: st.ExitCode()}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		e.Signal = ws.Signal()
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		e.Err = err
	}
	return e
}

// track records a started child; the first one starts the reaper. Called
// with s.mu held.
func (s *Spawner) track(pid int, p *Process) {
	s.live[pid] = p
	// Orphans re-parent to malarun only as the subreaper or as PID 1;
	// otherwise there is nothing to reap (darwin, always).
	if len(s.live) == 1 && (s.subreaper || s.self == 1) {
		s.stopReaping = make(chan struct{})
		go s.reapWhileRunning(s.childSignals(), s.stopReaping)
	}
}

// untrack forgets a child once cmd.Wait has returned; the last one stops
// the reaper. Only p's own entry is removed: its pid may already name a
// newer child.
func (s *Spawner) untrack(p *Process) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live[p.Pid] != p {
		return
	}
	delete(s.live, p.Pid)
	if len(s.live) == 0 && s.stopReaping != nil {
		close(s.stopReaping)
		s.stopReaping = nil
	}
}

// tellGuard sends the guard a note, if there is a guard; the write is
// made outside s.mu, which the reaper needs.
func (s *Spawner) tellGuard(n guardNote) {
	s.mu.Lock()
	g := s.guard
	s.mu.Unlock()
	g.tell(n)
}

// cgroupRefusal reports whether a failed start may be clone3 refusing
// CLONE_INTO_CGROUP rather than the program failing to start: a passing
// failure (ETXTBSY, EAGAIN, ENOMEM) must not cost the run its group.
func cgroupRefusal(err error) bool {
	for _, e := range []error{unix.ENOSYS, unix.EPERM, unix.EACCES, unix.EBUSY, unix.EOPNOTSUPP, unix.EINVAL, unix.E2BIG, unix.EBADF, unix.ENODEV} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
