package supervisor_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/malarun/malarun/internal/event"

	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// assistantWith is an assistant text line whose usage puts the context at
// tokens (input only, 200k window from a model without [1m]).
func assistantWith(tokens int, text string) string {
	return fmt.Sprintf(`{"type":"assistant","message":{"model":"claude-sonnet-4-5","content":[{"type":"text","text":%q}],"usage":{"input_tokens":%d,"output_tokens":0,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}},"parent_tool_use_id":null,"session_id":"%s"}`,
		text, tokens, testchild.SessionID)
}

const sonnetInit = `{"type":"system","subtype":"init","session_id":"` + testchild.SessionID + `","model":"claude-sonnet-4-5"}`

func resultText(text string) string {
	return fmt.Sprintf(`{"type":"result","subtype":"success","is_error":false,"result":%q,"session_id":"%s","total_cost_usd":0.01}`, text, testchild.SessionID)
}

const tooLong = `{"type":"result","subtype":"success","is_error":true,"api_error_status":400,"result":"Prompt is too long","session_id":"` + testchild.SessionID + `","terminal_reason":"prompt_too_long"}`

func contextHarness(t *testing.T, env ...string) *harness {
	h := retrying(t, testchild.ResumeAware, env...)
	h.cfg.IdleTimeout = 5 * time.Second
	h.cfg.ResultExitTimeout = 200 * time.Millisecond
	return h
}

// At 92% the attempt is stopped, the session is asked for a checkpoint,
// and a new session starts with it.
func TestContextPressureCheckpointsAndContinues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := contextHarness(t, testchild.EnvLines+"=3",
			testchild.EnvTranscript+"="+transcriptFile(t, sonnetInit, toolWith(184000), testchild.ToolDone),
			testchild.EnvResumed+"="+transcriptFile(t, sonnetInit,
				assistantWith(186000, "<checkpoint>Goal: fix the bug</checkpoint>"),
				resultText("```xml\n<checkpoint>\nGoal: fix the bug\nRemaining: tests\n</checkpoint>\n```")))
		rep, err, _ := h.run()
		if err != nil {
			t.Fatalf("run: %v\n%s", err, h.logs.String())
		}
		at := h.attempts()
		if len(at) != 3 || rep.Attempts != 3 {
			t.Fatalf("%d attempts, want 3 (work, checkpoint, continuation)", len(at))
		}
		_, id1 := sessionFlag(t, at[0])
		f2, id2 := sessionFlag(t, at[1])
		f3, id3 := sessionFlag(t, at[2])
		if f2 != "--resume" || id2 != id1 || !strings.Contains(stdinOf(at[1]), "<checkpoint>") {
			t.Errorf("attempt 2 should resume %s asking for a checkpoint: %s %s\n%s", id1, f2, id2, stdinOf(at[1]))
		}
		cont := stdinOf(at[2])
		if f3 != "--session-id" || id3 == id1 || !strings.Contains(cont, "Goal: fix the bug\nRemaining: tests") ||
			!strings.Contains(cont, "issue issue-1") || strings.Contains(cont, "```") || strings.Contains(cont, "<checkpoint>") {
			t.Errorf("attempt 3 should be a new session seeded with the checkpoint: %s %s\n%s", f3, id3, cont)
		}
		logs := h.logs.String()
		for _, want := range []string{`"message":"context restart: continuing in a new session"`, `"continuation":1`, `"occupancy":186000`, `"window":200000`, `"window_source":"default"`} {
			if !strings.Contains(logs, want) {
				t.Errorf("log lacks %s", want)
			}
		}
	})
}

// Over the threshold on the last, text-only message: the turn is ending,
// so it is left to end (no checkpoint for finished work).
func TestContextPressureOnTheFinalMessageLetsTheRunFinish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.Replay, testchild.EnvTranscript+"="+transcriptFile(t, sonnetInit, assistantWith(190000, "done"), resultText("done")))
		if _, err, _ := h.run(); err != nil {
			t.Fatal(err)
		}
		if n := len(h.attempts()); n != 1 {
			t.Errorf("%d attempts: finished work was checkpointed", n)
		}
	})
}

// Below the threshold nothing happens.
func TestContextBelowThresholdIsLeftAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.Replay, testchild.EnvTranscript+"="+transcriptFile(t, sonnetInit, assistantWith(178000, "done"), resultText("done")))
		if _, err, _ := h.run(); err != nil {
			t.Fatal(err)
		}
		if n := len(h.attempts()); n != 1 {
			t.Errorf("%d attempts at 89%%", n)
		}
	})
}

// The CLI reports the context full after the session did some work: a new
// session with the fallback prompt, which carries the original task.
func TestPromptTooLongMidSessionFallsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := contextHarness(t, testchild.EnvLines+"=3", testchild.EnvExit+"=1",
			testchild.EnvTranscript+"="+transcriptFile(t, sonnetInit, assistantWith(1000, "working"), tooLong))
		if _, err, _ := h.run(); err != nil {
			t.Fatalf("run: %v\n%s", err, h.logs.String())
		}
		at := h.attempts()
		if len(at) != 2 {
			t.Fatalf("%d attempts, want 2", len(at))
		}
		fb := stdinOf(at[1])
		if f, _ := sessionFlag(t, at[1]); f != "--session-id" || !strings.Contains(fb, "Fix the bug.") || !strings.Contains(fb, "inspect the working tree") {
			t.Errorf("attempt 2 should be a fallback session with the original task:\n%s", fb)
		}
	})
}

// The checkpoint request itself hangs: handled as a hang, then the fallback.
func TestCheckpointRequestHangFallsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := contextHarness(t, testchild.EnvLines+"=3",
			testchild.EnvTranscript+"="+transcriptFile(t, sonnetInit, toolWith(190000), testchild.ToolDone),
			testchild.EnvResumed+"="+transcripts+"hang-after-init.jsonl")
		h.cfg.IdleTimeout = 500 * time.Millisecond
		// The resumed (checkpoint) attempt replays a transcript and exits
		// without a result: a crash, which must not leave the run stuck.
		_, err, _ := h.run()
		if err != nil {
			t.Fatalf("run: %v\n%s", err, h.logs.String())
		}
		at := h.attempts()
		if len(at) != 3 || !strings.Contains(stdinOf(at[2]), "ran out of context before it could write down its progress") {
			t.Fatalf("want work, checkpoint, fallback; got %d attempts", len(at))
		}
	})
}

// The context fills up again after the allowed continuations: exit 5.
func TestMaxContinuationsExhausted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		full := transcriptFile(t, sonnetInit, toolWith(190000), testchild.ToolDone)
		h := contextHarness(t, testchild.EnvLines+"=3", testchild.EnvTranscript+"="+full,
			testchild.EnvResumed+"="+transcriptFile(t, sonnetInit, resultText("<checkpoint>G</checkpoint>")),
			testchild.EnvContinued+"="+full)
		h.cfg.MaxContinuations = 1
		// The continuation replays the full transcript and exits: stopped at
		// the safe point first.
		_, err, _ := h.run()
		wantKind(t, err, outcome.ContextExhausted, "max_continuations 1")
	})
}

// On the first exchange of a session a fresh session cannot help: exit 1.
func TestPromptTooLongOnFirstExchangeIsFatal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := contextHarness(t, testchild.EnvLines+"=2", testchild.EnvTranscript+"="+transcriptFile(t, sonnetInit, tooLong))
		h.cfg.IdleTimeout = 300 * time.Millisecond
		_, err, _ := h.run()
		wantKind(t, err, outcome.ErrorResult, "first exchange")
	})
}

// toolWith is a Bash tool_use line whose usage puts the context at tokens.
func toolWith(tokens int) string {
	return strings.Replace(testchild.ToolLine, `"input_tokens":10`, fmt.Sprintf(`"input_tokens":%d`, tokens), 1)
}

// Over the threshold while a tool runs: malarun waits for its result (the
// safe point) before it stops the attempt.
func TestContextPressureWaitsForTheToolResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := contextHarness(t, testchild.EnvLines+"=3",
			testchild.EnvTranscript+"="+transcriptFile(t, sonnetInit, toolWith(185000), testchild.ToolDone),
			testchild.EnvResumed+"="+transcriptFile(t, sonnetInit, resultText("<checkpoint>G</checkpoint>")))
		var kinds []string
		h.observer = func(e event.Event) {
			if e.Kind != event.Progress && e.Attempt == 1 {
				kinds = append(kinds, string(e.Kind))
			}
		}
		if _, err, _ := h.run(); err != nil {
			t.Fatalf("run: %v", err)
		}
		if got := strings.Join(kinds, " "); !strings.HasPrefix(got, "attempt_started tool_started tool_finished kill_sent") {
			t.Errorf("attempt 1 events: %s", got)
		}
		if at := h.attempts(); len(at) != 3 || !strings.Contains(stdinOf(at[1]), "Write a checkpoint") {
			t.Errorf("want work, checkpoint, continuation; got %d attempts", len(at))
		}
	})
}

// A tool that never finishes is never a safe point: the attempt is not cut
// for context pressure; the tool timeout ends it as a hang, and the session
// is resumed (not checkpointed) naming the tool.
func TestContextPressureNeverCutsARunningTool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := contextHarness(t, testchild.EnvLines+"=2",
			testchild.EnvTranscript+"="+transcriptFile(t, sonnetInit, toolWith(185000)))
		h.cfg.ToolTimeout = 300 * time.Millisecond
		if _, err, _ := h.run(); err != nil {
			t.Fatalf("run: %v", err)
		}
		at := h.attempts()
		if len(at) != 2 || !strings.Contains(stdinOf(at[1]), "Continue on issue") || !strings.Contains(stdinOf(at[1]), "- Bash:") {
			t.Errorf("want a resume naming the running tool; got %d attempts:\n%v", len(at), at)
		}
	})
}
