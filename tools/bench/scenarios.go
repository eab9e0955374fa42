package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/malarun/malarun/internal/testing/synth"
	"github.com/malarun/malarun/internal/testing/testchild"
)

const ms = 1e6 // ns per ms, for converting samples

// overheadFake runs malarun on a fake child that replays a recorded
// transcript (a tool call and its result) as fast as it can: what is left
// of malarun's CPU and exit latency is malarun's own.
func (h *harness) overheadFake(o options, rep *report) error {
	transcript, err := filepath.Abs(filepath.Join(o.transcripts, "tool-use-success.jsonl"))
	if err != nil {
		return err
	}
	series := func(issue, stateDir string) (own, ticks, lat, wall []float64, err error) {
		for i := range o.runs + 2 {
			r, err := h.start(runSpec{
				issue: fmt.Sprintf("%s-%d", issue, i), child: testchild.ReplaySession, stateDir: stateDir,
				env: []string{testchild.EnvTranscript + "=" + transcript}, flags: []string{"--max-attempts", "1"},
			})
			if err != nil {
				return nil, nil, nil, nil, err
			}
			if r.code != 0 || r.stdout != synth.ResultText+"\n" {
				return nil, nil, nil, nil, fmt.Errorf("run %d: %s", i, r.describe())
			}
			if i < 2 {
				continue // warm-up: page cache, first-run effects
			}
			c, ok1 := r.ownCPU()
			l, ok2 := r.addedLatency()
			if !ok1 || !ok2 {
				return nil, nil, nil, nil, fmt.Errorf("run %d: no report from the fake child", i)
			}
			own = append(own, float64(c)/ms)
			ticks = append(ticks, float64(r.ownTicks)/ms)
			lat = append(lat, float64(l)/ms)
			wall = append(wall, float64(r.wallNs)/ms)
		}
		return own, ticks, lat, wall, nil
	}
	own, ticks, lat, wall, err := series("overhead", "")
	if err != nil {
		return err
	}
	raw := map[string]any{"own_cpu_ms": own, "own_cpu_ticks_ms": ticks, "added_latency_ms": lat, "wall_ms": wall}
	// The same on tmpfs, where fsync costs nothing: what is left of the
	// latency is not the disk's.
	var tmpfsOwn, tmpfsLat dist
	if o.tmpfs != "" {
		dir, err := os.MkdirTemp(o.tmpfs, "malarun-bench-state-")
		if err == nil {
			defer os.RemoveAll(dir)
			own2, _, lat2, _, err := series("overhead-tmpfs", dir)
			if err != nil {
				return err
			}
			tmpfsOwn, tmpfsLat = summarize(own2), summarize(lat2)
			raw["tmpfs_own_cpu_ms"], raw["tmpfs_added_latency_ms"] = own2, lat2
		}
	}
	walk, procs := procWalk(21)
	raw["proc_walk_ms"], raw["processes"] = walk, procs
	closeIno, err := inotifyClose(h.prompt, 21)
	if err != nil {
		return err
	}
	raw["inotify_close_ms"] = closeIno
	rep.raw["overhead_fake"] = raw
	rep.overheadFake(summarize(own), summarize(ticks), summarize(lat), summarize(wall), o.tmpfs, tmpfsOwn, tmpfsLat,
		summarize(walk), procs, summarize(closeIno))
	return nil
}

// inotifyClose times close(2) of an inotify instance watching a file, as
// internal/transcript's follower holds one per attempt. The kernel waits for an
// SRCU grace period when the instance is destroyed, so on some kernels this
// close is slow, and it sits on malarun's exit path.
func inotifyClose(path string, times int) ([]float64, error) {
	var out []float64
	for range times {
		fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
		if err != nil {
			return nil, err
		}
		if _, err := unix.InotifyAddWatch(fd, path, unix.IN_MODIFY|unix.IN_CLOSE_WRITE); err != nil {
			unix.Close(fd)
			return nil, err
		}
		t := time.Now()
		unix.Close(fd)
		out = append(out, float64(time.Since(t).Nanoseconds())/ms)
	}
	return out, nil
}

// procWalk times what internal/proc does to find a process tree: read
// /proc/<pid>/stat of every process on the machine. It returns the times
// in ms and the number of processes.
func procWalk(times int) ([]float64, int) {
	var out []float64
	n := 0
	for range times {
		t := time.Now()
		names, _ := os.ReadDir("/proc")
		n = 0
		for _, e := range names {
			if _, err := strconv.Atoi(e.Name()); err != nil {
				continue
			}
			if _, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
				n++
			}
		}
		out = append(out, float64(time.Since(t).Nanoseconds())/ms)
	}
	return out, n
}

// detection runs hangs: a fake child prints a few lines, notes when its
// last line was written, and waits for SIGTERM, noting when it arrives.
// Both times are CLOCK_MONOTONIC in the child, so their difference needs
// no clock shared with malarun.
func (h *harness) detection(o options, rep *report) error {
	var late, treeGone []float64
	for i := range o.hangs {
		r, err := h.start(runSpec{
			issue: fmt.Sprintf("hang-%d", i), child: testchild.TimedHang,
			flags: []string{"--idle-timeout", o.idleTO.String(), "--kill-grace", "5s", "--max-attempts", "1"},
		})
		if err != nil {
			return err
		}
		if r.code != 3 || r.child == nil || r.child.TermNs == 0 {
			return fmt.Errorf("hang %d: want exit 3 after a SIGTERM the child saw; %s", i, r.describe())
		}
		late = append(late, float64(r.child.TermNs-r.child.LastLineNs-o.idleTO.Nanoseconds())/ms)
		if d, ok := r.treeGoneNs(); ok {
			treeGone = append(treeGone, float64(d)/ms)
		}
	}
	rep.raw["detection"] = map[string][]float64{"late_ms": late, "tree_gone_ms": treeGone}
	rep.detection(o, summarize(late), summarize(treeGone))
	return nil
}

// idleCost runs a child that says two lines, then nothing for o.idle and
// more, and samples malarun's CPU (every thread's schedstat) and context
// switches at both ends of a window of o.idle inside that silence.
func (h *harness) idleCost(o options) (func(*report), error) {
	marker := filepath.Join(h.tmp, "idle.marker")
	pidc := make(chan int, 1)
	type out struct {
		r   *runResult
		err error
	}
	done := make(chan out, 1)
	go func() {
		r, err := h.start(runSpec{
			issue: "idle", child: testchild.SilentText,
			env:     []string{testchild.EnvMarker + "=" + marker, testchild.EnvSilence + "=" + (o.idle + 1500*time.Millisecond).String()},
			flags:   []string{"--idle-timeout", (o.idle + time.Minute).String(), "--max-attempts", "1"},
			started: func(pid int) { pidc <- pid },
		})
		done <- out{r, err}
	}()
	var pid int
	select {
	case pid = <-pidc:
	case res := <-done:
		return nil, fmt.Errorf("malarun did not start: %v", res.err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the silent child never began its silence")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // malarun has read the last line by now
	s0, err := sampleThreads(pid)
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	time.Sleep(o.idle)
	s1, err := sampleThreads(pid)
	window := time.Since(t0)
	if err != nil {
		return nil, err
	}
	res := <-done
	if res.err != nil {
		return nil, res.err
	}
	if res.r.code != 0 {
		return nil, fmt.Errorf("idle run: %s", res.r.describe())
	}
	cpu := float64(s1.cpuNs-s0.cpuNs) / ms
	ticks := float64((s1.ticks-s0.ticks)*(1e9/userHZ)) / ms
	sw := s1.switches - s0.switches
	// Applied by the caller, once no other scenario writes to the report.
	return func(rep *report) {
		rep.raw["idle"] = map[string]any{"window_s": window.Seconds(), "cpu_ms": cpu, "ticks_ms": ticks, "switches": sw, "threads": s1.threads}
		rep.idle(window, cpu, ticks, sw, s1.threads)
	}, nil
}

// peakRSS runs the 100 MB line and the long transcript with partial
// messages, and reads the VmHWM malarun logs when a run succeeds.
func (h *harness) peakRSS(o options, rep *report) error {
	type scen struct {
		name, child string
		env         []string
	}
	scens := []scen{
		{fmt.Sprintf("one %d MB line (a base64 image in a tool result)", o.bigLine>>20), testchild.Image, []string{testchild.EnvSize + "=" + strconv.Itoa(o.bigLine)}},
		{fmt.Sprintf("%d lines with partial messages (%s)", o.longLines, "stream_event"), testchild.Partial, []string{testchild.EnvLines + "=" + strconv.Itoa(o.longLines)}},
	}
	raw := map[string]any{}
	for si, s := range scens {
		var rss, own, wall []float64
		var bytes int64
		for i := range o.rssRuns {
			r, err := h.start(runSpec{issue: fmt.Sprintf("rss-%d-%d", si, i), child: s.child, env: s.env, flags: []string{"--max-attempts", "1"}})
			if err != nil {
				return err
			}
			if r.code != 0 || r.stdout != synth.ResultText+"\n" {
				return fmt.Errorf("%s: %s", s.name, r.describe())
			}
			kb, ok := r.peakRSSKB()
			if !ok {
				return fmt.Errorf("%s: no peak_rss_kb in malarun's log; %s", s.name, r.describe())
			}
			rss = append(rss, float64(kb)/1024)
			c, _ := r.ownCPU()
			own = append(own, float64(c)/ms)
			wall = append(wall, float64(r.wallNs)/ms)
			bytes = transcriptBytes(h.state, fmt.Sprintf("rss-%d-%d", si, i))
		}
		raw[s.child] = map[string]any{"peak_rss_mb": rss, "own_cpu_ms": own, "wall_ms": wall, "transcript_bytes": bytes}
		rep.rss(s.name, bytes, summarize(rss), summarize(own), summarize(wall))
	}
	rep.raw["rss"] = raw
	return nil
}

// transcriptBytes is the size of the CLI output malarun kept for issue.
func transcriptBytes(state, issue string) int64 {
	matches, _ := filepath.Glob(filepath.Join(state, issue, "runs", "*", "attempt-*.jsonl"))
	var n int64
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil {
			n += st.Size()
		}
	}
	return n
}

// scaleRuns starts o.scale malaruns at once, each on a fake child that
// streams a run with partial messages over a couple of seconds.
func (h *harness) scaleRuns(o options, rep *report) error {
	var wg sync.WaitGroup
	results := make([]*runResult, o.scale)
	errs := make([]error, o.scale)
	t0 := time.Now()
	for i := range o.scale {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = h.start(runSpec{
				issue: fmt.Sprintf("scale-%d", i), child: testchild.Partial,
				env:   []string{testchild.EnvLines + "=" + strconv.Itoa(o.scaleLines), testchild.EnvPace + "=" + o.scalePace.String()},
				flags: []string{"--max-attempts", "1"},
			})
		}()
	}
	wg.Wait()
	batch := time.Since(t0)
	ok := 0
	var own, rss, wall []float64
	var failures []string
	for i, r := range results {
		if errs[i] != nil {
			failures = append(failures, fmt.Sprintf("run %d: %v", i, errs[i]))
			continue
		}
		if r.code != 0 || r.stdout != synth.ResultText+"\n" {
			failures = append(failures, fmt.Sprintf("run %d: exit %d", i, r.code))
			continue
		}
		ok++
		if c, good := r.ownCPU(); good {
			own = append(own, float64(c)/ms)
		}
		if kb, good := r.peakRSSKB(); good {
			rss = append(rss, float64(kb)/1024)
		}
		wall = append(wall, float64(r.wallNs)/ms)
	}
	rep.raw["scale"] = map[string]any{"ok": ok, "n": o.scale, "batch_s": batch.Seconds(), "own_cpu_ms": own, "peak_rss_mb": rss, "wall_ms": wall, "failures": failures}
	rep.scale(o, ok, batch, summarize(own), summarize(rss), summarize(wall), failures)
	return nil
}
