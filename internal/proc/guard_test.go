package proc_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/testing/qemutest"
	"github.com/malarun/malarun/internal/testing/testchild"
	"golang.org/x/sys/unix"
)

// startSpawner runs the test binary as a miniature malarun in mode (see
// runSpawner) and returns the pids of its child and of the child's setsid
// grandchild, both ignoring SIGTERM, and of its guard (0: none).
// killSpawner kills it outright.
func startSpawner(t *testing.T, mode string) (spawner *exec.Cmd, child, grandchild, guard int) {
	t.Helper()
	spawner, fields := startSpawnerSaying(t, mode)
	if _, err := fmt.Sscan(strings.Join(fields[:min(3, len(fields))], " "), &child, &grandchild, &guard); err != nil {
		t.Fatalf("spawner said %q", strings.Join(fields, " "))
	}
	return spawner, child, grandchild, guard
}

// startSpawnerSaying starts the spawner and returns what it said, in fields.
func startSpawnerSaying(t *testing.T, mode string) (*exec.Cmd, []string) {
	t.Helper()
	qemutest.SkipReexec(t)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envSpawner+"="+mode)
	cmd.Stderr = os.Stderr
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.HasPrefix(line, "error") {
		t.Fatalf("spawner said %q", strings.TrimSpace(line))
	}
	return cmd, strings.Fields(line)
}

func killSpawner(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
}

// Where the kernel has no parent-death signal (darwin), the guard is what
// keeps a killed malarun's tree from living on: run here without the
// signal, the guard alone must end the child and its setsid grandchild
// (both ignore SIGTERM, so it takes the guard's grace and SIGKILL).
func TestGuardEndsTheTreeOfAKilledSpawner(t *testing.T) {
	spawner, child, grandchild, guard := startSpawner(t, spawnerGuarded)
	if guard == 0 {
		t.Fatal("the spawner started no guard")
	}
	t.Cleanup(func() { unix.Kill(child, unix.SIGKILL); unix.Kill(grandchild, unix.SIGKILL) })
	if !proc.Alive(child, 0) || !proc.Alive(grandchild, 0) {
		t.Fatalf("child %d or grandchild %d not running before the spawner is killed", child, grandchild)
	}
	killSpawner(t, spawner)
	gone := func() bool { return !proc.Alive(child, 0) && !proc.Alive(grandchild, 0) }
	if !testchild.WaitUntil(15*time.Second, nil, gone) {
		t.Fatalf("child %d (alive %v) or grandchild %d (alive %v) outlived the killed spawner and its guard",
			child, proc.Alive(child, 0), grandchild, proc.Alive(grandchild, 0))
	}
	// The guard exits once its work is done. It re-parented to this
	// process (a subreaper once any test made a Spawner): reap it, or a
	// later test's tree would count it as an adopted orphan.
	if !testchild.WaitUntil(15*time.Second, nil, func() bool { return !proc.Alive(guard, 0) }) {
		unix.Kill(guard, unix.SIGKILL)
		t.Errorf("the guard %d did not exit after ending the tree", guard)
	}
	var ws unix.WaitStatus
	unix.Wait4(guard, &ws, 0, nil) // ECHILD if it went to init instead
}
