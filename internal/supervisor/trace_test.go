package supervisor_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/record"

	"github.com/malarun/malarun/internal/testing/testchild"
)

// traceLines are what the fake child recorded of TRACEPARENT and TRACESTATE, per attempt.
func traceLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the fake child recorded no trace: %v", err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func TestEachAttemptsClaudeGetsItsOwnTraceparent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		traces := filepath.Join(t.TempDir(), "trace.txt")
		h := retrying(t, testchild.ResumeAware, testchild.EnvLines+"=2", testchild.EnvTraceFile+"="+traces,
			testchild.EnvTranscript+"="+transcriptFile(t, testchild.InitLine, testchild.ToolLine),
			"TRACEPARENT=00-11111111111111111111111111111111-2222222222222222-01", "TRACESTATE=vendor=malarun-parent")
		h.cfg.ToolTimeout = 300 * time.Millisecond
		var asked []int
		h.traceparent = func(n int) (string, string) {
			asked = append(asked, n)
			return fmt.Sprintf("00-4bf92f3577b34da6a3ce929d0e0e4736-%016x-01", n), ""
		}
		h.cfg.Trace = record.TraceRef{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", SpanID: "00f067aa0ba902b7"}
		rep, err, _ := h.run()
		if err != nil || rep.Attempts != 2 {
			t.Fatalf("run: %v, %d attempts\n%s", err, rep.Attempts, h.logs.String())
		}
		want := []string{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000001-01 -",
			"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000002-01 -"}
		if got := traceLines(t, traces); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("claude's TRACEPARENT and TRACESTATE per attempt:\n%s\nwant (malarun's own replaced, its TRACESTATE dropped):\n%s",
				strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if len(asked) != 2 || asked[0] != 1 || asked[1] != 2 {
			t.Errorf("Traceparent asked for attempts %v, want 1 and 2", asked)
		}
		rec := readRecord(t, h)
		if rec.Trace != h.cfg.Trace {
			t.Errorf("the record's trace %+v, want the run span %+v", rec.Trace, h.cfg.Trace)
		}
	})
}

func TestWithoutTelemetryClaudeGetsMalarunsTraceparentUnchanged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		traces := filepath.Join(t.TempDir(), "trace.txt")
		h := newHarness(t, testchild.Replay, testchild.EnvTraceFile+"="+traces, testchild.EnvTranscript+"="+transcripts+"text-success.jsonl",
			"TRACEPARENT=00-11111111111111111111111111111111-2222222222222222-01", "TRACESTATE=vendor=x")
		if _, err, _ := h.run(); err != nil {
			t.Fatalf("run: %v\n%s", err, h.logs.String())
		}
		if got := traceLines(t, traces); len(got) != 1 || got[0] != "00-11111111111111111111111111111111-2222222222222222-01 vendor=x" {
			t.Errorf("claude got %q, want malarun's TRACEPARENT and TRACESTATE as they were", got)
		}
		if rec := readRecord(t, h); !rec.Trace.IsZero() {
			t.Errorf("the record names trace %+v with telemetry off", rec.Trace)
		}
	})
}

func TestAContinuedRunIsToldThePreviousTrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The first malarun is stopped by its session timeout with the session kept; the second continues the run.
		h := retrying(t, testchild.ResumeAware, testchild.EnvLines+"=2",
			testchild.EnvTranscript+"="+transcriptFile(t, testchild.InitLine, testchild.ToolLine))
		h.cfg.ToolTimeout = 300 * time.Millisecond
		h.cfg.MaxAttempts = 1
		first := record.TraceRef{TraceID: "0af7651916cd43dd8448eb211c80319c", SpanID: "b7ad6b7169203331"}
		h.cfg.Trace = first
		if _, err, _ := h.run(); err == nil {
			t.Fatal("the first run succeeded; it should have stopped after its hang")
		}
		var started []event.Event
		h.observer = func(e event.Event) {
			if e.Kind == event.RunStarted {
				started = append(started, e)
			}
		}
		h.cfg.MaxAttempts = 2
		h.cfg.Trace = record.TraceRef{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", SpanID: "00f067aa0ba902b7"}
		h.run()
		if len(started) != 1 || !started[0].Continued || started[0].PreviousTrace != first {
			t.Fatalf("run_started %+v: want a continued run told the first malarun's trace", started)
		}
		if rec := readRecord(t, h); rec.Trace != h.cfg.Trace {
			t.Errorf("the record's trace %+v, want the second malarun's", rec.Trace)
		}
	})
}
