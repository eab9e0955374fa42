package e2e_test

import (
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/testing/fakeapi"
)

// Sub-agents as a real run has them (issue 46's review, docs/design.md
// §D33): in parallel, in the background without their flag, and the CLI's
// own compaction.

// Two sub-agents run in parallel inside their calls (2.1.197's default;
// 2.1.332 with run_in_background false). One answers at once, the other
// runs a 14 s Bash call: the main agent asks again only once both return,
// so it is not waiting for a first byte meanwhile, and the run ends in one
// attempt without a hang.
func TestRealCLIParallelForegroundAgents(t *testing.T) {
	t.Parallel()
	call := func(d string) fakeapi.Step {
		return fakeapi.ToolUse("Agent", map[string]any{"description": d, "prompt": "Do " + d + " and report.",
			"subagent_type": "general-purpose", "run_in_background": false})
	}
	e := newEnvWith(t, fakeapi.WithScript(fakeapi.Combine(call("one"), call("two")), fakeapi.Repeat(fakeapi.Text("Done."), 0)),
		fakeapi.WithSubagentScript(fakeapi.Bash("echo started && sleep 14 && echo finished"), fakeapi.Text("quick answer"), fakeapi.Text("slow answer")))
	e.args = []string{"--allowedTools", "Bash,Agent,Task"}
	r := e.run("--subagent-timeout", "20s", "--idle-timeout", "8s", "--first-byte-timeout", "5s", "--max-attempts", "1")
	if strings.Contains(r.stderr, "hang detected") {
		t.Errorf("a healthy pair of sub-agents was killed:\n%s", r.stderr)
	}
	r.wantCode(t, 0)
}

// A background sub-agent (run_in_background true; 2.1.332's default) whose
// Bash call runs 14 s, longer than idle_timeout: healthy, it is not
// killed. On 2.1.197 its task_started has no is_backgrounded: its call's
// result while its task runs on says it runs beside its caller.
func TestRealCLIBackgroundAgentLongBash(t *testing.T) {
	t.Parallel()
	call := fakeapi.ToolUse("Agent", map[string]any{"description": "bg", "prompt": "Run the build and report.",
		"subagent_type": "general-purpose", "run_in_background": true})
	e := newEnvWith(t, fakeapi.WithScript(call, fakeapi.Repeat(fakeapi.Text("Done."), 0)),
		fakeapi.WithSubagentScript(fakeapi.Bash("echo started && sleep 14 && echo finished"), fakeapi.Text("slow answer")))
	e.args = []string{"--allowedTools", "Bash,Agent,Task"}
	r := e.run("--subagent-timeout", "20s", "--idle-timeout", "6s", "--first-byte-timeout", "5s", "--max-attempts", "1")
	if strings.Contains(r.stderr, "hang detected") {
		t.Errorf("a healthy background sub-agent was killed:\n%s", r.stderr)
	}
	r.wantCode(t, 0)
}

// 2.1.332's reactive compaction after a prompt too long: "status
// compacting", then nothing on stdout while the summary is written (here
// 12 s to its first event), then compact_boundary. Nothing is dead: it is
// not killed at the first byte's allowance (2.1.197 does no such
// compaction). Scaled: first_byte_timeout 5s, idle_timeout 20s.
func TestRealCLICompactionIsNotAFirstByte(t *testing.T) {
	requireCLI(t, "2.1.332")
	t.Parallel()
	isCompaction := func(r *fakeapi.Request) bool {
		return strings.Contains(r.LastUserText(), "create a detailed summary") || strings.Contains(r.SystemText(), "tasked with summarizing conversations")
	}
	e := newEnvWith(t, fakeapi.WithScript(fakeapi.Bash("echo hi").WithUsage(fakeapi.Usage{Input: 170000, Output: 10}), fakeapi.PromptTooLong(210000, 200000), fakeapi.Repeat(fakeapi.Text("Done."), 0)),
		fakeapi.WithClassifier(func(r *fakeapi.Request) fakeapi.Kind {
			if k := fakeapi.Classify(r); k != fakeapi.KindCompaction {
				return k
			}
			return fakeapi.KindConversation
		}),
		fakeapi.WithResponder(func(r *fakeapi.Request) (fakeapi.Step, bool) {
			return fakeapi.Text("<analysis>a</analysis>\n<summary>slow summary</summary>").WithPace(fakeapi.Pace{FirstEvent: 12 * time.Second}), isCompaction(r)
		}))
	e.args = []string{"--model", "claude-sonnet-4-5"}
	r := e.run("--idle-timeout", "20s", "--first-byte-timeout", "5s", "--max-attempts", "1")
	n := 0
	for _, q := range e.api.Requests() {
		if isCompaction(q) {
			n++
		}
	}
	if n == 0 {
		t.Error("no compaction was asked for: the test tests nothing")
	}
	if strings.Contains(r.stderr, "hang detected") {
		t.Errorf("a compaction was killed as a request never answered:\n%s", r.stderr)
	}
	r.wantCode(t, 0)
}
