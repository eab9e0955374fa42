package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/malarun/malarun/internal/testing/testchild"
)

// userHZ is the unit of utime and stime in /proc/<pid>/stat on Linux
// (USER_HZ, 100 on every architecture Go supports).
const userHZ = 100

// harness holds what every scenario needs.
type harness struct {
	malarun string // the built binary
	self    string // this binary: the fake claude (internal/testing/testchild) and the wrapper
	tmp     string
	state   string // --state-dir shared by all runs (one issue per run)
	prompt  string
	baseEnv []string
	seq     atomic.Int64
}

// runSpec is one malarun run.
type runSpec struct {
	issue     string
	claudeBin string   // default: this binary as the fake claude
	child     string   // the fake claude's behaviour (internal/testing/testchild)
	baseEnv   []string // malarun's environment; default: the harness's (see benchEnv)
	env       []string // added to malarun's environment (and so the CLI's)
	flags     []string // malarun flags
	extra     []string // claude args after --
	cwd       string
	stateDir  string // default: the harness's
	// started, if set, is called with malarun's pid once it runs.
	started func(pid int)
}

// runResult is what one malarun run left.
type runResult struct {
	pid      int
	code     int
	wallNs   int64 // start to malarun's exit (its becoming a zombie)
	exitNs   int64 // CLOCK_MONOTONIC of malarun's exit
	bothCPU  int64 // rusage of malarun as its parent sees it: malarun and every descendant it reaped
	ownTicks int64 // malarun's own utime+stime from /proc/<pid>/stat while a zombie, in ns (10 ms steps)
	maxRSSKB int64 // ru_maxrss: the largest of malarun and its descendants
	child    *childReport
	stdout   string
	stderr   []byte
	dir      string
}

// ownCPU is malarun's own CPU: what its parent's rusage counts for it
// minus what its child (and the child's descendants) reported using. The
// child reports just before it exits, so its exit itself (tens of
// microseconds) is charged to malarun: an upper bound. ok is false without
// a report.
func (r *runResult) ownCPU() (ns int64, ok bool) {
	if r.child == nil {
		return 0, false
	}
	return r.bothCPU - r.child.CPUNs, true
}

// addedLatency is from the child's exit to malarun's.
func (r *runResult) addedLatency() (ns int64, ok bool) {
	if r.child == nil || r.child.ExitNs == 0 {
		return 0, false
	}
	return r.exitNs - r.child.ExitNs, true
}

// logField returns the value of field in malarun's first JSON log line
// whose message is msg.
func (r *runResult) logField(msg, field string) (any, bool) {
	sc := bufio.NewScanner(bytes.NewReader(r.stderr))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) != nil || rec["message"] != msg {
			continue
		}
		v, ok := rec[field]
		return v, ok
	}
	return nil, false
}

// peakRSSKB is the VmHWM malarun logs at the end of a successful run.
func (r *runResult) peakRSSKB() (int64, bool) {
	v, ok := r.logField("run succeeded", "peak_rss_kb")
	f, isNum := v.(float64)
	return int64(f), ok && isNum
}

// treeGoneNs is the "took" malarun logs once an attempt's tree is gone.
func (r *runResult) treeGoneNs() (int64, bool) {
	v, ok := r.logField("process tree gone", "took")
	s, isStr := v.(string)
	if !ok || !isStr {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	return d.Nanoseconds(), err == nil
}

func (r *runResult) describe() string {
	return fmt.Sprintf("malarun exit %d; stderr:\n%s", r.code, tail(r.stderr, 3000))
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// start runs malarun as spec says and returns when it has exited and been
// reaped. It waits for the exit with waitid(WNOWAIT), which leaves malarun
// a zombie: its /proc/<pid>/stat still holds its own CPU times, not yet
// merged into this process's. Then it reaps it, and gets its rusage.
func (h *harness) start(spec runSpec) (*runResult, error) {
	dir := filepath.Join(h.tmp, "runs", fmt.Sprintf("%04d-%s", h.seq.Add(1), spec.issue))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	bin := spec.claudeBin
	if bin == "" {
		bin = h.self
	}
	state := h.state
	if spec.stateDir != "" {
		state = spec.stateDir
	}
	args := []string{spec.issue, "--prompt", h.prompt, "--claude-bin", bin, "--state-dir", state, "--log-format", "json"}
	if spec.cwd != "" {
		args = append(args, "--cwd", spec.cwd)
	}
	args = append(args, spec.flags...)
	if len(spec.extra) > 0 {
		args = append(append(args, "--"), spec.extra...)
	}
	cmd := exec.Command(h.malarun, args...)
	base := h.baseEnv
	if spec.baseEnv != nil {
		base = spec.baseEnv
	}
	cmd.Dir = h.tmp // no ./malarun.yaml here
	cmd.Env = append(append([]string(nil), base...), testchild.EnvReport+"="+filepath.Join(dir, "report.json"))
	if spec.child != "" {
		cmd.Env = append(cmd.Env, testchild.EnvBehaviour+"="+spec.child)
	}
	cmd.Env = append(cmd.Env, spec.env...)
	stdout, stderr, err := outputFiles(dir, "stdout")
	if err != nil {
		return nil, err
	}
	defer stdout.Close()
	defer stderr.Close()
	cmd.Stdout, cmd.Stderr = stdout, stderr

	r := &runResult{dir: dir}
	t0 := testchild.Monotonic()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r.pid = cmd.Process.Pid
	if spec.started != nil {
		spec.started(r.pid)
	}
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, r.pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EINTR) {
			cmd.Process.Kill()
			cmd.Wait()
			return nil, fmt.Errorf("waitid: %w", err)
		}
	}
	r.exitNs = testchild.Monotonic()
	r.wallNs = r.exitNs - t0
	if st, err := readStat(r.pid); err == nil {
		r.ownTicks = (st[11] + st[12]) * (1e9 / userHZ)
	}
	cmd.Wait() // reaps; a non-zero exit is a result, not an error here
	r.code = cmd.ProcessState.ExitCode()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.bothCPU = ru.Utime.Nano() + ru.Stime.Nano()
		r.maxRSSKB = ru.Maxrss
	}
	if b, err := os.ReadFile(filepath.Join(dir, "report.json")); err == nil {
		var rep childReport
		if json.Unmarshal(b, &rep) == nil {
			r.child = &rep
		}
	}
	r.stdout = readString(filepath.Join(dir, "stdout"))
	r.stderr, _ = os.ReadFile(filepath.Join(dir, "stderr"))
	return r, nil
}

func readString(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// readStat returns the fields of /proc/<pid>/stat after the command name,
// as numbers: index 0 is field 3 (state, 0 here), so utime (field 14) is
// index 11, stime 12, cutime 13, cstime 14.
func readStat(pid int) ([]int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, errors.New("bad stat")
	}
	fields := strings.Fields(string(b[i+1:]))
	out := make([]int64, len(fields))
	for j, f := range fields {
		out[j], _ = strconv.ParseInt(f, 10, 64)
	}
	if len(out) < 15 {
		return nil, errors.New("short stat")
	}
	return out, nil
}

// threadCPU samples a live process: the CPU time of all its threads in ns
// (schedstat, exact), its own utime+stime in ticks (stat), and the context
// switches of all its threads (each is a wake-up or a preemption).
type threadCPU struct {
	cpuNs    int64
	ticks    int64
	switches int64
	threads  int
}

func sampleThreads(pid int) (threadCPU, error) {
	var s threadCPU
	st, err := readStat(pid)
	if err != nil {
		return s, err
	}
	s.ticks = st[11] + st[12]
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return s, err
	}
	for _, t := range tasks {
		base := fmt.Sprintf("/proc/%d/task/%s/", pid, t.Name())
		if b, err := os.ReadFile(base + "schedstat"); err == nil {
			if f := strings.Fields(string(b)); len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				s.cpuNs += n
			}
		}
		if b, err := os.ReadFile(base + "status"); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
					n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
					s.switches += n
				}
			}
		}
		s.threads++
	}
	return s, nil
}

// outputFiles creates a run's stdout (named stdoutName) and stderr files in
// dir: files, not pipes, as malarun gives the CLI, so the measured program
// writes the way it does in use.
func outputFiles(dir, stdoutName string) (stdout, stderr *os.File, err error) {
	stdout, err = os.Create(filepath.Join(dir, stdoutName))
	if err != nil {
		return nil, nil, err
	}
	stderr, err = os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		stdout.Close()
		return nil, nil, err
	}
	return stdout, stderr, nil
}
