package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// A tool that freezes its own cgroup (root can) wedges nothing (issue 40):
// the hang is found within tool_timeout and the run ends within its
// limits; and SIGTERM to malarun while the group is frozen ends it at once
// with 143, nothing left.
func TestAFrozenGroupWedgesNoRun(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED: not root: malarun makes no cgroup, so no tool can freeze one")
	}
	t.Run("limits", func(t *testing.T) {
		t.Parallel()
		p := newProc(t, "frozen", testchild.FreezesGroup, nil, "--tool-timeout", "2s", "--max-attempts", "2", "--kill-grace", "5s")
		start := time.Now()
		if code := p.run(); code != 3 {
			t.Fatalf("exit %d, want 3 (retries exhausted); stderr:\n%s", code, p.stderr.String())
		}
		if took := time.Since(start); took > 30*time.Second {
			t.Errorf("took %v for two attempts of a 2s tool_timeout", took)
		}
		assertFrozenRunGone(t, p)
	})
	t.Run("sigterm", func(t *testing.T) {
		t.Parallel()
		p := newProc(t, "frozen-term", testchild.FreezesGroup, nil, "--tool-timeout", "1h")
		p.start(nil, nil)
		p.waitTranscript(1, `"name":"Bash"`)
		rec := p.recordOnce("the attempt's tree", func(r record.Record) bool { return len(r.Tree) > 0 })
		if rec.Cgroup == "" {
			if os.Getenv("CI") == "true" {
				t.Fatal("CI must be able to make a cgroup")
			}
			t.Skip("SKIPPED: no cgroup could be made here")
		}
		if !testchild.WaitUntil(exitLimit, nil, func() bool {
			b, _ := os.ReadFile(filepath.Join(rec.Cgroup, "cgroup.events"))
			return strings.Contains(string(b), "frozen 1")
		}) {
			t.Fatal("the tool never froze its group")
		}
		start := time.Now()
		p.cmd.Process.Signal(syscall.SIGTERM)
		if code := p.wait(); code != 143 {
			t.Fatalf("exit %d, want 143; stderr:\n%s", code, p.stderr.String())
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("SIGTERM took %v to end a run whose group was frozen", took)
		}
		assertFrozenRunGone(t, p)
	})
}

func assertFrozenRunGone(t *testing.T, p *proc) {
	t.Helper()
	assertNothingLeft(t, p)
	if rec := p.record(); rec.Cgroup != "" {
		if _, err := os.Stat(rec.Cgroup); err == nil {
			t.Errorf("the run's cgroup %s is still there", rec.Cgroup)
		}
	}
}
