package proc_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/testing/qemutest"
	"github.com/malarun/malarun/internal/testing/testchild"
	"golang.org/x/sys/unix"
)

// envPid1 makes the test binary act as malarun running as PID 1 of a PID
// namespace, as in a container: its value is a directory for the child's
// output. See runPid1.
const envPid1 = "PROC_TEST_PID1"

// unshareArgs give the test binary a PID namespace of its own, with /proc
// mounted for it (proc reads the tree from /proc), and end the namespace
// if unshare dies (the test's cleanup kills it).
var unshareArgs = []string{"--pid", "--fork", "--mount-proc", "--kill-child"}

// As PID 1 of a namespace malarun adopts every orphan in it, whether or not
// it is a subreaper. It must reap them while the CLI runs, and on SIGTERM
// (what `docker stop` sends) stop the tree and exit 143, the code the
// supervisor gives an interrupted run.
func TestPid1ReapsOrphansAndStopsTreeOnSigterm(t *testing.T) {
	qemutest.SkipReexec(t)
	unshare := needUnshare(t)
	cmd := exec.Command(unshare, append(unshareArgs, os.Args[0])...)
	dir := t.TempDir()
	cmd.Env = append(os.Environ(), envPid1+"="+dir, "GORACE=atexit_sleep_ms=0")
	// A file, not a buffer: os/exec would fill a buffer from a goroutine.
	stderrFile, err := os.Create(filepath.Join(dir, "pid1.stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderrFile.Close()
	cmd.Stderr = stderrFile
	stderr := func() string { b, _ := os.ReadFile(stderrFile.Name()); return string(b) }
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := false
	t.Cleanup(func() {
		if !waited {
			cmd.Process.Kill() // --kill-child takes the namespace with it
			cmd.Wait()
		}
	})
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	next := func(prefix string) string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok || !strings.HasPrefix(l, prefix) {
				t.Fatalf("PID 1 said %q (open %v), want %q...; stderr:\n%s", l, ok, prefix, stderr())
			}
			return l
		case <-time.After(30 * time.Second):
			t.Fatalf("PID 1 did not say %q within 30s; stderr:\n%s", prefix, stderr())
		}
		return ""
	}

	t.Log(next("reaped:"))
	next("ready")
	pid1, err := childOf(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Kill(pid1, unix.SIGTERM); err != nil {
		t.Fatal(err)
	}
	t.Log(next("stopped:"))
	err = cmd.Wait()
	waited = true
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 143 {
		t.Errorf("PID 1 ended with %v, want exit code 143; stderr:\n%s", err, stderr())
	}
}

// runPid1 is the program TestPid1ReapsOrphansAndStopsTreeOnSigterm runs as
// PID 1. It prints "reaped: ..." once the orphan of an Orphaner child has
// been reaped while that child still runs, "ready", and on SIGTERM stops
// the tree, prints "stopped: ..." and exits 143. On any failure it prints
// "error: ..." and exits 1.
func runPid1(dir string) int {
	// First: the kernel drops signals to PID 1 that it has no handler for.
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	fail := func(format string, a ...any) int {
		fmt.Printf("error: "+format+"\n", a...)
		return 1
	}
	if pid := os.Getpid(); pid != 1 {
		return fail("running as pid %d, not 1", pid)
	}
	stdout := filepath.Join(dir, "child.jsonl")
	f, err := os.Create(stdout)
	if err != nil {
		return fail("%v", err)
	}
	defer f.Close()
	sp := proc.NewSpawner()
	p, err := sp.Start(proc.Spec{Path: os.Args[0], Env: testchild.Env(testchild.Orphaner, envPid1+"="), Stdout: f, Stderr: f})
	if err != nil {
		return fail("%v", err)
	}
	defer p.Stop(0, nil)

	line, err := waitForLine(stdout, orphanPrefix, p.Done())
	if err != nil {
		return fail("%v", err)
	}
	pid, start, err := orphanFrom(line)
	if err != nil {
		return fail("%v", err)
	}
	gone := waitFor(10*time.Second, func() bool { return !sameProcess(pid, start) })
	select {
	case <-p.Done():
		return fail("the child exited (%+v): it must still run", p.Exit())
	default:
	}
	if !gone {
		st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		return fail("orphan %d not reaped while the child ran: %s", pid, bytes.TrimSpace(st))
	}
	fmt.Printf("reaped: orphan %d, while the child %d still runs\n", pid, p.Pid)
	fmt.Println("ready")

	<-term
	rep := p.Stop(5*time.Second, nil)
	exit := p.Exit()
	others, err := otherProcesses()
	switch {
	case err != nil:
		return fail("%v", err)
	case rep.Termed != 1 || rep.Killed != 0 || len(rep.Left) != 0:
		return fail("stop report %+v: want the child ended by its one SIGTERM", rep)
	case exit.Signal != syscall.SIGTERM:
		return fail("child exit %+v, want death by SIGTERM", exit)
	case len(others) != 0:
		return fail("processes left in the namespace: %v", others)
	}
	fmt.Printf("stopped: report %+v, child %+v, nothing else left in the namespace\n", rep, exit)
	return 143
}

// otherProcesses lists the pids in /proc other than this process's own.
func otherProcesses() ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// childOf finds the child of ppid (unshare's forked child, PID 1 inside
// its namespace) by the parent field of /proc/<pid>/stat.
func childOf(ppid int) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// Fields after the command name, which ends at the last ')': state, ppid.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(ppid) {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no child of %d in /proc", ppid)
}

// needUnshare returns the path of util-linux unshare if it can create a PID
// namespace here (root, or unprivileged user namespaces). Otherwise the
// test is skipped, loudly, or fails under CI=true.
func needUnshare(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("unshare")
	if err == nil {
		out, runErr := exec.Command(path, append(unshareArgs, "true")...).CombinedOutput()
		if runErr == nil {
			return path
		}
		err = fmt.Errorf("%s %s true: %v: %s", path, strings.Join(unshareArgs, " "), runErr, bytes.TrimSpace(out))
	}
	msg := fmt.Sprintf("NOT RUN: %s needs a PID namespace (util-linux unshare, as root or with user namespaces): %v", t.Name(), err)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	fmt.Fprintln(os.Stderr, "SKIP", msg) // shown without -v too
	t.Skip(msg)
	return ""
}

// runKernelHelper runs the test binary as one of this kernel's helper
// programs, when the environment asks for one (see TestMain).
func runKernelHelper() (int, bool) {
	if dir := os.Getenv(envPid1); dir != "" {
		return runPid1(dir), true
	}
	return 0, false
}
