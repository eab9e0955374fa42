package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// The kinds of tree the kill benchmark ends, as its table names them. The
// -tree kinds add a grandchild in its own session, as the Bash tool does.
const (
	killObey       = "obey"
	killObeyTree   = "obey-tree"
	killIgnore     = "ignore"
	killIgnoreTree = "ignore-tree"
)

func killKinds() []string { return []string{killObey, killObeyTree, killIgnore, killIgnoreTree} }

func ignoresTerm(kind string) bool { return kind == killIgnore || kind == killIgnoreTree }

// killBehaviour is the fake child that makes a tree of kind; tree says it
// prints a testchild.GrandchildLine once its grandchild is ready.
func killBehaviour(kind string) (behaviour string, tree bool) {
	switch kind {
	case killObey:
		return testchild.Hang, false // prints init, blocks
	case killObeyTree:
		return testchild.ObeyTree, true
	case killIgnore:
		return testchild.IgnoreTerm, false
	default:
		return testchild.Grandchild, true
	}
}

// killSample is one tree ended by proc.Process.Stop.
type killSample struct {
	// StopNs is from the call to Stop (the decision) to its return: the
	// tree seen gone by proc itself.
	StopNs int64 `json:"stop_ns"`
	// DeadNs is from the decision to the death of the last process of the
	// tree, as its pidfd tells, independently of proc's own view.
	DeadNs int64 `json:"dead_ns"`
	Termed int   `json:"termed"`
	Killed int   `json:"killed"`
	Left   int   `json:"left"`
	// Alive counts pids of the tree still there after Stop returned.
	Alive int `json:"alive"`
}

// killResult is what `malarun-bench kill` prints.
type killResult struct {
	GraceNs  int64                   `json:"grace_ns"`
	Variants map[string][]killSample `json:"variants"`
}

// runKillBench ends n trees of each kind through internal/proc, as malarun
// does, in a process of its own: proc makes its caller a child subreaper.
func runKillBench(n int, grace time.Duration) error {
	dir, err := os.MkdirTemp("", "malarun-bench-kill-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	sp := proc.NewSpawner()
	res := killResult{GraceNs: grace.Nanoseconds(), Variants: map[string][]killSample{}}
	for _, variant := range killKinds() {
		for i := range n {
			s, err := killOnce(sp, self, filepath.Join(dir, fmt.Sprintf("%s-%d", variant, i)), variant, grace)
			if err != nil {
				return fmt.Errorf("%s #%d: %w", variant, i, err)
			}
			res.Variants[variant] = append(res.Variants[variant], s)
		}
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

func killOnce(sp *proc.Spawner, self, base, variant string, grace time.Duration) (killSample, error) {
	out, err := os.Create(base + ".out")
	if err != nil {
		return killSample{}, err
	}
	defer out.Close()
	behaviour, tree := killBehaviour(variant)
	p, err := sp.Start(proc.Spec{
		Path: self, Env: append(withoutBenchEnv(os.Environ()), testchild.EnvBehaviour+"="+behaviour),
		Stdout: out, Stderr: out,
	})
	if err != nil {
		return killSample{}, err
	}
	pids, err := waitTree(base+".out", p, tree)
	if err != nil {
		p.Stop(0, nil)
		return killSample{}, err
	}
	// A pidfd becomes readable when its process has exited: the time of
	// each death, seen from outside proc.
	var wg sync.WaitGroup
	deaths := make([]int64, len(pids))
	for i, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			p.Stop(0, nil)
			return killSample{}, fmt.Errorf("pidfd_open %d: %w", pid, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer unix.Close(fd)
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			for {
				if _, err := unix.Poll(fds, -1); !errors.Is(err, unix.EINTR) {
					break
				}
			}
			deaths[i] = testchild.Monotonic()
		}()
	}
	decision := testchild.Monotonic()
	rep := p.Stop(grace, nil)
	returned := testchild.Monotonic()
	wg.Wait()
	s := killSample{StopNs: returned - decision, Termed: rep.Termed, Killed: rep.Killed, Left: len(rep.Left)}
	for _, d := range deaths {
		s.DeadNs = max(s.DeadNs, d-decision)
	}
	for _, pid := range pids {
		if err := unix.Kill(pid, 0); !errors.Is(err, unix.ESRCH) {
			s.Alive++
		}
	}
	// The child must have been alive to be stopped, and one that ignores
	// SIGTERM must have needed the SIGKILL: else this measured nothing.
	ignores := ignoresTerm(variant)
	if s.Termed < len(pids) || (ignores && s.Killed < len(pids)) || (!ignores && s.Killed > 0) {
		return s, fmt.Errorf("unexpected stop: %d processes, %+v", len(pids), rep)
	}
	return s, nil
}

// waitTree waits until the child is ready to be stopped and returns the
// pids of its tree: the child alone once it has printed its init line
// (behaviours that ignore SIGTERM do so before they print), or the child
// and its grandchild once it has printed the grandchild's line.
func waitTree(path string, p *proc.Process, tree bool) ([]int, error) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(path)
		for _, line := range bytes.Split(b, []byte("\n")) {
			var l struct {
				Subtype     string
				Pid, Parent int
			}
			if json.Unmarshal(line, &l) != nil {
				continue // not a line, or not a whole one yet
			}
			switch {
			case !tree && l.Subtype == "init":
				return []int{p.Pid}, nil
			case tree && l.Subtype == "fake_grandchild":
				return []int{l.Parent, l.Pid}, nil
			}
		}
		select {
		case <-p.Done():
			return nil, fmt.Errorf("child exited early: %s", b)
		case <-time.After(2 * time.Millisecond):
		}
	}
	return nil, errors.New("the child was not ready within 10s")
}
