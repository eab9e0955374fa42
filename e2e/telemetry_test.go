package e2e_test

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"

	"github.com/malarun/malarun/internal/telemetry"
	"github.com/malarun/malarun/internal/testing/fakeapi"
	"github.com/malarun/malarun/internal/testing/otlptest"
)

// traceRecordingCLI is a --claude-bin that appends the TRACEPARENT it was
// started with to a file, then becomes the real CLI (exec: the same
// process, so what it recorded is what the CLI got).
func traceRecordingCLI(t *testing.T) (bin, log string) {
	dir := t.TempDir()
	bin, log = filepath.Join(dir, "claude"), filepath.Join(dir, "traceparent.txt")
	script := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"${TRACEPARENT:--}\" >> '%s'\nexec '%s' \"$@\"\n", log, e2e.claude)
	if err := os.WriteFile(bin, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return bin, log
}

// jsonReport is the part of `--json` this test compares with the telemetry.
type jsonReport struct {
	Outcome  string `json:"outcome"`
	ExitCode int    `json:"exit_code"`
	Attempts []struct {
		N     int       `json:"n"`
		Ended string    `json:"ended"`
		Start time.Time `json:"start"`
		End   time.Time `json:"end"`
	} `json:"attempts"`
	Tokens struct {
		Input  int64 `json:"input"`
		Output int64 `json:"output"`
	} `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
}

// A run that hangs once and is resumed, exporting to an OTLP receiver, with
// the CLI's own telemetry on as a user would turn it on: malarun's trace
// and metrics tell what the report tells, each attempt's claude got its
// attempt span as TRACEPARENT, and the CLI's spans hang under it.
func TestRealCLIRunExportsItsTraceAndMetrics(t *testing.T) {
	rcv := otlptest.Start()
	defer rcv.Close()
	e := newEnvAlone(t, fakeapi.Bash("echo step-one"), fakeapi.Stall(), fakeapi.Text("Resumed and done."))
	var tplog string
	e.claudeBin, tplog = traceRecordingCLI(t)
	e.extraEnv = []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.URL(), "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_RESOURCE_ATTRIBUTES=deployment.environment.name=e2e",
		// The CLI's own telemetry, spans included (docs/design.md §F26).
		"CLAUDE_CODE_ENABLE_TELEMETRY=1", "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1",
		"OTEL_TRACES_EXPORTER=otlp", "OTEL_METRICS_EXPORTER=otlp", "OTEL_LOGS_EXPORTER=otlp"}
	// A CLI with its own telemetry on starts more slowly: an idle limit
	// of 6 s keeps a loaded machine from making a second hang.
	r := e.run("--idle-timeout", "6s", "--kill-grace", "1s", "--backoff", "0s", "--json")
	r.wantCode(t, 0)
	var rep jsonReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, r.stdout)
	}
	if len(rep.Attempts) != 2 || rep.Attempts[0].Ended != "hang" || rep.Attempts[1].Ended != "exited" {
		t.Fatalf("report attempts %+v, want a hang then an exit\n%s", rep.Attempts, r.stderr)
	}
	if errs := rcv.Errors(); len(errs) > 0 {
		t.Fatalf("the receiver could not decode: %v", errs)
	}
	if strings.Contains(r.stderr, "telemetry:") {
		t.Errorf("a warning about telemetry with a working collector:\n%s", r.stderr)
	}

	// The trace: the run span and one span per attempt, as the report says.
	var root *otlptest.Span
	attempts := map[int64]otlptest.Span{}
	for _, s := range rcv.Spans() {
		if s.Service != "malarun" {
			continue
		}
		switch s.Name {
		case "malarun.run":
			root = &s
		case "malarun.attempt":
			attempts[otlptest.Attrs(s.Attributes)["malarun.attempt.number"].(int64)] = s
		}
	}
	if root == nil || len(attempts) != len(rep.Attempts) {
		t.Fatalf("run span %v, %d attempt spans, want 1 and %d", root != nil, len(attempts), len(rep.Attempts))
	}
	ra := otlptest.Attrs(root.Attributes)
	if ra["malarun.outcome"] != rep.Outcome || ra["process.exit.code"] != int64(0) || ra["malarun.attempts"] != int64(2) ||
		ra["malarun.issue"] != "issue-e2e" || ra["gen_ai.usage.input_tokens"] != rep.Tokens.Input {
		t.Errorf("run span attributes %v do not match the report %+v", ra, rep)
	}
	if math.Abs(ra["malarun.cost_usd"].(float64)-rep.CostUSD) > 1e-9 {
		t.Errorf("run span cost %v, report %v", ra["malarun.cost_usd"], rep.CostUSD)
	}
	var silence float64
	for _, a := range rep.Attempts {
		s := attempts[int64(a.N)]
		if got := otlptest.Attrs(s.Attributes)["malarun.attempt.ending"]; got != a.Ended {
			t.Errorf("attempt %d span ending %v, report %q", a.N, got, a.Ended)
		}
		if hex.EncodeToString(s.ParentSpanId) != hex.EncodeToString(root.SpanId) {
			t.Errorf("attempt %d span is not a child of the run span", a.N)
		}
		for _, ev := range s.Events {
			if ev.Name == "hang_detected" {
				ea := otlptest.Attrs(ev.Attributes)
				silence = ea["malarun.hang.silence_s"].(float64)
				// At least the limit, and no longer than the attempt lasted.
				lasted := a.End.Sub(a.Start).Seconds()
				if a.N != 1 || ea["malarun.hang.limit_s"] != 6.0 || silence < 6 || silence > lasted {
					t.Errorf("attempt %d: hang_detected %v, want attempt 1 silent from 6 s (the limit) to %.1f s (its life)", a.N, ea, lasted)
				}
			}
		}
	}
	if silence == 0 {
		t.Error("no hang_detected event")
	}

	// Each attempt's claude got its attempt's span as TRACEPARENT.
	got, err := os.ReadFile(tplog)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(got))
	if len(lines) != 2 {
		t.Fatalf("claude started %d times with TRACEPARENT %q, want 2", len(lines), lines)
	}
	for i, line := range lines {
		s := attempts[int64(i+1)]
		if want := "00-" + hex.EncodeToString(s.TraceId) + "-" + hex.EncodeToString(s.SpanId) + "-01"; line != want {
			t.Errorf("attempt %d's claude got TRACEPARENT %q, want its span %q", i+1, line, want)
		}
	}

	// The CLI's own spans hang under attempt 2's span (attempt 1 was
	// killed before it could export). The CLI exports as it exits, before
	// malarun does; wait for a late batch on the receiver's signal.
	a2 := attempts[2]
	deadline := time.After(10 * time.Second)
	for !cliSpanUnder(rcv, a2) {
		select {
		case <-rcv.Received():
		case <-deadline:
			t.Fatalf("no span of claude %s has attempt 2's span as parent; services seen: %v", e2e.claudeVersion, services(rcv))
		}
	}

	// The metrics match the report.
	m := rcv.Metrics("malarun")
	wantMetric(t, m, telemetry.MetricRuns, map[string]string{"malarun.outcome": "success"}, 1)
	wantMetric(t, m, telemetry.MetricAttempts, map[string]string{"malarun.attempt.ending": "hang"}, 1)
	wantMetric(t, m, telemetry.MetricAttempts, map[string]string{"malarun.attempt.ending": "exited"}, 1)
	wantMetric(t, m, telemetry.MetricHangs, map[string]string{"malarun.hang.phase": "replying"}, 1) // a stall after message_start
	wantMetric(t, m, telemetry.MetricTokens, map[string]string{"malarun.token.type": "input"}, float64(rep.Tokens.Input))
	wantMetric(t, m, telemetry.MetricTokens, map[string]string{"malarun.token.type": "output"}, float64(rep.Tokens.Output))
	if rep.CostUSD > 0 {
		wantMetric(t, m, telemetry.MetricCost, nil, rep.CostUSD)
	}
	if h := m[telemetry.MetricHangSilence].GetHistogram().GetDataPoints(); len(h) != 1 || h[0].GetCount() != 1 || h[0].GetSum() != silence {
		t.Errorf("hang silence histogram %v, want one hang of %v s", h, silence)
	}
	if h := m[telemetry.MetricTreeStopSeconds].GetHistogram().GetDataPoints(); len(h) != 1 || h[0].GetCount() < 1 {
		t.Errorf("tree stop histogram %v", h)
	}
}

func cliSpanUnder(rcv *otlptest.Receiver, parent otlptest.Span) bool {
	for _, s := range rcv.Spans() {
		if s.Service != "malarun" && hex.EncodeToString(s.ParentSpanId) == hex.EncodeToString(parent.SpanId) &&
			hex.EncodeToString(s.TraceId) == hex.EncodeToString(parent.TraceId) {
			return true
		}
	}
	return false
}

func services(rcv *otlptest.Receiver) map[string]int {
	out := map[string]int{}
	for _, s := range rcv.Spans() {
		out[s.Service+" "+s.Name]++
	}
	return out
}

func wantMetric(t *testing.T, m map[string]*metricspb.Metric, name string, labels map[string]string, want float64) {
	t.Helper()
	mt, ok := m[name]
	if !ok {
		t.Errorf("no metric %s", name)
		return
	}
	if v, ok := otlptest.SumValue(mt, labels); !ok || math.Abs(v-want) > 1e-9 {
		t.Errorf("%s%v = %v (found %v), want %v", name, labels, v, ok, want)
	}
}

// A collector that accepts connections and never answers costs a run at
// most telemetry.FlushLimit and one warning: the same exit code, the same
// result, and no process left.
func TestRealCLINeverAnsweringCollectorChangesNothing(t *testing.T) {
	silent, err := otlptest.StartSilent()
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	plain := newEnvAlone(t, fakeapi.Bash("echo step-one"), fakeapi.Text("Done."))
	base := plain.run()
	base.wantCode(t, 0)

	e := newEnv(t, fakeapi.Bash("echo step-one"), fakeapi.Text("Done."))
	e.extraEnv = []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + silent.URL()}
	events := filepath.Join(t.TempDir(), "events.jsonl")
	started := time.Now()
	cmd, stdout, stderr := e.start("--events", events)
	r := e.wait(cmd, stdout, stderr, started)
	exited := started.Add(r.took)
	r.wantCode(t, base.code)
	if r.stdout != base.stdout {
		t.Errorf("stdout %q, without telemetry %q", r.stdout, base.stdout)
	}
	if silent.Accepted() == 0 {
		t.Fatal("malarun never reached the silent collector: the test tests nothing")
	}
	if n := strings.Count(r.stderr, "telemetry:"); n != 1 {
		t.Errorf("%d telemetry warnings, want 1:\n%s", n, r.stderr)
	}
	// The run itself went as without telemetry; after it, malarun took at
	// most the flush bound (and a margin for printing the result) to exit.
	finished := finishedAt(t, events)
	if after := exited.Sub(finished); after > telemetry.FlushLimit+time.Second {
		t.Errorf("malarun exited %v after its finished event, want at most the flush bound %v", after, telemetry.FlushLimit)
	}
	t.Logf("without telemetry %v; with a silent collector %v, of which %v after the run finished (flush bound %v)",
		base.took, r.took, exited.Sub(finished), telemetry.FlushLimit)
}

// finishedAt is the time of the finished event in an --events file.
func finishedAt(t *testing.T, path string) time.Time {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		var ev struct {
			Event string    `json:"event"`
			Time  time.Time `json:"time"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Event == "finished" {
			return ev.Time
		}
	}
	t.Fatalf("no finished event in %s", path)
	return time.Time{}
}
