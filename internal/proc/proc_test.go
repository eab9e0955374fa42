package proc_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
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

// envSpawner makes the test binary act as a miniature malarun: it starts a
// hanging fake child through proc and prints the child's pid. A test kills
// it outright to check that the child does not outlive it. Its value says
// how: spawnerPdeathsig (the kernel's parent-death signal, Linux) or
// spawnerGuarded (a guard process and no parent-death signal, as on darwin).
const (
	envSpawner       = "PROC_TEST_SPAWNER"
	spawnerPdeathsig = "pdeathsig"
	spawnerGuarded   = "guarded"
	// spawnerCgroup: the parent-death signal and the run's cgroup, with a
	// grandchild whose environment is empty (no marker); it prints the
	// cgroup's path after the pids.
	spawnerCgroup = "cgroup"
	envMark       = "PROC_TEST_MARK" // the guarded spawner's marker entry
)

func TestMain(m *testing.M) {
	testchild.MaybeRun()
	if len(os.Args) > 1 && os.Args[1] == proc.GuardCommand {
		proc.RunGuard(os.Stdin) // the guarded spawner's guard, as cmd/malarun wires it
		os.Exit(0)
	}
	if mode := os.Getenv(envSpawner); mode != "" {
		runSpawner(mode)
	}
	if code, ok := runKernelHelper(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// runSpawner starts the fake child that ignores SIGTERM and leaves a setsid
// grandchild that ignores it too, prints "<child pid> <grandchild pid>
// <guard pid or 0>", and blocks until it is killed.
func runSpawner(mode string) {
	var sp *proc.Spawner
	marker := envMark + "=" + strconv.Itoa(os.Getpid())
	switch mode {
	case spawnerPdeathsig:
		sp = proc.NewSpawner()
	case spawnerGuarded:
		sp = proc.NewSpawner()
		proc.GuardWithoutPdeathsig(sp, os.Args[0], proc.GuardCommand)
	case spawnerCgroup:
		sp = proc.NewSpawner()
	default:
		fmt.Println("error: unknown spawner mode", mode)
		os.Exit(1)
	}
	env := testchild.Env(testchild.Grandchild, envSpawner+"=", marker)
	var cg *proc.Cgroup
	if mode == spawnerCgroup {
		var err error
		if cg, err = proc.NewCgroup(proc.CgroupName(marker)); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		env = append(env, testchild.EnvBareGrandchild+"=1")
	}
	out, _ := os.CreateTemp("", "spawner-out")
	defer os.Remove(out.Name())
	p, err := sp.Start(proc.Spec{
		Path: os.Args[0], Env: env,
		Stdout: out, Stderr: out, Marker: marker, Cgroup: cg,
	})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	line, err := waitForLine(out.Name(), `{"type":"system","subtype":"fake_grandchild"`, p.Done())
	if err != nil || sp.GuardError() != nil {
		fmt.Println("error", err, sp.GuardError())
		os.Exit(1)
	}
	gpid, err := numberAfter(line, "pid")
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	if cg != nil {
		if cg.Refused() != nil {
			fmt.Println("error", cg.Refused())
			os.Exit(1)
		}
		fmt.Println(p.Pid, gpid, 0, cg.Path, marker)
		select {}
	}
	fmt.Println(p.Pid, gpid, proc.GuardPid(sp))
	select {}
}

// fixture starts the fake child with behaviour and extra environment,
// writing its stdout and stderr to files in a temp dir.
type fixture struct {
	t      testing.TB
	dir    string
	stdout string
	sp     *proc.Spawner
}

func newFixture(t testing.TB) *fixture {
	dir := t.TempDir()
	return &fixture{t: t, dir: dir, stdout: filepath.Join(dir, "out.jsonl"), sp: proc.NewSpawner()}
}

func (f *fixture) start(behaviour string, env ...string) *proc.Process {
	f.t.Helper()
	return f.startMarked(behaviour, "", env...)
}

// startMarked starts the fake child with marker (an entry also put in its
// environment; "" for none) as its Spec.Marker.
func (f *fixture) startMarked(behaviour, marker string, env ...string) *proc.Process {
	f.t.Helper()
	return f.startIn(nil, behaviour, marker, env...)
}

// startIn starts the fake child in cgroup cg (nil: none).
func (f *fixture) startIn(cg *proc.Cgroup, behaviour, marker string, env ...string) *proc.Process {
	f.t.Helper()
	qemutest.SkipReexec(f.t)
	if marker != "" {
		env = append(env, marker)
	}
	out, err := os.Create(f.stdout)
	if err != nil {
		f.t.Fatal(err)
	}
	defer out.Close()
	errf, err := os.Create(filepath.Join(f.dir, "err.txt"))
	if err != nil {
		f.t.Fatal(err)
	}
	defer errf.Close()
	env = testchild.Env(behaviour, env...)
	p, err := f.sp.Start(proc.Spec{Path: os.Args[0], Env: env, Stdout: out, Stderr: errf, Marker: marker, Cgroup: cg})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() {
		p.Stop(0, nil)
	})
	return p
}

// waitForLine waits until the child's stdout holds a line starting with
// prefix, following the file as it grows. The handshake replaces sleeps.
func (f *fixture) waitForLine(p *proc.Process, prefix string) string {
	f.t.Helper()
	line, err := waitForLine(f.stdout, prefix, p.Done())
	if err != nil {
		f.t.Fatal(err)
	}
	return line
}

// waitForLine waits up to 10s for a line starting with prefix in the file
// at path, which the child whose exit closes done is writing.
func waitForLine(path, prefix string, done <-chan struct{}) (string, error) {
	var line string
	found := func() bool {
		b, _ := os.ReadFile(path)
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, prefix) {
				line = l
				return true
			}
		}
		return false
	}
	if testchild.WaitUntil(10*time.Second, done, found) {
		return line, nil
	}
	select {
	case <-done:
		return "", fmt.Errorf("child exited before printing %q", prefix)
	default:
	}
	return "", fmt.Errorf("no line %q within 10s", prefix)
}

func assertGone(t *testing.T, pids ...int) {
	t.Helper()
	for _, pid := range pids {
		if err := unix.Kill(pid, 0); !errors.Is(err, unix.ESRCH) {
			st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			t.Errorf("pid %d still exists (kill 0: %v): %s", pid, err, st)
		}
	}
}

func TestStartRunsChildWithPromptOnStdinAndOutputInFile(t *testing.T) {
	qemutest.SkipReexec(t)
	f := newFixture(t)
	prompt := filepath.Join(f.dir, "prompt.md")
	os.WriteFile(prompt, []byte("do the thing"), 0o600)
	args := filepath.Join(f.dir, "args.txt")
	out, _ := os.Create(f.stdout)
	defer out.Close()
	p, err := f.sp.Start(proc.Spec{
		Path: os.Args[0], Args: []string{"-p", "--verbose"}, StdinPath: prompt,
		Env:    testchild.Env(testchild.Replay, testchild.EnvArgsFile+"="+args, testchild.EnvExit+"=3"),
		Stdout: out, Stderr: out,
	})
	if err != nil {
		t.Fatal(err)
	}
	if e := p.Exit(); e.Code != 3 || e.Killed() || e.Err != nil {
		t.Errorf("exit = %+v, want code 3", e)
	}
	got, _ := os.ReadFile(args)
	if want := "-p\n--verbose\n--stdin--\ndo the thing" + testchild.AttemptSeparator; string(got) != want {
		t.Errorf("child saw %q, want %q", got, want)
	}
	b, _ := os.ReadFile(f.stdout)
	if !strings.HasSuffix(string(b), testchild.Result+"\n") {
		t.Errorf("stdout file does not end with the result line: %q", b)
	}
	if rep := p.Stop(time.Second, nil); rep.Termed != 0 || rep.Killed != 0 {
		t.Errorf("stopping an exited childless tree sent signals: %+v", rep)
	}
}

func TestStartWithoutStdinGivesDevNull(t *testing.T) {
	f := newFixture(t)
	args := filepath.Join(f.dir, "args.txt")
	p := f.start(testchild.Replay, testchild.EnvArgsFile+"="+args)
	p.Exit()
	got, _ := os.ReadFile(args)
	if !strings.HasSuffix(string(got), "--stdin--\n"+testchild.AttemptSeparator) {
		t.Errorf("child read %q from stdin, want nothing", got)
	}
}

func TestStartMissingBinary(t *testing.T) {
	f := newFixture(t)
	out, _ := os.Create(f.stdout)
	defer out.Close()
	_, err := f.sp.Start(proc.Spec{Path: "malarun-no-such-claude", Stdout: out, Stderr: out})
	var se *proc.StartError
	if !errors.As(err, &se) || !errors.Is(err, exec.ErrNotFound) {
		t.Fatalf("err = %v, want a StartError wrapping exec.ErrNotFound", err)
	}
}

func TestStopObedientChildIsQuick(t *testing.T) {
	f := newFixture(t)
	p := f.start(testchild.Hang)
	f.waitForLine(p, `{"type":"system","subtype":"init"`)
	rep := p.Stop(time.Minute, nil)
	if rep.Termed == 0 || rep.Killed != 0 {
		t.Errorf("report %+v: want SIGTERM only", rep)
	}
	if e := p.Exit(); e.Signal != syscall.SIGTERM {
		t.Errorf("child exit %+v, want death by SIGTERM", e)
	}
	assertGone(t, p.Pid)
}

func TestStopKillsSetsidGrandchildThatIgnoresTerm(t *testing.T) {
	f := newFixture(t)
	p := f.start(testchild.Grandchild)
	line := f.waitForLine(p, `{"type":"system","subtype":"fake_grandchild"`)
	gpid := pidFrom(t, line)
	if !containsPid(p.Tree(), gpid) {
		t.Fatalf("grandchild %d not in tree %v", gpid, p.Tree())
	}
	grace := 200 * time.Millisecond
	rep := p.Stop(grace, nil)
	if rep.Killed < 2 || len(rep.Left) != 0 {
		t.Errorf("report %+v: want both processes killed after the grace", rep)
	}
	if rep.Duration < grace {
		t.Errorf("stopped in %v, before the %v grace ran out", rep.Duration, grace)
	}
	assertGone(t, p.Pid, gpid)
	if tree := p.Tree(); len(tree) != 0 {
		t.Errorf("tree after stop: %v", tree)
	}
}

func TestStopHurrySkipsGrace(t *testing.T) {
	f := newFixture(t)
	p := f.start(testchild.IgnoreTerm)
	f.waitForLine(p, `{"type":"system","subtype":"init"`)
	hurry := make(chan struct{})
	close(hurry)
	rep := p.Stop(time.Hour, hurry)
	if rep.Killed != 1 {
		t.Errorf("report %+v: want the child killed at once", rep)
	}
	assertGone(t, p.Pid)
}

// After the CLI exits on its own, its setsid tool processes can still be
// running: stopping the exited tree must end them.
func TestStopAfterChildExitEndsLeftovers(t *testing.T) {
	f := newFixture(t)
	p := f.start(testchild.Grandchild)
	gpid := pidFrom(t, f.waitForLine(p, `{"type":"system","subtype":"fake_grandchild"`))
	unix.Kill(p.Pid, unix.SIGKILL)
	<-p.Done()
	if !containsPid(p.Tree(), gpid) {
		t.Fatalf("orphaned grandchild %d not found in tree %v", gpid, p.Tree())
	}
	p.Stop(100*time.Millisecond, nil)
	assertGone(t, gpid)
}

// The fake child reproduces docs/design.md §F13 through a pipe (output lost,
// exit 0); through a file, as proc always sets it up, nothing is lost.
func TestNonBlockingChildLosesOutputToPipeNotToFile(t *testing.T) {
	qemutest.SkipReexec(t)
	cmd := exec.Command(os.Args[0])
	cmd.Env = testchild.Env(testchild.NonBlocking)
	r, w, _ := os.Pipe()
	cmd.Stdout = w
	if err := cmd.Run(); err != nil {
		t.Fatalf("through a pipe: %v", err)
	}
	w.Close()
	var n int
	sc := bufio.NewReader(r)
	for {
		b, err := sc.ReadByte()
		if err != nil {
			break
		}
		_ = b
		n++
	}
	if n >= 20<<20 {
		t.Fatalf("through a pipe the child wrote all %d bytes: the fake does not reproduce docs/design.md §F13", n)
	}

	f := newFixture(t)
	p := f.start(testchild.NonBlocking)
	if e := p.Exit(); e.Code != 0 {
		t.Fatalf("exit %+v", e)
	}
	b, _ := os.ReadFile(f.stdout)
	if !strings.HasSuffix(string(b), testchild.Result+"\n") || len(b) < 20<<20 {
		t.Errorf("through a file got %d bytes, result line present: %v", len(b), strings.HasSuffix(string(b), testchild.Result+"\n"))
	}
	t.Logf("pipe delivered %d bytes, file %d", n, len(b))
}

func pidFrom(t *testing.T, line string) int {
	t.Helper()
	pid, err := numberAfter(line, "pid")
	if err != nil {
		t.Fatal(err)
	}
	return int(pid)
}

// numberAfter reads the number of a JSON key in one of the fake child's lines.
func numberAfter(line, key string) (uint64, error) {
	k := `"` + key + `":`
	i := strings.Index(line, k)
	if i < 0 {
		return 0, fmt.Errorf("no %s in %q", key, line)
	}
	s := line[i+len(k):]
	if j := strings.IndexAny(s, ",}"); j >= 0 {
		s = s[:j]
	}
	return strconv.ParseUint(s, 10, 64)
}

func containsPid(pids []int, pid int) bool {
	for _, p := range pids {
		if p == pid {
			return true
		}
	}
	return false
}
