package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/testing/fakeapi"
)

// With the real CLI: an interrupted run, then a rerun with another prompt.
// It is refused (exit 2) before claude starts, with the record as it was;
// told to resume, malarun continues the recorded session with its own
// task, and the record keeps the decision.
func TestRealCLIRerunWithAnotherPrompt(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakeapi.Bash("echo step-one"), fakeapi.Stall(), fakeapi.Text("Finished the first task."))
	started := time.Now()
	cmd, stdout, stderr := e.start("--idle-timeout", "1m")
	e.waitToolResultSaved()
	cmd.Process.Signal(syscall.SIGTERM)
	e.wait(cmd, stdout, stderr, started).wantCode(t, 143)
	recordFile := filepath.Join(e.home, "state", "issue-e2e", "record.json")
	before, _ := os.ReadFile(recordFile)
	requests := len(e.api.ConversationRequests())

	firstTask := e.task
	e.task = "Write the release notes instead."
	refused := e.run("--json")
	refused.wantCode(t, 2)
	for _, want := range []string{"is not the one", "--prompt-change=resume", "--prompt-change=start_over", "--reset"} {
		if !strings.Contains(refused.stderr, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, refused.stderr)
		}
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(refused.stdout), &rep); err != nil || rep["outcome"] != "usage" || rep["exit_code"] != float64(2) {
		t.Errorf("--json report of the refusal (%v):\n%s", err, refused.stdout)
	}
	if after, _ := os.ReadFile(recordFile); string(after) != string(before) {
		t.Errorf("the refusal changed record.json:\n%s\nto\n%s", before, after)
	}
	if n := len(e.api.ConversationRequests()); n != requests {
		t.Errorf("the refused run reached the API (%d requests, %d before)", n, requests)
	}

	resumed := e.run("--prompt-change", "resume", "--idle-timeout", "1m")
	resumed.wantCode(t, 0)
	reqs := e.api.ConversationRequests()
	last := reqs[len(reqs)-1]
	if last.SessionID != reqs[0].SessionID || !strings.Contains(last.AllText(), firstTask) || strings.Contains(last.AllText(), e.task) {
		t.Errorf("resume went on with another session or task: session %s (first %s), first task %v, new task %v",
			last.SessionID, reqs[0].SessionID, strings.Contains(last.AllText(), firstTask), strings.Contains(last.AllText(), e.task))
		dumpRequests(t, e)
	}
	var rec struct {
		PromptChanges []struct {
			Decision string `json:"decision"`
		} `json:"prompt_changes"`
	}
	b, _ := os.ReadFile(recordFile)
	if err := json.Unmarshal(b, &rec); err != nil || len(rec.PromptChanges) != 1 || rec.PromptChanges[0].Decision != "resume" {
		t.Errorf("record.json after the resume (%v):\n%s", err, b)
	}
}
