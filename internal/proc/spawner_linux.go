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
	subreaper bool

	mu   sync.Mutex
	live map[int]bool // pids started here and not yet waited for
}

// NewSpawner makes the calling process a child subreaper, so that
// descendants whose parent dies re-parent to it instead of init and can
// still be found and ended. Subreaper status is process-wide: create one
// Spawner per process.
func NewSpawner() *Spawner {
	err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	return &Spawner{self: os.Getpid(), subreaper: err == nil, live: map[int]bool{}}
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
		s.mu.Lock()
		err := cmd.Start()
		if err == nil {
			s.live[cmd.Process.Pid] = true
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
		s.mu.Lock()
		delete(s.live, p.Pid)
		s.mu.Unlock()
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

// reapAdopted waits for zombies that re-parented to malarun and that it did
// not spawn itself. It must only wait for those pids: a wait for any child
// would steal the status cmd.Wait is waiting for. It returns the zombies it
// could not reap yet: a multi-threaded process shows as a zombie before its
// last thread is gone, and cannot be waited for until then.
func (s *Spawner) reapAdopted(procs []procStat) map[int]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	var pending map[int]bool
	for _, p := range procs {
		if p.PPid != s.self || !p.zombie() || s.live[p.Pid] {
			continue
		}
		var ws unix.WaitStatus
		if pid, _ := unix.Wait4(p.Pid, &ws, unix.WNOHANG, nil); pid != p.Pid {
			if pending == nil {
				pending = map[int]bool{}
			}
			pending[p.Pid] = true
		}
	}
	return pending
}

// adopted reports whether p is a child of malarun that it did not start:
// an orphan of some tree that re-parented to the subreaper.
func (s *Spawner) adopted(p procStat) bool {
	if p.PPid != s.self {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.live[p.Pid]
}
