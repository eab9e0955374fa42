package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/testing/fakeapi"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// oauthEnv makes the CLI use a subscription token (any value) instead of an
// API key: only then does it read the usage-limit headers.
func oauthEnv(e *env) {
	e.extraEnv = append(e.extraEnv, "ANTHROPIC_API_KEY=", "CLAUDE_CODE_OAUTH_TOKEN=e2e-oauth-token")
}

// limitReport is the part of the --json report these tests read.
type limitReport struct {
	Outcome   string    `json:"outcome"`
	ExitCode  int       `json:"exit_code"`
	Reason    string    `json:"reason"`
	SessionID string    `json:"session_id"`
	RetryAt   time.Time `json:"retry_at"`
	LimitType string    `json:"limit_type"`
}

// A five-hour limit that resets in 15 s, limit_wait 1m: malarun waits for
// the reset, resumes the same session (the API sees the session and the
// task again), and the run succeeds. (With 5 s, under load the limited
// request reached the API 0.3 s after the reset, and malarun waited, as it
// should for a reset already past, to the end of the minute the CLI's text
// names: a minute, not the test's 5 s.)
func TestRealCLIUsageLimitWaitThenResume(t *testing.T) {
	t.Parallel()
	resetsAt := time.Now().Add(15 * time.Second).Truncate(time.Second)
	e := newEnv(t, fakeapi.UsageLimited("five_hour", resetsAt), fakeapi.Text("Done after the limit."))
	oauthEnv(e)
	events := filepath.Join(e.home, "events.jsonl")
	r := e.run("--limit-wait", "1m", "--events", events)
	r.wantCode(t, 0)
	if r.stdout != "Done after the limit.\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	reqs := e.api.ConversationRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d conversation requests, want the limited one and the resumed one", len(reqs))
	}
	if reqs[1].SessionID != reqs[0].SessionID || reqs[0].SessionID == "" {
		t.Errorf("resumed in session %q, limited in %q: want the same", reqs[1].SessionID, reqs[0].SessionID)
	}
	if !strings.Contains(reqs[1].AllText(), e.task) {
		t.Errorf("the resumed request lacks the original task")
	}
	if !strings.Contains(reqs[1].AllText(), "usage limit (five_hour)") {
		t.Errorf("the resumed request lacks the limit note")
	}
	if reqs[1].Time.Before(resetsAt) {
		t.Errorf("resumed at %v, before the reset at %v", reqs[1].Time, resetsAt)
	}
	t.Logf("limited request to resumed request: %v (reset %v after the limited request)",
		reqs[1].Time.Sub(reqs[0].Time).Round(time.Millisecond), resetsAt.Sub(reqs[0].Time).Round(time.Millisecond))
	b, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	var wait struct {
		Until     time.Time `json:"until"`
		RetryAt   time.Time `json:"retry_at"`
		LimitType string    `json:"limit_type"`
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, `"event":"limit_wait"`) {
			if err := json.Unmarshal([]byte(line), &wait); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !wait.RetryAt.Equal(resetsAt) || wait.LimitType != "five_hour" || wait.Until.Before(resetsAt) {
		t.Errorf("limit_wait event %+v, want retry_at %v and five_hour; events:\n%s", wait, resetsAt, b)
	}
}

// A malarun killed outright (OOM, a node, a deploy) while it waits for the
// reset: the next malarun of the issue continues the run, waits out what
// is left, resumes the same session and succeeds (issue 40: on 3689d6a, as
// root, the kernel killed every claude the rerun started in the run's
// cgroup, docs/design.md §F31, and the run ended with exit 3).
func TestRealCLIKilledInALimitWaitThenResumes(t *testing.T) {
	t.Parallel()
	resetsAt := time.Now().Add(15 * time.Second).Truncate(time.Second)
	e := newEnv(t, fakeapi.UsageLimited("five_hour", resetsAt), fakeapi.Text("Done after the limit."))
	oauthEnv(e)
	cmd, _, stderr := e.start("--limit-wait", "1m")
	stateDir := filepath.Join(e.home, "state")
	if !testchild.WaitUntil(time.Minute, nil, func() bool {
		rec, ok := journal.Read(stateDir, "issue-e2e")
		return ok && rec.Err == nil && rec.Record.Status == record.Waiting
	}) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("malarun never waited for the reset; stderr:\n%s", stderr)
	}
	cmd.Process.Kill()
	cmd.Wait()
	r := e.run("--limit-wait", "1m")
	r.wantCode(t, 0)
	if r.stdout != "Done after the limit.\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	reqs := e.api.ConversationRequests()
	if len(reqs) != 2 || reqs[1].SessionID != reqs[0].SessionID {
		t.Fatalf("%d conversation requests, want the limited one and its session resumed; stderr:\n%s", len(reqs), r.stderr)
	}
	if reqs[1].Time.Before(resetsAt) {
		t.Errorf("resumed at %v, before the reset at %v", reqs[1].Time, resetsAt)
	}
}

// The reset beyond limit_wait: exit 75 within seconds, retry_at in the
// report equal to the API's reset. The next invocation (with a limit_wait
// that covers the rest) waits for retry_at and continues the same session.
func TestRealCLIUsageLimitBeyondLimitWaitThenNextRun(t *testing.T) {
	t.Parallel()
	resetsAt := time.Now().Add(8 * time.Second).Truncate(time.Second)
	e := newEnv(t, fakeapi.UsageLimited("five_hour", resetsAt), fakeapi.Text("Done on the next run."))
	oauthEnv(e)
	r := e.run("--limit-wait", "1s", "--json")
	r.wantCode(t, 75)
	var rep limitReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, r.stdout)
	}
	if !rep.RetryAt.Equal(resetsAt) || rep.LimitType != "five_hour" || rep.Outcome != "rate_limit" {
		t.Errorf("report retry_at %v limit_type %q outcome %q, want %v five_hour rate_limit", rep.RetryAt, rep.LimitType, rep.Outcome, resetsAt)
	}
	if !strings.Contains(rep.Reason, "usage limit (five_hour) until "+resetsAt.UTC().Format("15:04")+" UTC") {
		t.Errorf("reason %q", rep.Reason)
	}
	if time.Now().After(resetsAt) {
		t.Errorf("exit 75 came after the reset (took %v): it must not wait beyond limit_wait", r.took)
	}

	r = e.run("--limit-wait", "1m")
	r.wantCode(t, 0)
	reqs := e.api.ConversationRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d conversation requests, want 2", len(reqs))
	}
	if reqs[1].SessionID != rep.SessionID || reqs[0].SessionID != rep.SessionID {
		t.Errorf("requests in sessions %q and %q, the report named %q", reqs[0].SessionID, reqs[1].SessionID, rep.SessionID)
	}
	if !strings.Contains(reqs[1].AllText(), e.task) {
		t.Errorf("the continued session lacks the original task")
	}
	if reqs[1].Time.Before(resetsAt) {
		t.Errorf("the next run called the API at %v, before retry_at %v", reqs[1].Time, resetsAt)
	}
}

// With CLAUDE_CODE_RETRY_WATCHDOG=1 the CLI sleeps through the limit itself,
// announcing it in api_retry lines (docs/design.md §F19). A sleep longer than
// idle_timeout that limit_wait does not cover stops claude at once: exit 75,
// retry_at the end of the CLI's sleep (the reset, give or take a second).
func TestRealCLIRetryWatchdogSleepBeyondLimitWait(t *testing.T) {
	t.Parallel()
	resetsAt := time.Now().Add(time.Minute).Truncate(time.Second)
	e := newEnv(t, fakeapi.UsageLimited("five_hour", resetsAt), fakeapi.Text("never reached"))
	oauthEnv(e)
	e.extraEnv = append(e.extraEnv, "CLAUDE_CODE_RETRY_WATCHDOG=1")
	r := e.run("--limit-wait", "10s", "--idle-timeout", "20s", "--json")
	r.wantCode(t, 75)
	var rep limitReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, r.stdout)
	}
	if d := rep.RetryAt.Sub(resetsAt); d < -2*time.Second || d > 2*time.Second {
		t.Errorf("retry_at %v, want the reset %v (the end of claude's own sleep)", rep.RetryAt, resetsAt)
	}
	if !strings.Contains(rep.Reason, "claude would wait") {
		t.Errorf("reason %q does not say claude's own sleep was too long", rep.Reason)
	}
	if r.took > 30*time.Second {
		t.Errorf("took %v: the CLI's sleep must be cut short, not sat through", r.took)
	}
	if n := len(e.api.ConversationRequests()); n != 1 {
		t.Errorf("%d conversation requests, want the one refused", n)
	}
}
