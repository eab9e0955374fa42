package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/testing/fakeapi"
	"github.com/malarun/malarun/internal/ui"
)

// From 2.1.330 the CLI keeps a background Bash running after the turn's
// result, then runs a second turn for its notification and prints a second
// result before it exits (docs/design.md §F17). With its default settings
// (result_exit_timeout 5s, shorter than the task) malarun lets that happen:
// the task's side effect is done once, the run ends with the last result,
// and the report lists both results. Older CLIs give background tasks a
// short grace once -p has nothing left to do (2.1.197: 5 s, then it kills
// them and the file is never written), hence the version gate.
func TestRealCLIBackgroundTaskOutlivesTheFirstResult(t *testing.T) {
	t.Parallel()
	requireCLI(t, "2.1.330")
	e := newEnv(t,
		fakeapi.ToolUse("Bash", map[string]any{
			"command":           "timeout 8 tail -f /dev/null; echo done >> bg.txt",
			"run_in_background": true,
			"description":       "Finish later",
		}),
		fakeapi.Text("Started in the background."),
		fakeapi.Text("Background work done."),
	)
	events := filepath.Join(e.home, "events.jsonl")
	r := e.run("--idle-timeout", "30s", "--json", "--events", events)
	r.wantCode(t, 0)
	if b, err := os.ReadFile(filepath.Join(e.work, "bg.txt")); err != nil || string(b) != "done\n" {
		t.Errorf("the background task's side effect, once: %q, %v", b, err)
	}
	reqs := e.api.ConversationRequests()
	if len(reqs) != 3 || !strings.Contains(reqs[2].LastUserText(), "<task-notification>") {
		t.Fatalf("want 3 conversation requests, the last for the task's notification; got %d", len(reqs))
	}
	var rep ui.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, r.stdout)
	}
	if rep.Outcome != "success" || rep.Result != "Background work done." || len(rep.Attempts) != 1 {
		t.Fatalf("report: outcome %q, result %q, %d attempts", rep.Outcome, rep.Result, len(rep.Attempts))
	}
	a := rep.Attempts[0]
	if len(a.Results) != 2 || a.Results[1].Origin != "task-notification" || a.Ended != "exited" || a.ClaudeCodeVersion == "" {
		t.Fatalf("attempt: ended %q, version %q, results %+v", a.Ended, a.ClaudeCodeVersion, a.Results)
	}
	var sum stream.Tokens
	for _, res := range a.Results {
		sum.InputTokens += res.Tokens.InputTokens
		sum.OutputTokens += res.Tokens.OutputTokens
		sum.CacheCreationInputTokens += res.Tokens.CacheCreationInputTokens
		sum.CacheReadInputTokens += res.Tokens.CacheReadInputTokens
	}
	if rep.Tokens != sum || sum.OutputTokens == 0 || a.Results[0].Tokens == sum {
		t.Errorf("tokens %+v, want the sum of both results' %+v", rep.Tokens, sum)
	}
	if rep.CostUSD != a.Results[1].TotalCostUSD {
		t.Errorf("cost %v, want the last cumulative total_cost_usd %v", rep.CostUSD, a.Results[1].TotalCostUSD)
	}
	b, _ := os.ReadFile(events)
	for _, want := range []string{`"event":"task_started"`, `"event":"task_finished"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("events lack %s:\n%s", want, b)
		}
	}
}

// A 60 s background command runs while the next API request is held: the
// CLI prints nothing, idle_timeout fires, and the whole tree goes, the
// background command included. The resume prompt names the task (id and
// command) and says it was killed; the command's side effect never happens.
func TestRealCLIHangWithABackgroundTaskNamesIt(t *testing.T) {
	requireCLI(t, "2.1.330")
	command := "timeout 60 tail -f /dev/null; echo late >> late.txt"
	e := newEnvAlone(t,
		fakeapi.ToolUse("Bash", map[string]any{"command": command, "run_in_background": true, "description": "Slow build"}),
		fakeapi.Stall(),
		fakeapi.Text("Checked: the build was killed; ran it again."),
	)
	r := e.run("--idle-timeout", "8s", "--kill-grace", "1s", "--backoff", "0s", "--json")
	r.wantCode(t, 0)
	var rep ui.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, r.stdout)
	}
	if len(rep.Attempts) != 2 || rep.Attempts[0].Ended != "hang" || len(rep.Attempts[0].CutTasks) != 1 {
		t.Fatalf("attempts %+v: want a hang with one cut-off task, then a success", rep.Attempts)
	}
	task := rep.Attempts[0].CutTasks[0]
	reqs := e.api.ConversationRequests()
	if len(reqs) != 3 {
		t.Fatalf("%d conversation requests, want 3", len(reqs))
	}
	prompt := reqs[2].LastUserText()
	for _, want := range []string{"task " + task.ID, "Slow build", "timeout 60 tail -f /dev/null", "no notification about them will come"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the resume prompt lacks %q:\n%s", want, prompt)
		}
	}
	if _, err := os.Stat(filepath.Join(e.work, "late.txt")); err == nil {
		t.Error("the killed background command still wrote its file")
	}
	if pids := e.processes(); len(pids) > 0 {
		t.Errorf("processes left after the run: %v", pids)
	}
}
