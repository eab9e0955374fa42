// Package fakeclaude is a claude that is not a process: it plays
// internal/testing/testchild's scripts (the same output the fake child process
// prints) through the supervisor's Claude seam. Its silences are
// time.Sleep, so under testing/synctest a test of a five-minute hang runs
// in fake time, in milliseconds, with nothing to kill. The supervisor's
// tests of decisions use it; its tests of process handling use the real
// fake child (testchild) instead.
package fakeclaude

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/malarun/malarun/internal/environ"
	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/supervisor"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// Claude starts scripted children. The zero value is ready to use.
type Claude struct {
	mu      sync.Mutex
	started int
}

// Started is how many children Start has started.
func (c *Claude) Started() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.started
}

// Start plays the script of the behaviour the launch's environment names
// (testchild.EnvBehaviour), as the fake child process would: it records
// the arguments and the prompt, writes the transcript and stderr files,
// and sends each line as the supervisor's follower would.
func (c *Claude) Start(l supervisor.Launch) (supervisor.Child, error) {
	stdin, err := os.ReadFile(l.Stdin)
	if err != nil {
		return nil, &proc.StartError{Path: l.Path, Err: err}
	}
	who := testchild.Child{Args: l.Args, Stdin: stdin, Getenv: func(name string) string { return environ.Get(l.Env, name) }}
	behaviour := who.Getenv(testchild.EnvBehaviour)
	script, ok := testchild.ScriptOf(behaviour, who)
	if !ok {
		return nil, fmt.Errorf("fakeclaude: behaviour %q needs a process: use the fake child (testchild)", behaviour)
	}
	stdout, err := create(l.Stdout)
	if err != nil {
		return nil, err
	}
	stderr, err := create(l.Stderr)
	if err != nil {
		stdout.Close()
		return nil, err
	}
	testchild.RecordArgs(who.Getenv(testchild.EnvArgsFile), l.Args, stdin)
	testchild.RecordTrace(func(name string) (string, bool) { return environ.Lookup(l.Env, name) })
	c.mu.Lock()
	c.started++
	pid := 1_000_000 + c.started // no process has it: a signal to it would fail
	c.mu.Unlock()
	ch := &child{pid: pid, session: who.Session(), script: script, stdout: stdout, stderr: stderr,
		lines: make(chan stream.Event, 64), done: make(chan struct{}), stop: make(chan struct{})}
	go ch.play()
	return ch, nil
}

func create(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_CLOEXEC, 0o600)
}

// child is one scripted claude.
type child struct {
	pid            int
	session        string
	script         testchild.Script
	stdout, stderr *os.File
	lines          chan stream.Event
	// offset and line number of the next line, as the decoder counts them.
	offset, line int64
	// written is what the transcript holds, for Written (read by the
	// driver while play writes).
	written atomic.Int64

	done     chan struct{} // closed when it has "exited"
	exit     proc.Exit
	stop     chan struct{} // closed by Stop: SIGTERM
	stopOnce sync.Once
}

func (c *child) Pid() int                   { return c.pid }
func (c *child) StartTime() uint64          { return 0 }
func (c *child) Lines() <-chan stream.Event { return c.lines }
func (c *child) ReadErr() error             { return nil }
func (c *child) Done() <-chan struct{}      { return c.done }
func (c *child) Exit() proc.Exit            { return c.exit }
func (c *child) Abandon()                   {}
func (c *child) ExpectExit(bool)            {}
func (c *child) Close()                     {}
func (c *child) Written() int64             { return c.written.Load() }

// Consumed is Written: its reader has every byte the moment it is written
// (a line without its end included), as a follower that keeps up does.
func (c *child) Consumed() int64 { return c.written.Load() }

// Stop ends the child as proc.Process.Stop ends the fake child process:
// SIGTERM ends it at once, whatever it was doing; one that ignores SIGTERM
// is killed once grace has passed or hurry is closed. A child that had
// exited is left as it was.
func (c *child) Stop(grace time.Duration, hurry <-chan struct{}) proc.StopReport {
	start := time.Now()
	select {
	case <-c.done:
		return proc.StopReport{}
	default:
	}
	rep := proc.StopReport{Termed: 1}
	if c.script.End == testchild.Ignores {
		t := time.NewTimer(grace)
		select {
		case <-t.C:
		case <-hurry:
		case <-c.done:
		}
		t.Stop()
		rep.Killed = 1
	}
	c.stopOnce.Do(func() { close(c.stop) })
	<-c.done
	rep.Duration = time.Since(start)
	return rep
}

// play prints the script, then ends as it says; lines is closed after the
// end, as the follower reaches the end of a transcript only once the
// writer has exited.
func (c *child) play() {
	defer close(c.lines)
	defer c.stdout.Close()
	defer c.stderr.Close()
	for _, st := range c.script.Steps {
		if !c.sleep(st.Sleep) {
			c.end(proc.Exit{Code: -1, Signal: syscall.SIGTERM})
			return
		}
		if st.Stderr != "" {
			fmt.Fprintln(c.stderr, st.Stderr)
		}
		if st.Line != "" {
			c.print(testchild.InSession(st.Line, c.session) + "\n")
		}
		if st.Partial != "" {
			c.print(testchild.InSession(st.Partial, c.session))
		}
	}
	switch c.script.End {
	case testchild.Blocks:
		<-c.stop
		c.end(proc.Exit{Code: -1, Signal: syscall.SIGTERM})
	case testchild.Ignores:
		<-c.stop // closed by Stop only after the grace: SIGKILL
		c.end(proc.Exit{Code: -1, Signal: syscall.SIGKILL})
	case testchild.Killed:
		c.end(proc.Exit{Code: -1, Signal: syscall.SIGKILL})
	case testchild.Dies:
		<-c.stop
		for _, l := range c.script.LastWords {
			c.print(testchild.InSession(l, c.session) + "\n")
		}
		c.end(proc.Exit{Code: 143})
	default:
		c.end(proc.Exit{Code: c.script.Code})
	}
}

// sleep is a silence of d; false if the child was stopped meanwhile.
func (c *child) sleep(d time.Duration) bool {
	if d <= 0 {
		select {
		case <-c.stop:
			return false
		default:
			return true
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.stop:
		return false
	}
}

// print writes text to the transcript and sends what the supervisor's
// decoder would make of it: one event per line, at its offset.
func (c *child) print(text string) {
	c.stdout.WriteString(text)
	c.written.Add(int64(len(text)))
	d := stream.NewDecoder(strings.NewReader(text))
	for {
		ev, err := d.Next()
		if err != nil {
			break
		}
		ev.Offset += c.offset
		ev.Line += c.line
		c.lines <- ev
	}
	c.offset += int64(len(text))
	c.line += int64(strings.Count(text, "\n"))
}

func (c *child) end(e proc.Exit) {
	c.exit = e
	close(c.done)
}
