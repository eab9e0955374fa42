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
)

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
	for _, variant := range []string{childObey, childObeyTree, childIgnore, childIgnoreTree} {
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
	p, err := sp.Start(proc.Spec{
		Path: self, Env: append(withoutBenchEnv(os.Environ()), envChild+"="+variant),
		Stdout: out, Stderr: out,
	})
	if err != nil {
		return killSample{}, err
	}
	pids, err := waitTreeLine(base+".out", p)
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
			deaths[i] = mono()
		}()
	}
	decision := mono()
	rep := p.Stop(grace, nil)
	returned := mono()
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
	ignores := variant == childIgnore || variant == childIgnoreTree
	if s.Termed < len(pids) || (ignores && s.Killed < len(pids)) || (!ignores && s.Killed > 0) {
		return s, fmt.Errorf("unexpected stop: %d processes, %+v", len(pids), rep)
	}
	return s, nil
}

// waitTreeLine waits for the child's bench_tree line and returns its pids.
func waitTreeLine(path string, p *proc.Process) ([]int, error) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(path)
		if i := bytes.Index(b, []byte(`"pids":`)); i >= 0 {
			if j := bytes.IndexByte(b[i:], ']'); j >= 0 {
				var pids []int
				if err := json.Unmarshal(b[i+len(`"pids":`):i+j+1], &pids); err != nil {
					return nil, err
				}
				return pids, nil
			}
		}
		select {
		case <-p.Done():
			return nil, fmt.Errorf("child exited early: %s", b)
		case <-time.After(2 * time.Millisecond):
		}
	}
	return nil, errors.New("no bench_tree line within 10s")
}
