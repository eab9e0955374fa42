package supervisor_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// What the real CLIs print when a prompt never reaches the model (both
// pinned versions on a prompt of /clear: docs/design.md §F38).
const (
	noModelTurn = `{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"(no content)"}]},"parent_tool_use_id":null,"session_id":"` + testchild.SessionID + `"}`
	noModelDone = `{"type":"result","subtype":"success","is_error":false,"num_turns":0,"result":"","session_id":"` + testchild.SessionID + `","total_cost_usd":0}`
	modelDone   = `{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"All done.","session_id":"` + testchild.SessionID + `","total_cost_usd":0.01,"result_index":0}`
)

// A success whose turn made no model call is not a success: the same
// prompt goes again, in a fresh session, and the run succeeds once the
// model sees it.
func TestAPromptThatNeverReachedTheModelIsSentAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lost := transcriptFile(t, testchild.InitLine, noModelTurn, noModelDone)
		done := transcriptFile(t, testchild.InitLine, testchild.TextLine, modelDone)
		h := retrying(t, testchild.Replay, testchild.EnvTranscripts+"="+lost+","+done)
		rep, err, _ := h.run()
		if err != nil {
			t.Fatalf("run: %v\n%s", err, h.logs.String())
		}
		at := h.attempts()
		if len(at) != 2 || len(rep.History) != 2 {
			t.Fatalf("%d attempts, %d in the report", len(at), len(rep.History))
		}
		if a := rep.History[0]; a.Outcome != "prompt-lost" || !strings.Contains(a.Reason, "the model never saw the prompt") {
			t.Errorf("attempt 1: %s %q", a.Outcome, a.Reason)
		}
		f1, id1 := sessionFlag(t, at[0])
		f2, id2 := sessionFlag(t, at[1])
		if f1 != "--session-id" || f2 != "--session-id" || id1 == id2 {
			t.Errorf("attempt 1 %s %s, attempt 2 %s %s: want a fresh session", f1, id1, f2, id2)
		}
		if p1, p2 := stdinOf(at[0]), stdinOf(at[1]); p1 != p2 || p1 != string(h.cfg.Prompt) {
			t.Errorf("the prompt sent again differs:\n%q\n%q", p1, p2)
		}
		if rep.Result != "All done." {
			t.Errorf("result %q", rep.Result)
		}
	})
}

// A prompt that never gets through (one claude takes for its own command
// every time) ends the run after max_idle_retries: never reported as done.
func TestAPromptThatNeverGetsThroughIsNoSuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := retrying(t, testchild.Replay, testchild.EnvTranscript+"="+transcriptFile(t, testchild.InitLine, noModelTurn, noModelDone))
		h.cfg.MaxIdleRetries = 2
		_, err, _ := h.run()
		wantKind(t, err, outcome.RetriesExhausted, "the model never saw the prompt")
		if n := len(h.attempts()); n != 3 {
			t.Errorf("%d attempts, want 3 (max_idle_retries 2)", n)
		}
	})
}

// A success that says more turns are queued is no end: the turns never ran.
func TestASuccessWithTurnsQueuedIsResumed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		queued := strings.Replace(modelDone, `"result_index":0`, `"result_index":0,"queued_turn_count":1`, 1)
		first := transcriptFile(t, testchild.InitLine, testchild.TextLine, queued)
		then := transcriptFile(t, testchild.InitLine, testchild.TextLine, modelDone)
		h := retrying(t, testchild.Replay, testchild.EnvTranscripts+"="+first+","+then)
		rep, err, _ := h.run()
		if err != nil {
			t.Fatalf("run: %v\n%s", err, h.logs.String())
		}
		if len(rep.History) != 2 || rep.History[0].Outcome != "crash" || !strings.Contains(rep.History[0].Reason, "with a turn still queued after its last result") {
			t.Fatalf("history %+v", rep.History)
		}
		if f, _ := sessionFlag(t, h.attempts()[1]); f != "--resume" {
			t.Errorf("attempt 2 is %s, want the session resumed", f)
		}
	})
}

// 2.1.332's start-up failures: a cause a person must fix stops the run at
// once, naming the file or setting; one that can pass is tried again.
func TestStartupFailures(t *testing.T) {
	configInvalid := `{"type":"result","subtype":"error_during_execution","duration_ms":0,"is_error":true,"num_turns":0,"session_id":"` + testchild.SessionID +
		`","total_cost_usd":0,"errors":["Configuration error in /home/u/.claude.json: JSON Parse error: Property name must be a string literal"],` +
		`"startup_failure_reason":"config_file_invalid","invalid_config_file":{"path":"/home/u/.claude.json","is_global":true,"backup_searched":true},"result_index":0}`
	proxyInvalid := `{"type":"result","subtype":"error_during_execution","is_error":true,"num_turns":0,"session_id":"` + testchild.SessionID +
		`","errors":["Invalid proxy URL in HTTPS_PROXY: \"not-a-url\" cannot be parsed as a URL.\nProxy settings must be a complete URL"],"startup_failure_reason":"proxy_invalid","result_index":0}`
	orgRefused := strings.Replace(proxyInvalid, "proxy_invalid", "org_config_refused", 1)
	orgUnavailable := strings.Replace(proxyInvalid, "proxy_invalid", "org_config_required_unavailable", 1)
	for _, c := range []struct {
		name  string
		lines []string
		kind  error
		says  string
	}{
		{"config_file_invalid", []string{configInvalid}, outcome.ErrorResult, "claude's configuration file /home/u/.claude.json is not valid JSON"},
		{"proxy_invalid", []string{proxyInvalid}, outcome.ErrorResult, `claude said: Invalid proxy URL in HTTPS_PROXY: "not-a-url"`},
		{"org_config_refused", []string{orgRefused}, outcome.Auth, "sign in again"},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := retrying(t, testchild.Replay, testchild.EnvTranscript+"="+transcriptFile(t, c.lines...), testchild.EnvExit+"=1")
				_, err, _ := h.run()
				wantKind(t, err, c.kind, c.says)
				if n := len(h.attempts()); n != 1 {
					t.Errorf("%d attempts: a cause a person must fix is not retried", n)
				}
			})
		})
	}
	t.Run("org_config_required_unavailable", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			failed := transcriptFile(t, orgUnavailable)
			done := transcriptFile(t, testchild.InitLine, testchild.TextLine, modelDone)
			h := retrying(t, testchild.Replay, testchild.EnvTranscripts+"="+failed+","+done, testchild.EnvExit+"=1")
			rep, err, _ := h.run()
			if len(rep.History) != 2 || rep.History[0].Outcome != "startup-failed" || !strings.Contains(rep.History[0].Reason, "this can pass") {
				t.Fatalf("history %+v (err %v)", rep.History, err)
			}
		})
	})
}

// 2.1.332's requests never answered (api_retry with no_response) are
// counted with their cost, in the report, the record and the events; a
// gap in result_index is named.
func TestNoResponsesAndLostResultsAreCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		retry := `{"type":"system","subtype":"api_retry","attempt":1,"max_retries":1,"retry_delay_ms":0,"error_status":null,"error":"unknown",` +
			`"no_response":{"waited_ms":180000,"retry_wait_ms":180000},"session_id":"` + testchild.SessionID + `"}`
		lateResult := strings.Replace(modelDone, `"result_index":0`, `"result_index":2`, 1)
		h := retrying(t, testchild.Replay, testchild.EnvTranscript+"="+transcriptFile(t, testchild.InitLine, retry, testchild.TextLine, lateResult))
		var evs events
		h.observer = evs.add
		rep, err, _ := h.run()
		if err != nil {
			t.Fatalf("run: %v\n%s", err, h.logs.String())
		}
		if n := rep.NoResponse; n == nil || n.Retries != 1 || n.Waited != 180*time.Second || n.Cost < n.Waited {
			t.Errorf("report's no_response %+v", n)
		}
		if rep.ResultsLost != 2 || rep.History[0].ResultsLost != 2 || rep.History[0].NoResponse == nil {
			t.Errorf("report: results lost %d, attempt %+v", rep.ResultsLost, rep.History[0])
		}
		rec := readRecord(t, h)
		if rec.Version != 9 || rec.NoResponse.Retries != 1 || rec.NoResponse.WaitedMS != 180000 || rec.NoResponse.MS < 180000 || rec.ResultsLost != 2 {
			t.Errorf("record v%d: no_response %+v, results_lost %d", rec.Version, rec.NoResponse, rec.ResultsLost)
		}
		retries := evs.of(event.APIRetry)
		if len(retries) != 1 || retries[0].NoResponse == nil || retries[0].NoResponse.Waited != 180*time.Second ||
			!strings.Contains(retries[0].Reason, "no response from the API within 3m0s") {
			t.Errorf("api_retry events %+v", retries)
		}
		ended, fin := evs.of(event.AttemptEnded), evs.of(event.RunFinished)
		if len(ended) != 1 || ended[0].NoResponse == nil || ended[0].ResultsLost != 2 || len(fin) != 1 || fin[0].NoResponse == nil || fin[0].ResultsLost != 2 {
			t.Errorf("attempt_ended %+v, finished %+v", ended, fin)
		}
		if !strings.Contains(h.logs.String(), "a result line was lost") {
			t.Errorf("no warning of the lost results:\n%s", h.logs.String())
		}
	})
}

// The field's "I don't see a request" (docs/design.md §F38): the model ran
// a turn, but the session file's user message does not hold the prompt.
// Not a success: the same prompt again, until the session shows it.
func TestAPromptTheModelAnsweredWithoutIsSentAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		done := transcriptFile(t, testchild.InitLine, testchild.TextLine, modelDone)
		answered := `{"type":"assistant","message":{"role":"assistant","model":"claude-opus-4-8","content":[{"type":"text","text":"I don't see a request."}]},"uuid":"b"}`
		without := transcriptFile(t, `{"type":"user","message":{"role":"user","content":""},"uuid":"u"}`, answered)
		with := transcriptFile(t, `{"type":"user","message":{"role":"user","content":`+testchild.PromptField+`},"uuid":"u"}`, answered)
		home := t.TempDir()
		h := retrying(t, testchild.Replay, testchild.EnvTranscripts+"="+done+","+done, testchild.EnvSessions+"="+without+","+with, "HOME="+home)
		rep, err, _ := h.run()
		if err != nil {
			t.Fatalf("run: %v\n%s", err, h.logs.String())
		}
		if len(rep.History) != 2 || rep.History[0].Outcome != "prompt-lost" || !strings.Contains(rep.History[0].Reason, "the model answered without the prompt") ||
			!strings.Contains(rep.History[0].Reason, home) || rep.History[1].Outcome != "success" {
			t.Fatalf("history %+v", rep.History)
		}
		at := h.attempts()
		if p1, p2 := stdinOf(at[0]), stdinOf(at[1]); p1 != p2 || p1 != string(h.cfg.Prompt) {
			t.Errorf("the prompt sent again differs:\n%q\n%q", p1, p2)
		}
		if !strings.Contains(h.logs.String(), "its session holds no user message with the prompt") {
			t.Errorf("no warning:\n%s", h.logs.String())
		}
	})
}
