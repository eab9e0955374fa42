package attempt

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/stream"
)

func hookStarted(id, name string) stream.Event {
	return stream.Event{Type: "system", Subtype: "hook_started", HookID: id, HookName: name, HookEvent: strings.Split(name, ":")[0]}
}

func hookResponse(id, name, outcome string, code int) stream.Event {
	return stream.Event{Type: "system", Subtype: "hook_response", HookID: id, HookName: name, HookEvent: strings.Split(name, ":")[0],
		HookOutcome: outcome, HookExitCode: code, HasHookExitCode: true}
}

// A running hook is work, like a tool call (§F27): tool_timeout bounds its
// silence, and the idle limit comes back when it ends.
func TestHooksAreWork(t *testing.T) {
	cases := []machineCase{
		{name: "a Stop hook longer than idle_timeout finishes", final: StopExited, steps: []step{
			{at: 1 * time.Second, in: line(textLine), wake: 11 * time.Second},
			{at: 2 * time.Second, in: line(hookStarted("h1", "Stop")), wake: 62 * time.Second},
			{at: 11 * time.Second, in: wakeUp, wake: 62 * time.Second},
			{at: 40 * time.Second, in: line(hookResponse("h1", "Stop", "success", 0)), wake: 50 * time.Second},
			{at: 41 * time.Second, in: line(okResult), wake: 46 * time.Second},
			{at: 42 * time.Second, in: streamEnd, stop: StopExited},
		}},
		{name: "hook_progress is a line, not an end", final: StopHang, steps: []step{
			{at: 1 * time.Second, in: line(hookStarted("h1", "Stop")), wake: 61 * time.Second},
			{at: 30 * time.Second, in: line(stream.Event{Type: "system", Subtype: "hook_progress", HookID: "h1", HookName: "Stop"}), wake: 90 * time.Second},
			{at: 90 * time.Second, in: wakeUp, stop: StopHang},
		}},
		{name: "a failed hook ends like any other", final: StopExited, steps: []step{
			{at: 0, in: line(initLine), wake: 10 * time.Second},
			{at: 1 * time.Second, in: line(hookStarted("h1", "PostToolUse:Bash")), wake: 61 * time.Second},
			{at: 2 * time.Second, in: line(hookResponse("h1", "PostToolUse:Bash", "error", 1)), wake: 12 * time.Second},
			{at: 3 * time.Second, in: streamEnd, stop: StopExited},
		}},
		{name: "a response for a hook never started changes nothing", final: StopHang, steps: []step{
			{at: 0, in: line(initLine), wake: 10 * time.Second},
			{at: 1 * time.Second, in: line(hookResponse("h9", "Stop", "success", 0)), wake: 10 * time.Second},
			{at: 11 * time.Second, in: wakeUp, stop: StopHang},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runCase(t, c) })
	}
}

// A hook still running at the stop is cut off, named in the hang's reason
// and listed for the resume prompt; one that ended is not.
func TestHookCutOffIsNamed(t *testing.T) {
	s := New(limits, t0)
	s.Step(line(hookStarted("h1", "PreToolUse:Bash")), t0)
	s.Step(line(hookResponse("h1", "PreToolUse:Bash", "success", 0)), t0.Add(time.Second))
	s.Step(line(toolCall("t1", "Bash")), t0.Add(2*time.Second))
	s.Step(line(toolResult("t1")), t0.Add(3*time.Second))
	s.Step(line(hookStarted("h2", "Stop")), t0.Add(4*time.Second))
	if got := s.ToolsRunning(); !reflect.DeepEqual(got, []string{"the Stop hook"}) {
		t.Errorf("running %v", got)
	}
	if eff := s.Step(wakeUp, t0.Add(64*time.Second)); !eff.Stop || s.StopReason() != StopHang {
		t.Fatalf("no hang at tool_timeout: %+v %v", eff, s.StopReason())
	}
	if got := s.HooksCutOff(); len(got) != 1 || got[0].Label() != "the Stop hook" || got[0].ID != "h2" {
		t.Errorf("cut off %+v", got)
	}
	_, reason := hangEnding(s)
	if want := "no output for 1m0s while the Stop hook ran (tool_timeout)"; !strings.HasPrefix(reason, want) {
		t.Errorf("reason %q, want it to begin %q", reason, want)
	}
}

// A stream that starts hooks and never ends them keeps a bounded list.
func TestRunningHooksAreBounded(t *testing.T) {
	s := New(limits, t0)
	for i := range 3 * stream.MaxListItems {
		s.Step(line(hookStarted(strings.Repeat("h", 1+i%7)+string(rune('a'+i%26))+time.Duration(i).String(), "Stop")), t0)
	}
	if n := len(s.live.hooks); n != stream.MaxListItems {
		t.Errorf("%d hooks kept, want %d", n, stream.MaxListItems)
	}
	// The status line and a hang name the first few, and count the rest.
	if got := s.ToolsRunning(); len(got) != namesShown+1 || got[namesShown] != fmt.Sprintf("%d more", stream.MaxListItems-namesShown) {
		t.Errorf("running %q", got)
	}
	if got := (Hook{}).Label(); got != "a hook" {
		t.Errorf("unnamed hook: %q", got)
	}
}
