package supervisor_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/record"

	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// retrying sets up a harness that retries at once.
func retrying(t *testing.T, behaviour string, env ...string) *harness {
	h := newHarness(t, behaviour, env...)
	h.cfg.MaxAttempts = 10
	h.cfg.Backoff = []time.Duration{0}
	h.cfg.IdleTimeout = 300 * time.Millisecond
	h.cfg.KillGrace = 500 * time.Millisecond
	return h
}

// transcriptFile writes lines as a transcript for the fake child.
func transcriptFile(t *testing.T, lines ...string) string {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func sessionFlag(t *testing.T, attempt string) (flag, id string) {
	t.Helper()
	args := strings.Split(attempt, "\n")
	for i, a := range args {
		if (a == "--resume" || a == "--session-id") && i+1 < len(args) {
			return a, args[i+1]
		}
	}
	t.Fatalf("no session flag in %q", attempt)
	return "", ""
}

func stdinOf(attempt string) string {
	_, in, _ := strings.Cut(attempt, "--stdin--\n")
	return in
}

// A hang in the middle of a tool call: the same session is resumed, and
// the resume prompt names the call the CLI will have dropped.
func TestHangDuringToolIsResumedNamingTheTool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := retrying(t, testchild.ResumeAware, testchild.EnvLines+"=2",
			testchild.EnvTranscript+"="+transcriptFile(t, testchild.InitLine, testchild.ToolLine))
		h.cfg.ToolTimeout = 300 * time.Millisecond
		rep, err, _ := h.run()
		if err != nil {
			t.Fatalf("run: %v\n%s", err, h.logs.String())
		}
		at := h.attempts()
		if len(at) != 2 || rep.Attempts != 2 {
			t.Fatalf("%d attempts recorded, report says %d", len(at), rep.Attempts)
		}
		f1, id1 := sessionFlag(t, at[0])
		f2, id2 := sessionFlag(t, at[1])
		if f1 != "--session-id" || f2 != "--resume" || id1 != id2 {
			t.Errorf("attempt 1 %s %s, attempt 2 %s %s: want the same session resumed", f1, id1, f2, id2)
		}
		prompt := stdinOf(at[1])
		for _, want := range []string{"Continue on issue issue-1.", `- Bash: {"command":"sleep 1"}`, "Check their effects"} {
			if !strings.Contains(prompt, want) {
				t.Errorf("resume prompt lacks %q:\n%s", want, prompt)
			}
		}
		if _, err := os.Stat(filepath.Join(rep.RunDir, "attempt-2.prompt.md")); err != nil {
			t.Errorf("resume prompt not kept: %v", err)
		}
		if !strings.Contains(h.logs.String(), `"action":"resume"`) {
			t.Errorf("no resume decision logged:\n%s", h.logs.String())
		}
	})
}

// A hang before any reply: nothing to resume, no side effects: a fresh
// session with the original prompt.
func TestHangBeforeAnyReplyStartsFresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := retrying(t, testchild.ResumeAware, testchild.EnvLines+"=1")
		h.cfg.MaxAttempts = 2
		// The fake child records its argv once it runs: under a loaded CI
		// (the race runtime, every package at once) its start alone took
		// more than retrying's 300 ms once, and the attempt was a hang with
		// nothing recorded.
		h.cfg.IdleTimeout = 1500 * time.Millisecond
		_, err, _ := h.run()
		wantKind(t, err, outcome.RetriesExhausted, "2 attempts, the most max_attempts allows")
		at := h.attempts()
		if len(at) != 2 {
			t.Fatalf("%d attempts", len(at))
		}
		f1, id1 := sessionFlag(t, at[0])
		f2, id2 := sessionFlag(t, at[1])
		if f1 != "--session-id" || f2 != "--session-id" || id1 == id2 {
			t.Errorf("attempt 1 %s %s, attempt 2 %s %s: want two fresh sessions", f1, id1, f2, id2)
		}
		if stdinOf(at[1]) != "Fix the bug." {
			t.Errorf("fresh start prompt %q, want the original", stdinOf(at[1]))
		}
	})
}

// Side effects happened and the session is gone: stop, exit 4.
func TestSideEffectsAndNoSessionIsNotSafe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := retrying(t, testchild.ResumeAware, testchild.EnvLines+"=2",
			testchild.EnvTranscript+"="+transcriptFile(t, testchild.InitLine, testchild.ToolLine),
			testchild.EnvResumed+"="+transcripts+"resume-not-found.jsonl", testchild.EnvExit+"=1")
		h.cfg.ToolTimeout = 300 * time.Millisecond
		_, err, _ := h.run()
		wantKind(t, err, outcome.NotSafeToRetry, "repeat 1 tool call(s) with side effects (Bash)")
		if n := len(h.attempts()); n != 2 {
			t.Errorf("%d attempts, want 2", n)
		}
	})
}

// Read-only tools only: when the session cannot be resumed, start fresh.
func TestSideEffectFreeToolsAllowFreshStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		readLine := strings.Replace(testchild.ToolLine, `"name":"Bash"`, `"name":"Read"`, 1)
		h := retrying(t, testchild.ResumeAware, testchild.EnvLines+"=2",
			testchild.EnvTranscript+"="+transcriptFile(t, testchild.InitLine, readLine),
			testchild.EnvResumed+"="+transcripts+"resume-not-found.jsonl", testchild.EnvExit+"=1")
		h.cfg.ToolTimeout = 300 * time.Millisecond
		h.cfg.MaxAttempts = 3
		_, err, _ := h.run()
		wantKind(t, err, outcome.RetriesExhausted, "3 attempts")
		at := h.attempts()
		if len(at) != 3 {
			t.Fatalf("%d attempts", len(at))
		}
		if f, _ := sessionFlag(t, at[2]); f != "--session-id" || stdinOf(at[2]) != "Fix the bug." {
			t.Errorf("attempt 3 should start fresh with the original prompt: %q", at[2])
		}
	})
}

// A signal during the backoff ends the run at once.
func TestSignalDuringBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := retrying(t, testchild.Hang)
		h.cfg.Backoff = []time.Duration{time.Hour}
		go func() {
			waitForLog(h, `"action":"fresh"`)
			h.signals <- syscall.SIGTERM
		}()
		_, err, took := h.run()
		wantKind(t, err, outcome.Interrupted, "while waiting to retry")
		if took > 10*time.Second {
			t.Errorf("took %v", took)
		}
	})
}

// session_timeout covers the waits between attempts too.
func TestSessionTimeoutDuringBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := retrying(t, testchild.Hang)
		h.cfg.Backoff = []time.Duration{time.Hour}
		h.cfg.SessionTimeout = 1500 * time.Millisecond
		_, err, took := h.run()
		wantKind(t, err, outcome.SessionTimeout, "while waiting to retry")
		if took > 10*time.Second {
			t.Errorf("took %v", took)
		}
	})
}

// max_cost_usd reaches the CLI as --max-budget-usd, and the CLI stopping
// there ends the run with the budget code.
func TestCostCapPassedToTheCLI(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		over := strings.Replace(testchild.Result, `"subtype":"success","is_error":false`, `"subtype":"error_max_budget_usd","is_error":true`, 1)
		h := retrying(t, testchild.Replay, testchild.EnvTranscript+"="+transcriptFile(t, testchild.InitLine, testchild.TextLine, over), testchild.EnvExit+"=1")
		h.cfg.MaxCostUSD = 0.25
		_, err, _ := h.run()
		wantKind(t, err, outcome.Budget, "max_cost_usd reached")
		if at := h.attempts(); len(at) != 1 || !strings.Contains(at[0], "--max-budget-usd\n0.25\n") {
			t.Errorf("attempts %q: want one, with --max-budget-usd 0.25", at)
		}
	})
}

// A rate limit event from the CLI ends the run with the temporary-failure
// code and the reset time.
func TestRateLimitEventIsTempFail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		limit := fmt.Sprintf(`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","rateLimitType":"five_hour","resetsAt":%d},"session_id":"%s"}`, 1790000000, testchild.SessionID)
		h := retrying(t, testchild.Replay, testchild.EnvTranscript+"="+transcriptFile(t, testchild.InitLine, limit), testchild.EnvExit+"=1")
		_, err, _ := h.run()
		wantKind(t, err, outcome.RateLimit, "usage limit (five_hour) until Sep 21 ")
		if n := len(h.attempts()); n != 1 {
			t.Errorf("%d attempts: a rate limit must not be retried", n)
		}
	})
}

func waitForLog(h *harness, s string) {
	if !testchild.WaitUntil(10*time.Second, nil, func() bool { return strings.Contains(h.logs.String(), s) }) {
		h.t.Errorf("no log line with %q", s)
	}
}

// The observer sees every decision in order: what --events, the status
// line and the report are built from.
func TestEventsOfAHangThatIsResumed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := retrying(t, testchild.ResumeAware, testchild.EnvLines+"=2",
			testchild.EnvTranscript+"="+transcriptFile(t, testchild.InitLine, testchild.ToolLine))
		h.cfg.ToolTimeout = 300 * time.Millisecond
		var kinds []string
		var last event.Event
		h.observer = func(e event.Event) {
			if e.Issue != "issue-1" || e.Time.IsZero() {
				t.Errorf("event without issue or time: %+v", e)
			}
			if e.Kind == event.Progress {
				last = e
				return
			}
			kinds = append(kinds, string(e.Kind))
		}
		rep, err, _ := h.run()
		if err != nil {
			t.Fatal(err)
		}
		want := "run_started attempt_started tool_started hang_detected kill_sent tree_gone attempt_ended retry_decided " +
			"attempt_started attempt_ended retry_decided finished"
		if got := strings.Join(kinds, " "); got != want {
			t.Errorf("events:\n got %s\nwant %s", got, want)
		}
		if last.Messages != 1 || last.CostUSD != 0.01 {
			t.Errorf("last progress %+v", last)
		}
		if len(rep.History) != 2 || rep.History[0].Outcome != "hang" || rep.History[0].Ended != "hang" || rep.History[1].Outcome != "success" ||
			!rep.History[1].Resume || len(rep.Sessions) != 1 || rep.Record == "" {
			t.Errorf("report %+v", rep)
		}
	})
}

// A signal while a hung tree is being stopped ends the run: no retry.
func TestSignalWhileStoppingAHangIsNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := retrying(t, testchild.IgnoreTerm)
		h.cfg.KillGrace = time.Hour // only shutdown_grace can end this stop early
		h.cfg.ShutdownGrace = 200 * time.Millisecond
		go func() {
			waitForLog(h, "hang detected")
			h.signals <- syscall.SIGINT // the tree is already being stopped
		}()
		_, err, took := h.run()
		wantKind(t, err, outcome.Interrupted, "")
		if n := len(h.attempts()); n != 1 {
			t.Errorf("%d attempts: the run was retried after the user stopped it", n)
		}
		if took > 10*time.Second {
			t.Errorf("took %v", took)
		}
	})
}

// A signal after a success result, while the CLI lingers: still a success.
func TestSignalAfterSuccessResultKeepsTheSuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.Linger)
		h.cfg.ResultExitTimeout = time.Hour
		h.cfg.ShutdownGrace = 200 * time.Millisecond
		go func() {
			waitForTranscriptLine(h.t, h.cfg.StateDir, `"type":"result"`)
			waitForLog(h, `"message":"result"`)
			h.signals <- syscall.SIGTERM
		}()
		if _, err, _ := h.run(); err != nil {
			t.Fatalf("err = %v, want success", err)
		}
		if h.stdout.String() != "All done.\n" {
			t.Errorf("stdout %q", h.stdout.String())
		}
	})
}

// Retries exhausted (exit 3) leaves the run resumable: the next invocation
// continues the same session with its own max_attempts, naming the cut-off
// call, and counts no reclaim.
func TestRetriesExhaustedIsResumedByTheNextInvocation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := retrying(t, testchild.ResumeAware, testchild.EnvLines+"=2",
			testchild.EnvTranscript+"="+transcriptFile(t, testchild.InitLine, testchild.ToolLine))
		h.cfg.ToolTimeout = 300 * time.Millisecond
		h.cfg.MaxAttempts = 1
		_, err, _ := h.run()
		wantKind(t, err, outcome.RetriesExhausted, "1 attempts")
		rec, _, _ := journalOf(t, h)
		if rec.Status != record.Stopped || len(rec.Running) != 1 {
			t.Fatalf("record status %s, running %v: want stopped with the cut-off call", rec.Status, rec.Running)
		}
		rep, err, _ := h.run()
		if err != nil {
			t.Fatalf("second invocation: %v\n%s", err, h.logs.String())
		}
		at := h.attempts()
		if len(at) != 2 || rep.Attempts != 2 {
			t.Fatalf("%d attempts in all, report says %d; want 2", len(at), rep.Attempts)
		}
		f1, id1 := sessionFlag(t, at[0])
		f2, id2 := sessionFlag(t, at[1])
		if f1 != "--session-id" || f2 != "--resume" || id1 != id2 {
			t.Errorf("attempt 1 %s %s, attempt 2 %s %s: want the same session resumed", f1, id1, f2, id2)
		}
		if !strings.Contains(stdinOf(at[1]), "Bash") {
			t.Errorf("the resume prompt does not name the cut-off call:\n%s", stdinOf(at[1]))
		}
		if rec, _, _ := journalOf(t, h); rec.Status != record.Succeeded || rec.Reclaims != 0 {
			t.Errorf("record %s with %d reclaims, want succeeded with 0", rec.Status, rec.Reclaims)
		}
	})
}

// Tool calls with side effects are counted once each, over attempts: the
// record counts an attempt's calls as they come, the run's state when the
// attempt ends, and neither adds to the other.
func TestSideEffectsAreCountedOnceOverAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tool2 := strings.ReplaceAll(testchild.ToolLine, "toolu_1", "toolu_2")
		h := retrying(t, testchild.ResumeAware, testchild.EnvLines+"=2",
			testchild.EnvTranscript+"="+transcriptFile(t, testchild.InitLine, testchild.ToolLine),
			testchild.EnvResumed+"="+transcriptFile(t, testchild.InitLine, tool2), testchild.EnvExit+"=1")
		h.cfg.ToolTimeout = 300 * time.Millisecond
		h.cfg.MaxAttempts = 3
		_, err, _ := h.run()
		wantKind(t, err, outcome.RetriesExhausted, "3 attempts")
		rec, _, _ := journalOf(t, h)
		if rec.SideEffects["Bash"] != 3 {
			t.Errorf("the record counts %d Bash calls, want the 3 made (one per attempt)", rec.SideEffects["Bash"])
		}
	})
}
