package e2e_test

import (
	"strings"
	"testing"

	"github.com/malarun/malarun/internal/testing/fakeapi"
)

// Exit 124 leaves the run resumable: the next invocation of the issue
// continues the same session (an orchestrator's retry continues the work
// instead of starting it over) and succeeds.
func TestRealCLISessionTimeoutIsResumedByTheNextInvocation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakeapi.Bash("echo step-one > one.txt"), fakeapi.Stall(), fakeapi.Text("Finished after the timeout."))
	first := e.run("--session-timeout", "15s", "--idle-timeout", "60s", "--kill-grace", "1s")
	first.wantCode(t, 124)
	second := e.run("--idle-timeout", "30s")
	second.wantCode(t, 0)
	if !strings.Contains(second.stdout, "Finished after the timeout.") {
		t.Errorf("stdout %q", second.stdout)
	}
	reqs := e.api.ConversationRequests()
	if len(reqs) != 3 {
		t.Fatalf("%d conversation requests, want 3", len(reqs))
	}
	last := reqs[2]
	if last.SessionID != reqs[0].SessionID || !last.HasToolResult("toolu_1") || !strings.Contains(last.AllText(), e.task) {
		t.Errorf("the second invocation did not continue the session: session %s (first %s), tool result %v",
			last.SessionID, reqs[0].SessionID, last.HasToolResult("toolu_1"))
	}
	if !strings.Contains(second.stderr, "continuing a recorded run") {
		t.Errorf("the second invocation does not say it continued the run:\n%s", second.stderr)
	}
}
