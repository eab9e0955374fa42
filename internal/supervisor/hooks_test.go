package supervisor_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/malarun/malarun/internal/event"

	"github.com/malarun/malarun/internal/testing/testchild"
)

// A Stop hook that runs the project's checks for longer than idle_timeout
// is work, not a hang (§F27): tool_timeout bounds it, it finishes once, and
// the run succeeds in one attempt.
func TestStopHookLongerThanIdleTimeoutFinishes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.StopHook, testchild.EnvSilence+"=10s")
		h.cfg.MaxAttempts = 3
		h.cfg.IdleTimeout = 4 * time.Second
		h.cfg.ToolTimeout = time.Minute
		var kinds []string
		var running []string
		h.observer = func(e event.Event) {
			switch e.Kind {
			case event.HookStarted, event.HookFinished:
				kinds = append(kinds, string(e.Kind)+" "+e.Hook+" "+e.Outcome)
			case event.Progress:
				running = append(running, strings.Join(e.ToolsRunning, ","))
			}
		}
		rep, err, took := h.run()
		if err != nil || rep.Attempts != 1 {
			t.Fatalf("run: %v, %d attempts\n%s", err, rep.Attempts, h.logs.String())
		}
		if took != 10*time.Second {
			t.Errorf("took %v, want the hook's 10s", took)
		}
		if got := strings.Join(kinds, "; "); got != "hook_started Stop ; hook_finished Stop success" {
			t.Errorf("hook events: %s", got)
		}
		if !strings.Contains(strings.Join(running, ";"), "the Stop hook") {
			t.Errorf("the status line's feed never named the running hook: %q", running)
		}
		if a := h.attempts(); len(a) != 1 || !strings.Contains(a[0], "--include-hook-events\n") {
			t.Errorf("--include-hook-events not passed:\n%s", a)
		}
	})
}

// A hook cut off by tool_timeout is named in the hang's reason and in the
// resume prompt: what it checks was not checked.
func TestHookCutOffIsNamedInTheResume(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.StopHook, testchild.EnvSilence+"=1h")
		h.cfg.MaxAttempts = 2
		h.cfg.IdleTimeout = 4 * time.Second
		h.cfg.ToolTimeout = 30 * time.Second
		rep, err, took := h.run()
		if err != nil || rep.Attempts != 2 {
			t.Fatalf("run: %v, %d attempts", err, rep.Attempts)
		}
		if took != 30*time.Second {
			t.Errorf("took %v, want tool_timeout", took)
		}
		if r := rep.History[0].Reason; !strings.Contains(r, "no output for 30s while the Stop hook ran (tool_timeout)") {
			t.Errorf("first attempt's reason %q", r)
		}
		resume := h.attempts()[1]
		for _, want := range []string{"--resume", "These hooks were still running", "- the Stop hook"} {
			if !strings.Contains(resume, want) {
				t.Errorf("resume attempt lacks %q:\n%s", want, resume)
			}
		}
	})
}

// The user's own --include-hook-events is not passed twice.
func TestIncludeHookEventsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.Replay)
		h.cfg.ExtraArgs = []string{"--include-hook-events"}
		if _, err, _ := h.run(); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(h.attempts()[0], "--include-hook-events\n"); n != 1 {
			t.Errorf("passed %d times", n)
		}
	})
}
