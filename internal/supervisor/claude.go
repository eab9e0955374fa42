package supervisor

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/transcript"
)

// Claude starts the CLI for an attempt. The supervisor's only way to a
// process: the real one (spawned, below) or a test's fake, which plays
// scripted lines in fake time (internal/testing/fakeclaude).
type Claude interface {
	Start(l Launch) (Child, error)
}

// Launch is one claude process to start.
type Launch struct {
	Path string
	Args []string
	Dir  string
	Env  []string
	// Stdin is the prompt file it reads.
	Stdin string
	// Stdout and Stderr are the files it writes, in the run folder: created
	// by Start, exclusively (a transcript is never reused), 0600.
	Stdout, Stderr string
	// Marker is the environment entry every process of the run carries
	// (MALARUN_RUN=<issue>/<run-id>, docs/design.md §D2).
	Marker string
	// Cgroup is the run's cgroup, which it starts in (nil: none).
	Cgroup *proc.Cgroup
}

// Child is a claude that Start started.
type Child interface {
	Pid() int
	// StartTime is its start time as the process table counts it (0:
	// unknown), so that a recorded pid is never taken for another process.
	StartTime() uint64
	// Lines are its stream's lines as they are read; the channel is closed
	// once it has exited and its stream is read to the end, or after Abandon.
	Lines() <-chan stream.Event
	// ReadErr is why reading the stream failed (nil: it did not); valid
	// once Lines is closed.
	ReadErr() error
	// Done is closed when it has exited; Exit says how.
	Done() <-chan struct{}
	Exit() proc.Exit
	// Stop ends its whole tree (proc.Process.Stop): a normal exit
	// included, since tools may outlive it.
	Stop(grace time.Duration, hurry <-chan struct{}) proc.StopReport
	// Written is how many bytes of its stream it has written so far (0:
	// unknown), read or not: a timer that fires after malarun was paused
	// finds the lines written meanwhile not read yet (attempt.Input.Written).
	Written() int64
	// Consumed is how many bytes of its stream the reader has taken so far
	// (at most Written; 0: unknown): below Written, the reader is still
	// catching up; equal, anything past the last line read is a line the
	// CLI has not ended (attempt.Input.Consumed).
	Consumed() int64
	// ExpectExit says whether it is expected to exit soon (its final
	// result is in, nothing runs in the background): the real one then
	// follows its stream by polling, so that the inotify instance's slow
	// teardown overlaps its exit (transcript.Follower.ExpectExit).
	ExpectExit(soon bool)
	// Abandon stops reading its stream: processes survived SIGKILL, so
	// the stream may never end.
	Abandon()
	// Close releases its files once the attempt is over.
	Close()
}

// spawned is the real Claude: a process group started by proc.Spawner,
// writing its stream to a file that transcript.Follow reads as it grows
// (docs/design.md §D1, §D2).
//
// It holds no zerolog.Logger: a type behind an interface keeps, for
// reflection (text/template), the methods of every type its fields name,
// and a Logger would link all of zerolog's (78 KB, measured).
type spawned struct {
	spawner *proc.Spawner
	// guardFailed logs that the guard could not start (darwin), once.
	guardFailed func(error)
	guardWarned bool
}

func newSpawned(s *proc.Spawner, log zerolog.Logger) *spawned {
	if !s.Subreaper() && proc.CanSubreap {
		// Without it they are still found by the run's marker, as on darwin,
		// but a process that clears its environment is not.
		log.Warn().Msg("could not become a child subreaper: tool processes whose parent dies are found only by the run's marker")
	}
	return &spawned{spawner: s, guardFailed: func(err error) {
		log.Warn().Err(err).Msg("could not start the guard that ends claude's process tree if malarun is killed outright: such a tree lives on until the next malarun of this issue ends it")
	}}
}

// Start creates the attempt's files, follows the transcript (watched
// before claude can write to it: a run folder removed from now on takes
// the name, not the file) and starts claude.
func (c *spawned) Start(l Launch) (Child, error) {
	stdout, err := createExclusive(l.Stdout)
	if err != nil {
		return nil, err
	}
	defer stdout.Close()
	stderr, err := createExclusive(l.Stderr)
	if err != nil {
		return nil, err
	}
	defer stderr.Close()
	exited := make(chan struct{})
	follower, err := transcript.Follow(l.Stdout, exited)
	if err != nil {
		return nil, fmt.Errorf("follow %s: %w", l.Stdout, err)
	}
	p, err := c.spawner.Start(proc.Spec{Path: l.Path, Args: l.Args, Dir: l.Dir, Env: l.Env,
		StdinPath: l.Stdin, Stdout: stdout, Stderr: stderr, Marker: l.Marker, Cgroup: l.Cgroup})
	if err != nil {
		close(exited)
		follower.Close()
		return nil, err
	}
	if err := c.spawner.GuardError(); err != nil && !c.guardWarned {
		c.guardWarned = true
		c.guardFailed(err)
	}
	ch := &spawnedChild{Process: p, follower: follower, lines: make(chan stream.Event, 64), readErr: make(chan error, 1)}
	go func() {
		<-p.Done()
		close(exited)
	}()
	go ch.decode()
	return ch, nil
}

// spawnedChild is a claude process and the reader of its transcript.
type spawnedChild struct {
	*proc.Process
	follower *transcript.Follower
	lines    chan stream.Event
	readErr  chan error
	err      error
}

func (c *spawnedChild) Pid() int                   { return c.Process.Pid }
func (c *spawnedChild) StartTime() uint64          { return c.Process.StartTime }
func (c *spawnedChild) Lines() <-chan stream.Event { return c.lines }
func (c *spawnedChild) Abandon()                   { c.follower.Close() }
func (c *spawnedChild) ExpectExit(soon bool)       { c.follower.ExpectExit(soon) }
func (c *spawnedChild) Written() int64             { return c.follower.Size() }
func (c *spawnedChild) Consumed() int64            { return c.follower.Consumed() }

// The follower releases its inotify instance itself, in the background,
// as soon as the CLI has exited (see Follower.Read).
func (c *spawnedChild) Close() { c.follower.Close() }

func (c *spawnedChild) ReadErr() error {
	if c.readErr != nil {
		c.err, c.readErr = <-c.readErr, nil
	}
	return c.err
}

// decode sends every line of the transcript and closes lines at its end.
func (c *spawnedChild) decode() {
	defer close(c.lines)
	d := stream.NewDecoder(c.follower)
	for {
		ev, err := d.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			c.readErr <- err
			return
		}
		c.lines <- ev
	}
}

// createExclusive creates a file that must not exist yet: a transcript is
// never reused or overwritten.
func createExclusive(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_CLOEXEC, 0o600)
}
