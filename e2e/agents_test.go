package e2e_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/testing/fakeapi"
	"github.com/malarun/malarun/internal/ui"
)

// Every silence in every agent (issue 46, docs/design.md §D33), against
// the real CLI with the allowances scaled down; the same cases at
// malarun's defaults are in phases_long_test.go.

// agentCall is the main agent's call of a general-purpose sub-agent (the
// tool is Agent to the model on both pinned CLIs, Task in the init line).
func agentCall(prompt string) fakeapi.Step {
	return fakeapi.ToolUse("Agent", map[string]any{"description": "check the build", "prompt": prompt, "subagent_type": "general-purpose"})
}

// agentEnv is an env whose main agent calls a sub-agent, then answers
// every later request (2.1.332 runs the agent beside its main agent, which
// asks again once it is launched and once it ends; 2.1.197 once it
// returns), and whose sub-agent is scripted by sub.
func agentEnv(t *testing.T, sub ...fakeapi.Step) *env {
	t.Helper()
	e := newEnvWith(t, fakeapi.WithScript(agentCall("Look at the build and report."), fakeapi.Repeat(fakeapi.Text("Done."), 0)),
		fakeapi.WithSubagentScript(sub...))
	e.args = []string{"--allowedTools", "Bash,Agent,Task"}
	return e
}

// A sub-agent whose stream dies in the middle of its text (the API holds
// it open, pinging) is ended by claude itself at subagent_timeout (malarun
// gives it CLAUDE_ASYNC_AGENT_STALL_TIMEOUT_MS), the main agent goes on,
// and the run succeeds in one attempt: nothing is killed.
func TestRealCLISubagentStallIsEndedByClaude(t *testing.T) {
	t.Parallel()
	e := agentEnv(t, fakeapi.Text("The build is broken because the cache is stale.").WithPace(fakeapi.Pace{StallAfter: 1, Ping: time.Second}))
	r := e.run("--subagent-timeout", "8s", "--max-attempts", "1")
	r.wantCode(t, 0)
	if !strings.Contains(r.stderr, "claude ended a sub-agent whose stream was silent") {
		t.Errorf("no warning that claude ended the sub-agent:\n%s", r.stderr)
	}
	if len(e.api.Stalls()) != 1 {
		t.Errorf("%d stalls, want the sub-agent's one", len(e.api.Stalls()))
	}
	var agent int
	for _, q := range e.api.ConversationRequests() {
		if q.AgentID != "" {
			agent++
		}
	}
	if agent != 1 {
		t.Errorf("%d sub-agent requests, want 1", agent)
	}
}

// A healthy sub-agent whose Bash call runs longer than subagent_timeout is
// never ended (claude defers its limit while an agent's tool runs, and
// malarun gives the call tool_timeout); the main agent waiting on it is
// not judged.
func TestRealCLISubagentToolLongerThanItsTimeout(t *testing.T) {
	t.Parallel()
	e := agentEnv(t, fakeapi.Bash("echo started && sleep 14 && echo finished"), fakeapi.Text("The build passed."))
	r := e.run("--subagent-timeout", "5s", "--idle-timeout", "6s", "--first-byte-timeout", "6s", "--max-attempts", "1")
	r.wantCode(t, 0)
	if strings.Contains(r.stderr, "hang detected") || strings.Contains(r.stderr, "claude ended a sub-agent") {
		t.Errorf("a healthy sub-agent was taken for a dead one:\n%s", r.stderr)
	}
}

// A request the API never answers (no headers, no byte) after a tool call
// is a hang at first_byte_timeout, named as a wait for the API's reply;
// the session is resumed and the run ends in success.
func TestRealCLIRequestNeverAnswered(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakeapi.Bash("echo looked"), fakeapi.NoAnswer(), fakeapi.Text("Answered on the resume."))
	r := e.run("--first-byte-timeout", "5s", "--kill-grace", "2s", "--backoff", "0s")
	r.wantCode(t, 0)
	if !strings.Contains(r.stderr, "while waiting for the API's reply (first_byte_timeout)") {
		t.Errorf("the hang does not name the first byte:\n%s", r.stderr)
	}
	if n := r.logCount("attempt started"); n != 2 {
		t.Errorf("%d attempts, want 2", n)
	}
	if r.stdout != "Answered on the resume.\n" {
		t.Errorf("stdout %q", r.stdout)
	}
}

// The dying CLI's last words (§D35): with a SessionEnd hook to run, 2.1.197
// goes on for a moment after malarun's SIGTERM: it sends the killed tool's
// result to the model and prints the model's answer and a success before
// it exits 143 (measured 2 of 2; 2.1.332 prints the tool's result and
// stops there). That late success decides nothing: the hang does, the
// session is resumed with the cut call named, and the report marks the
// late result after_stop.
func TestRealCLILastWordsAfterAHangDecideNothing(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, fakeapi.WithScript(fakeapi.Bash("echo started && timeout 60 tail -f /dev/null"), fakeapi.Text("Wrapped up after the kill.")),
		fakeapi.WithResponder(func(r *fakeapi.Request) (fakeapi.Step, bool) {
			return fakeapi.Text("Resumed and done."), strings.Contains(r.LastUserText(), "Continue on issue")
		}))
	writeHooks(t, e.work, `{"SessionEnd":[{"hooks":[{"type":"command","command":"sleep 4"}]}]}`)
	r := e.run("--tool-timeout", "6s", "--kill-grace", "15s", "--backoff", "0s", "--json")
	r.wantCode(t, 0)
	var rep ui.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, r.stdout)
	}
	if rep.Result != "Resumed and done." || len(rep.Attempts) != 2 || rep.Attempts[0].Outcome != "hang" {
		t.Fatalf("result %q, attempts %+v", rep.Result, rep.Attempts)
	}
	for _, res := range rep.Attempts[0].Results {
		if !res.AfterStop {
			t.Errorf("the hung attempt's result %+v is not marked after_stop", res)
		}
	}
	t.Logf("the hung attempt printed %d results after its stop", len(rep.Attempts[0].Results))
	var resumed string
	for _, q := range e.api.ConversationRequests() {
		if strings.Contains(q.LastUserText(), "Continue on issue") {
			resumed = q.LastUserText()
		}
	}
	if !strings.Contains(resumed, "tail -f /dev/null") {
		t.Errorf("the resume prompt does not name the cut call:\n%s", resumed)
	}
}
