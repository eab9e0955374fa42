package proc_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// A second SIGTERM means "exit now" to many programs (Node ones included):
// a stop must send each process one, however long the grace and however
// often the tree is walked, the process found only by a later walk included.
func TestStopSendsOneTermToEachProcess(t *testing.T) {
	f := newFixture(t)
	log := filepath.Join(f.dir, "terms.log")
	p := f.start(testchild.CountTerm, testchild.EnvTermLog+"="+log, testchild.EnvTermLate+"=1")
	gpid := pidFrom(t, f.waitForLine(p, `{"type":"system","subtype":"fake_grandchild"`))

	hurry := make(chan struct{})
	stopped := make(chan proc.StopReport, 1)
	go func() { stopped <- p.Stop(time.Minute, hurry) }()
	// The late grandchild is started on the child's first SIGTERM, so only a
	// later walk can find it: once it has its TERM, the tree has been walked
	// (and, before the fix, the group signalled) again since the first.
	all := func() bool {
		c := termCounts(t, log)
		return len(c[testchild.RoleChild]) > 0 && len(c[testchild.RoleGrandchild]) > 0 && len(c[testchild.RoleLate]) > 0
	}
	if !waitFor(10*time.Second, all) {
		close(hurry)
		<-stopped
		t.Fatalf("not every process got a SIGTERM within 10s: %v", termCounts(t, log))
	}
	close(hurry)
	rep := <-stopped

	counts := termCounts(t, log)
	t.Logf("SIGTERMs received: %v; report %+v", counts, rep)
	if got := counts[testchild.RoleGrandchild]; len(got) != 1 || got[gpid] != 1 {
		t.Errorf("setsid grandchild %d: SIGTERMs %v, want exactly 1", gpid, got)
	}
	var pids []int
	for _, role := range []string{testchild.RoleChild, testchild.RoleGrandchild, testchild.RoleLate} {
		for pid, n := range counts[role] {
			pids = append(pids, pid)
			if n != 1 {
				t.Errorf("%s %d received %d SIGTERMs, want exactly 1", role, pid, n)
			}
		}
	}
	if rep.Termed != 3 || len(rep.Left) != 0 {
		t.Errorf("report %+v: want 3 processes sent SIGTERM and none left", rep)
	}
	assertGone(t, pids...)
}

// Over a whole grace, with nothing new in the tree, the group and the
// grandchild get one SIGTERM each, then SIGKILL once the grace is over.
func TestStopWaitsTheGraceAfterOneTerm(t *testing.T) {
	f := newFixture(t)
	log := filepath.Join(f.dir, "terms.log")
	p := f.start(testchild.CountTerm, testchild.EnvTermLog+"="+log)
	gpid := pidFrom(t, f.waitForLine(p, `{"type":"system","subtype":"fake_grandchild"`))

	grace := 500 * time.Millisecond
	rep := p.Stop(grace, nil)
	counts := termCounts(t, log)
	t.Logf("SIGTERMs received in a %v grace: %v; report %+v", grace, counts, rep)
	want := map[string]int{testchild.RoleChild: p.Pid, testchild.RoleGrandchild: gpid}
	for role, pid := range want {
		if got := counts[role]; len(got) != 1 || got[pid] != 1 {
			t.Errorf("%s %d: SIGTERMs %v, want exactly 1", role, pid, got)
		}
	}
	if rep.Duration < grace {
		t.Errorf("stopped in %v, before the %v grace ran out", rep.Duration, grace)
	}
	if rep.Termed != 2 || rep.Killed != 2 || len(rep.Left) != 0 {
		t.Errorf("report %+v: want 2 processes sent SIGTERM once, then SIGKILL", rep)
	}
	// The grace's looks at the tree back off to one every 100 ms: one per
	// fire of its timer (7 in 500 ms; a loaded machine's late timers fire
	// fewer times, never more) and one for the child's exit, where one
	// every 10 ms made 50 and more. Counted in the grace alone: the SIGKILL
	// phase looks every 10 ms until the kernel has reaped the tree, which
	// takes longer on a loaded machine (23 looks in all were seen at load 9).
	if walks, most := p.GraceWalks(), proc.GraceTimerFires(grace)+1; walks > most {
		t.Errorf("the stop looked at the tree %d times in a %v grace, want at most %d", walks, grace, most)
	}
	assertGone(t, p.Pid, gpid)
}

// termCounts reads the fake children's SIGTERM log: role -> pid -> count.
func termCounts(t *testing.T, path string) map[string]map[int]int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	counts := map[string]map[int]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(l)
		if len(f) != 3 || f[2] != "term" {
			continue
		}
		pid, err := strconv.Atoi(f[1])
		if err != nil {
			t.Fatalf("bad line in the SIGTERM log: %q", l)
		}
		if counts[f[0]] == nil {
			counts[f[0]] = map[int]int{}
		}
		counts[f[0]][pid]++
	}
	return counts
}

// waitFor polls cond until it holds or d has passed: a handshake on state
// the test can only observe, never a sleep that a test passes by.
func waitFor(d time.Duration, cond func() bool) bool {
	return testchild.WaitUntil(d, nil, cond)
}
