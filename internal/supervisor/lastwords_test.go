package supervisor_test

import (
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// What 2.1.197 was seen to print after malarun's SIGTERM, on a loaded
// machine (docs/design.md §D35): its tool killed ("Exit code 137" sent to
// the model), the model's next call, its answer and a success.
var lastWords = []string{
	`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"Exit code 137","is_error":true}]},"parent_tool_use_id":null,"session_id":"` + testchild.SessionID + `"}`,
	`{"type":"assistant","message":{"model":"claude-opus-4-8","content":[{"type":"tool_use","id":"toolu_9","name":"Write","input":{"file_path":"/src/late.go"}}],"usage":{"input_tokens":10,"output_tokens":1}},"parent_tool_use_id":null,"session_id":"` + testchild.SessionID + `"}`,
	`{"type":"assistant","message":{"model":"claude-opus-4-8","content":[{"type":"text","text":"Everything is finished."}],"usage":{"input_tokens":10,"output_tokens":1}},"parent_tool_use_id":null,"session_id":"` + testchild.SessionID + `"}`,
	`{"type":"result","subtype":"success","is_error":false,"result":"Everything is finished.","session_id":"` + testchild.SessionID + `","total_cost_usd":0.02,"terminal_reason":"completed"}`,
}

func lastWordsHarness(t *testing.T) *harness {
	h := newHarness(t, testchild.LastWords, testchild.EnvLines+"=2",
		testchild.EnvTranscript+"="+transcriptFile(t, testchild.InitLine, testchild.ToolLine),
		testchild.EnvLastWords+"="+transcriptFile(t, lastWords...))
	h.cfg.ToolTimeout, h.cfg.KillGrace, h.cfg.MaxAttempts = 10*time.Second, time.Second, 1
	return h
}

// A result the dying CLI prints after a hang's stop decides nothing: the
// hang does, and the run resumes with the call it started after the stop
// named among those cut off, as the one running at the stop is.
func TestALateResultAfterAHangIsNoSuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := lastWordsHarness(t)
		h.cfg.MaxAttempts = 2
		rep, err, _ := h.run()
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		if len(rep.History) != 2 || rep.History[0].Outcome != "hang" {
			t.Fatalf("attempts %+v, want a hang then the resume", rep.History)
		}
		first := rep.History[0]
		if len(first.Results) != 1 || !first.Results[0].AfterStop {
			t.Errorf("the first attempt's results %+v, want the late success marked after_stop", first.Results)
		}
		attempts := h.attempts()
		if len(attempts) != 2 || !strings.Contains(attempts[1], "--resume") {
			t.Fatalf("attempts %q", attempts)
		}
		// The resume prompt names both calls: Bash, running at the stop,
		// and Write, which the dying CLI started after it.
		for _, want := range []string{`"command":"sleep 1"`, `/src/late.go`} {
			if !strings.Contains(attempts[1], want) {
				t.Errorf("the resume prompt does not name %s:\n%s", want, attempts[1])
			}
		}
		if h.stdout.String() != "All done.\n" {
			t.Errorf("stdout %q, want the resumed attempt's result", h.stdout.String())
		}
	})
}

// After session_timeout a late success is still 124: the work was cut.
func TestALateResultAfterTheSessionTimeoutIs124(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := lastWordsHarness(t)
		h.cfg.ToolTimeout, h.cfg.SessionTimeout = time.Hour, 30*time.Second
		_, err, _ := h.run()
		wantKind(t, err, outcome.SessionTimeout, "session_timeout")
		if h.stdout.String() != "" {
			t.Errorf("stdout %q: a late result was taken for the run's", h.stdout.String())
		}
		e, ok := journal.Read(h.cfg.StateDir, h.cfg.IssueID)
		if !ok || e.Err != nil || e.Record.Status != record.Stopped {
			t.Errorf("record %+v (%v), want stopped", e.Record.Status, e.Err)
		}
		if names := callNames(e.Record.Running); !strings.Contains(names, "Write") || !strings.Contains(names, "Bash") {
			t.Errorf("the record's cut calls %q, want Bash and the late Write", names)
		}
	})
}

// After a signal from outside a late success is an interruption, which the
// next invocation resumes; and a clean success followed by a ping is no
// rescue: nothing is killed, no hang is told.
func TestALateResultAfterASignalIsInterrupted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := lastWordsHarness(t)
		h.cfg.ToolTimeout = time.Hour
		h.observer = func(e event.Event) {
			if e.Kind == event.AttemptStarted {
				go func() { h.signals <- syscall.SIGTERM }()
			}
		}
		_, err, _ := h.run()
		wantKind(t, err, outcome.Interrupted, "asked to stop")
	})
}

func TestAPingAfterACleanSuccessIsNoRescue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ping := `{"type":"stream_event","event":{"type":"ping"},"session_id":"` + testchild.SessionID + `","parent_tool_use_id":null}`
		h := newHarness(t, testchild.Linger, testchild.EnvTranscript+"="+transcriptFile(t, testchild.InitLine, testchild.TextLine, testchild.Result, ping, `{"type":"keep_alive"}`, "junk"))
		h.cfg.ResultExitTimeout, h.cfg.IdleTimeout = 3*time.Second, time.Minute
		var hangs int
		h.observer = func(e event.Event) {
			if e.Kind == event.HangDetected {
				hangs++
			}
		}
		rep, err, took := h.run()
		if err != nil || hangs != 0 || len(rep.History) != 1 || rep.History[0].Ended != "lingered" {
			t.Fatalf("err %v, %d hangs, attempts %+v: a clean success was taken for a hang", err, hangs, rep.History)
		}
		if took != 3*time.Second {
			t.Errorf("took %v, want result_exit_timeout from the result, whatever came after it", took)
		}
	})
}

func callNames(calls []stream.ToolUse) string {
	var names []string
	for _, c := range calls {
		names = append(names, c.Name)
	}
	return strings.Join(names, ",")
}

// A request never answered that malarun finds at the first byte (§D33) is
// counted as one, with the silence it waited as its cost, as claude's own
// retries of such a request are (§D36): the report, the record and the
// summary say how much time requests never answered took.
func TestAFirstByteHangIsARequestNeverAnswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.Hang, testchild.EnvLines+"=3",
			testchild.EnvTranscript+"="+transcriptFile(t, testchild.InitLine, testchild.ToolLine, testchild.ToolDone))
		h.cfg.IdleTimeout, h.cfg.FirstByteTimeout = time.Minute, 20*time.Second
		rep, err, took := h.run()
		wantKind(t, err, outcome.RetriesExhausted, "waiting for the API's reply (first_byte_timeout)")
		if took != 20*time.Second {
			t.Errorf("took %v, want first_byte_timeout", took)
		}
		n := rep.History[0].NoResponse
		if n == nil || n.Retries != 1 || n.Cost != 20*time.Second {
			t.Errorf("no_response %+v, want one request never answered that cost 20s", n)
		}
		e, ok := journal.Read(h.cfg.StateDir, h.cfg.IssueID)
		if !ok || e.Err != nil || e.Record.NoResponse.Retries != 1 || e.Record.NoResponse.MS != 20000 {
			t.Errorf("record no_response %+v (%v)", e.Record.NoResponse, e.Err)
		}
	})
}
