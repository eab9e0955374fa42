package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/malarun/malarun/internal/fakeapi"
)

// From 2.1.330 the CLI keeps a background Bash running after the turn's
// result, then runs a second turn for its notification and a second result
// before it exits (DESIGN fact 17). malarun, given time to wait, must let
// that happen: the task's side effect is done and the run ends with the last
// result. Older CLIs give background tasks a short grace once -p has nothing
// left to do (2.1.197: 5 s, then it kills them, and the file below is never
// written), hence the version gate and a task longer than that grace.
func TestRealCLIBackgroundTaskFinishes(t *testing.T) {
	requireCLI(t, "2.1.330")
	e := newEnv(t,
		fakeapi.ToolUse("Bash", map[string]any{
			"command":           "timeout 8 tail -f /dev/null; echo done > bg.txt",
			"run_in_background": true,
			"description":       "Finish later",
		}),
		fakeapi.Text("Started in the background."),
		fakeapi.Text("Background work done."),
	)
	r := e.run("--idle-timeout", "30s", "--result-exit-timeout", "60s")
	r.wantCode(t, 0)
	if b, err := os.ReadFile(filepath.Join(e.work, "bg.txt")); err != nil || string(b) != "done\n" {
		t.Errorf("the background task's side effect: %q, %v", b, err)
	}
	reqs := e.api.ConversationRequests()
	if len(reqs) != 3 || !strings.Contains(reqs[2].LastUserText(), "<task-notification>") {
		t.Fatalf("want 3 conversation requests, the last for the task's notification; got %d", len(reqs))
	}
	if !strings.HasSuffix(r.stdout, "Background work done.\n") {
		t.Errorf("stdout %q does not end with the last result", r.stdout)
	}
}
