package e2e_test

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// rssSampler samples, every 200 ms, the resident memory of every malarun
// of the soak that runs now: the largest sum over them (all at once) and
// the largest one.
type rssSampler struct {
	mu        sync.Mutex
	pids      map[int]bool
	sum, one  int64 // KiB
	done      chan struct{}
	stoppedWG sync.WaitGroup
}

func newRSSSampler() *rssSampler {
	r := &rssSampler{pids: map[int]bool{}, done: make(chan struct{})}
	r.stoppedWG.Add(1)
	go func() {
		defer r.stoppedWG.Done()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-r.done:
				return
			case <-tick.C:
				r.sample()
			}
		}
	}()
	return r
}

func (r *rssSampler) add(pid int)    { r.mu.Lock(); r.pids[pid] = true; r.mu.Unlock() }
func (r *rssSampler) remove(pid int) { r.mu.Lock(); delete(r.pids, pid); r.mu.Unlock() }

func (r *rssSampler) sample() {
	r.mu.Lock()
	defer r.mu.Unlock()
	var sum int64
	for pid := range r.pids {
		kb := vmRSS(pid)
		sum += kb
		r.one = max(r.one, kb)
	}
	r.sum = max(r.sum, sum)
}

func (r *rssSampler) stop() { close(r.done); r.stoppedWG.Wait() }

func (r *rssSampler) peakSum() int64 { r.mu.Lock(); defer r.mu.Unlock(); return r.sum }
func (r *rssSampler) peakOne() int64 { r.mu.Lock(); defer r.mu.Unlock(); return r.one }

// vmRSS is a process's resident memory in KiB (0: gone, or not Linux).
func vmRSS(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
