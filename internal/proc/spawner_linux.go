package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
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

	mu   sync.Mutex
	live map[int]*Process // children started here and not yet waited for
	// stopReaping ends the reaper that runs while live is not empty.
	stopReaping chan struct{}
}

// NewSpawner makes the calling process a child subreaper, so that
// descendants whose parent dies re-parent to it instead of init and can
// still be found, ended and reaped. Subreaper status is process-wide, and
// so is the set of children: create one Spawner per process, as a second
// one would take the first one's children for orphans and reap them.
func NewSpawner() *Spawner {
	err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	return &Spawner{self: os.Getpid(), pgid: unix.Getpgrp(), subreaper: err == nil, live: map[int]*Process{}}
}

// Subreaper reports whether the process could become a child subreaper.
func (s *Spawner) Subreaper() bool { return s.subreaper }

// StartError means the program could not be started at all (not found, not
// executable, bad directory).
type StartError struct {
	Path string
	Err  error
}

func (e *StartError) Error() string { return fmt.Sprintf("start %s: %v", e.Path, e.Err) }
func (e *StartError) Unwrap() error { return e.Err }

// Start spawns spec in a new process group. The child gets SIGKILL if
// malarun dies (Pdeathsig); that signal fires when the spawning OS thread
// exits (golang/go#27505), so the spawning goroutine stays locked to its
// thread until the child has been waited for.
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

	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Dir = spec.Dir
	cmd.Env = spec.Env
	cmd.Stdin = stdin
	cmd.Stdout = spec.Stdout
	cmd.Stderr = spec.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}

	p := &Process{spawner: s, done: make(chan struct{}), seen: map[int]uint64{}}
	started := make(chan error, 1)
	go func() {
		// Never unlocked: the thread must outlive the child (Pdeathsig).
		runtime.LockOSThread()
		// The fork and the record of its pid happen under one lock, so a
		// reaper (which holds it) never sees this child untracked.
		s.mu.Lock()
		err := cmd.Start()
		if err == nil {
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
	if len(s.live) == 1 {
		s.stopReaping = make(chan struct{})
		go s.reapWhileRunning(s.stopReaping)
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
	if len(s.live) == 0 {
		close(s.stopReaping)
	}
}
