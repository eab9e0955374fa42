package e2e_test

import (
	"strings"
	"testing"

	"github.com/malarun/malarun/internal/testing/fakeapi"
)

const checkpointText = "## Goal\nMake the tests pass.\n## Remaining Tasks\nRun the suite."

// isCheckpointRequest and isContinuation recognise malarun's prompts by
// content: the order of requests races with the kill of the first session.
func isCheckpointRequest(r *fakeapi.Request) bool {
	return strings.Contains(r.LastUserText(), "Write a checkpoint")
}

func isContinuation(r *fakeapi.Request) bool {
	return strings.Contains(r.AllText(), "You are continuing work on issue issue-e2e")
}

// contextEnv scripts the first session; the responder answers the
// checkpoint request with checkpoint (or stalls it when nil) and the new
// session with a final reply.
func contextEnv(t *testing.T, checkpoint *fakeapi.Step, steps ...fakeapi.Step) *env {
	return newEnvWith(t, fakeapi.WithScript(steps...), fakeapi.WithResponder(func(r *fakeapi.Request) (fakeapi.Step, bool) {
		switch {
		case isCheckpointRequest(r) && checkpoint != nil:
			return *checkpoint, true
		case isCheckpointRequest(r):
			return fakeapi.Stall(), true
		case isContinuation(r):
			return fakeapi.Text("Finished in a new session."), true
		}
		return fakeapi.Step{}, false
	}))
}

func requestsWhere(e *env, pred func(*fakeapi.Request) bool) []*fakeapi.Request {
	var out []*fakeapi.Request
	for _, r := range e.api.ConversationRequests() {
		if pred(r) {
			out = append(out, r)
		}
	}
	return out
}

// The API reports 92% of the window: malarun asks for a checkpoint in the
// same session, then continues in a new one seeded with it.
func TestRealCLIContextPressureCheckpointAndContinue(t *testing.T) {
	t.Parallel()
	cp := fakeapi.Text("Here is my checkpoint.\n```xml\n<checkpoint>\n" + checkpointText + "\n</checkpoint>\n```")
	e := contextEnv(t, &cp,
		fakeapi.Bash("echo working").WithUsage(fakeapi.Usage{Input: 4000, CacheRead: 180000}),
		fakeapi.Repeat(fakeapi.Stall(), -1), // the first session's next request, if it gets out before the kill
	)
	r := e.run("--context-limit", "200000", "--idle-timeout", "20s", "--backoff", "0s")
	r.wantCode(t, 0)
	if r.stdout != "Finished in a new session.\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	first := e.api.ConversationRequests()[0]
	cps := requestsWhere(e, isCheckpointRequest)
	conts := requestsWhere(e, isContinuation)
	if len(cps) != 1 || cps[0].SessionID != first.SessionID {
		t.Fatalf("want one checkpoint request in the first session, got %d", len(cps))
	}
	if len(conts) != 1 || conts[0].SessionID == first.SessionID {
		t.Fatalf("want one continuation in a new session, got %d", len(conts))
	}
	if !strings.Contains(conts[0].AllText(), checkpointText) || strings.Contains(conts[0].AllText(), "```xml") {
		t.Errorf("the new session's first message lacks the extracted checkpoint:\n%s", conts[0].AllText())
	}
	if !strings.Contains(r.stderr, `"window":200000,"window_source":"config context_limit"`) {
		t.Errorf("the restart log does not give the window and its source:\n%s", r.stderr)
	}
}

// A 400 prompt-too-long after the session did some work: a new session with
// the fallback prompt, which carries the original task.
func TestRealCLIPromptTooLongMidRunFallsBack(t *testing.T) {
	t.Parallel()
	e := contextEnv(t, nil, fakeapi.Bash("echo working"), fakeapi.Repeat(fakeapi.PromptTooLong(210000, 200000), -1))
	r := e.run("--idle-timeout", "20s", "--backoff", "0s")
	r.wantCode(t, 0)
	conts := requestsWhere(e, isContinuation)
	if len(conts) != 1 || !strings.Contains(conts[0].AllText(), e.task) || !strings.Contains(conts[0].AllText(), "inspect the working tree") {
		t.Fatalf("want one fallback session carrying the original task; got %d", len(conts))
	}
}

// The checkpoint request itself hangs: a hang like any other, then the
// fallback; never a stuck run.
func TestRealCLICheckpointRequestHangs(t *testing.T) {
	t.Parallel()
	e := contextEnv(t, nil,
		fakeapi.Bash("echo working").WithUsage(fakeapi.Usage{Input: 190000}),
		fakeapi.Repeat(fakeapi.Stall(), -1),
	)
	// 10 s: the test runs beside others (newEnv), and a healthy CLI slowed
	// by them must not look hung.
	r := e.run("--context-limit", "200000", "--idle-timeout", "10s", "--kill-grace", "1s", "--backoff", "0s")
	r.wantCode(t, 0)
	if n := len(requestsWhere(e, isCheckpointRequest)); n != 1 {
		t.Errorf("%d checkpoint requests, want 1", n)
	}
	conts := requestsWhere(e, isContinuation)
	if len(conts) != 1 || !strings.Contains(conts[0].AllText(), e.task) {
		t.Fatalf("want a fallback session with the original task, got %d", len(conts))
	}
}
