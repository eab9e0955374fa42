package proc_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// A group once written cgroup.kill kills every process later cloned into
// it (Linux 6.14 and later: docs/design.md §F31). A malarun killed while it
// waited for a usage limit's reset leaves its run's group; the next one
// must not start claude in it as it is (issue 40): NewCgroup makes it anew.
func TestAGroupLeftByADeadMalarunIsMadeAnew(t *testing.T) {
	name := proc.CgroupName(t.Name())
	first := requireCgroup(t, name)
	// What an earlier NewCgroup did to a group it found: cgroup.kill.
	if err := os.WriteFile(filepath.Join(first.Path, "cgroup.kill"), []byte("1"), 0); err != nil {
		t.Fatal(err)
	}
	killing := first.Admits()
	// first is left as a malarun killed outright leaves it; the next
	// malarun of the run makes its group.
	again, err := proc.NewCgroup(name)
	if err != nil {
		t.Fatalf("NewCgroup of a group left behind: %v", err)
	}
	t.Cleanup(func() { again.Remove() })
	if err := again.Admits(); err != nil {
		t.Errorf("the group made anew kills what starts in it: %v", err)
	}
	f := newFixture(t)
	p := f.startIn(again, testchild.Replay, envMark+"="+t.Name())
	f.waitForLine(p, testchild.InitLine)
	<-p.Done()
	if killing == nil {
		t.Logf("this kernel lets a process start in a group written cgroup.kill: the check below is the one that matters")
	}
}

// The check NewCgroup makes finds a group the kernel kills every process
// in, and names it.
func TestAdmitsFindsAGroupThatKillsWhatStarts(t *testing.T) {
	cg := requireCgroup(t, proc.CgroupName(t.Name()))
	if err := cg.Admits(); err != nil {
		t.Fatalf("a fresh group: %v", err)
	}
	if err := os.WriteFile(filepath.Join(cg.Path, "cgroup.kill"), []byte("1"), 0); err != nil {
		t.Fatal(err)
	}
	err := cg.Admits()
	if err == nil {
		t.Skip("SKIPPED: this kernel (before 6.14, or with its fix) lets a process start in a group written cgroup.kill")
	}
	if !strings.Contains(err.Error(), cg.Path) || !strings.Contains(err.Error(), "killed") {
		t.Errorf("the error names neither the group nor the kill: %v", err)
	}
}
