package telemetry

import (
	"bytes"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/record"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/testing/otlptest"
)

func settingsFor(base string) Settings {
	s, _ := FromEnv(envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": base}))
	return s
}

// aHungThenResumedRun feeds t the events of a run whose first attempt
// hangs and whose second succeeds, as the supervisor emits them, from t0
// on (now or later: an attempt's span starts at Traceparent's call). It
// returns the report and attempt 2's TRACEPARENT.
func aHungThenResumedRun(t0 time.Time, tel *Run, previous record.TraceRef) (event.Report, string) {
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	tel.Observe(event.Event{Time: at(0), Kind: event.RunStarted, RunDir: "/s/i/runs/20261125T100000Z-abcdef", Continued: !previous.IsZero(), PreviousTrace: previous})
	tel.Traceparent(1)
	tel.Observe(event.Event{Time: at(0.1), Kind: event.AttemptStarted, Attempt: 1, Session: "s-1", Pid: 41, Purpose: "work"})
	tel.Observe(event.Event{Time: at(1), Kind: event.ToolStarted, Attempt: 1, Tool: "Bash", ToolInput: "cat secret.txt"})
	tel.Observe(event.Event{Time: at(1.5), Kind: event.TaskStarted, Attempt: 1, Task: "b1", Reason: "npm test --token=xyz"})
	tel.Observe(event.Event{Time: at(5.2), Kind: event.HangDetected, Attempt: 1, Limit: 4 * time.Second, Silence: 4200 * time.Millisecond,
		ToolsRunning: []string{"Bash"}, Phase: "tool", Doing: "while Bash ran", Reason: "no output for 4s"})
	tel.Observe(event.Event{Time: at(5.2), Kind: event.KillSent, Attempt: 1, Reason: "hang", Grace: 10 * time.Second})
	tel.Observe(event.Event{Time: at(5.4), Kind: event.TreeGone, Attempt: 1, Termed: 3, Killed: 1, Took: 200 * time.Millisecond})
	tel.Observe(event.Event{Time: at(5.4), Kind: event.AttemptEnded, Attempt: 1, Outcome: "hang", Ending: "hang", ExitCode: -1,
		Reason: "claude said: the password is hunter2", ClaudeCodeVersion: "2.1.330"})
	tel.Observe(event.Event{Time: at(5.4), Kind: event.RetryDecided, Attempt: 1, Action: "resume", Backoff: 2 * time.Second})
	tp2, _ := tel.Traceparent(2)
	tel.Observe(event.Event{Time: at(7.5), Kind: event.AttemptStarted, Attempt: 2, Session: "s-1", Pid: 42, Resume: true, Purpose: "work"})
	tel.Observe(event.Event{Time: at(9), Kind: event.AttemptEnded, Attempt: 2, Outcome: "success", Ending: "exited", ClaudeCodeVersion: "2.1.330"})
	tel.Observe(event.Event{Time: at(9), Kind: event.RunFinished, Outcome: "success"})
	// The run's cost (0.4) includes what an earlier malarun spent; this
	// invocation's attempts cost 0.25.
	return event.Report{Attempts: 2, SessionID: "s-1", CostUSD: 0.4, Started: t0.Add(-10 * time.Second),
		History: []event.AttemptReport{{N: 1, Ended: "hang", CostUSD: 0.1}, {N: 2, Ended: "exited", CostUSD: 0.15}},
		Usage:   stream.Tokens{InputTokens: 100, OutputTokens: 20, CacheReadInputTokens: 7}}, tp2
}

func TestARunBecomesOneTraceAndItsMetrics(t *testing.T) {
	rcv := otlptest.Start()
	defer rcv.Close()
	var logs bytes.Buffer
	parent := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tel := Start(settingsFor(rcv.URL()), Info{Issue: "issue-7", Version: "v1.2.3", Traceparent: parent}, zerolog.New(&logs))
	if tel == nil {
		t.Fatal("Start returned nil for an endpoint")
	}
	previous := record.TraceRef{TraceID: "0af7651916cd43dd8448eb211c80319c", SpanID: "b7ad6b7169203331"}
	rep, tp2 := aHungThenResumedRun(time.Now(), tel, previous)
	ref := tel.Trace()
	tel.Finish(rep, "success", 0)
	tel.Shutdown()
	if errs := rcv.Errors(); len(errs) > 0 || logs.Len() > 0 {
		t.Fatalf("receiver errors %v, log %s", errs, logs.String())
	}

	spans := spansOf(rcv.ResourceSpans())
	if len(spans) != 3 {
		t.Fatalf("%d spans, want the run and 2 attempts: %v", len(spans), spans)
	}
	root := findSpan(t, spans, "malarun.run", 0)
	if got := hex.EncodeToString(root.TraceId); got != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("the run's trace %s, want TRACEPARENT's", got)
	}
	if got := hex.EncodeToString(root.ParentSpanId); got != "00f067aa0ba902b7" {
		t.Errorf("the run's parent %s, want TRACEPARENT's span", got)
	}
	if ref.TraceID != hex.EncodeToString(root.TraceId) || ref.SpanID != hex.EncodeToString(root.SpanId) {
		t.Errorf("Trace() %+v does not name the run span", ref)
	}
	if len(root.Links) != 1 || hex.EncodeToString(root.Links[0].TraceId) != previous.TraceID || hex.EncodeToString(root.Links[0].SpanId) != previous.SpanID {
		t.Errorf("links %v, want one to the previous run span", root.Links)
	}
	wantAttrs(t, "run", root.Attributes, map[string]any{"malarun.issue": "issue-7", "malarun.run.id": "20261125T100000Z-abcdef",
		"malarun.run.continued": true, "malarun.outcome": "success", "process.exit.code": int64(0), "malarun.attempts": int64(2),
		"malarun.cost_usd": 0.4, "gen_ai.usage.input_tokens": int64(100), "session.id": "s-1"})
	if root.Status != nil && root.Status.Code == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("a successful run's status is %v", root.Status)
	}
	// Flags: sampled, and whether the parent is remote (TRACEPARENT's is).
	if root.Flags != 0x301 {
		t.Errorf("run span flags %#x, want 0x301", root.Flags)
	}
	if evs := eventNames(root.Events); !slices.Equal(evs, []string{"retry_decided"}) {
		t.Errorf("run span events %v", evs)
	}
	a1, a2 := findSpan(t, spans, "malarun.attempt", 1), findSpan(t, spans, "malarun.attempt", 2)
	for _, a := range []*tracepb.Span{a1, a2} {
		if !bytes.Equal(a.ParentSpanId, root.SpanId) || !bytes.Equal(a.TraceId, root.TraceId) {
			t.Errorf("attempt span %x is not a child of the run span", a.SpanId)
		}
		if a.Flags != 0x101 {
			t.Errorf("attempt span flags %#x, want 0x101 (sampled, local parent)", a.Flags)
		}
	}
	if tp2 != "00-"+hex.EncodeToString(a2.TraceId)+"-"+hex.EncodeToString(a2.SpanId)+"-01" {
		t.Errorf("attempt 2's TRACEPARENT %q does not name its span %x", tp2, a2.SpanId)
	}
	wantAttrs(t, "attempt 1", a1.Attributes, map[string]any{"malarun.attempt.ending": "hang", "malarun.outcome": "hang", "process.pid": int64(41), "malarun.hang.phase": "tool",
		"session.id": "s-1", "malarun.claude.version": "2.1.330", "malarun.attempt.resume": false})
	wantAttrs(t, "attempt 2", a2.Attributes, map[string]any{"malarun.attempt.ending": "exited", "malarun.attempt.resume": true})
	if a1.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || a2.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("statuses %v / %v, want error for the hang only", a1.Status, a2.Status)
	}
	if evs := eventNames(a1.Events); !slices.Equal(evs, []string{"task_started", "hang_detected", "kill_sent", "tree_gone"}) {
		t.Errorf("attempt 1 events %v", evs)
	}
	hang := a1.Events[1]
	wantAttrs(t, "hang", hang.Attributes, map[string]any{"malarun.hang.silence_s": 4.2, "malarun.hang.limit_s": 4.0, "malarun.hang.phase": "tool"})
	if got := time.Unix(0, int64(hang.TimeUnixNano)); got.Sub(time.Unix(0, int64(a1.StartTimeUnixNano))) < 5*time.Second {
		t.Errorf("the hang event is at %v, not at its event's time", got)
	}
	// Nothing of the agent's goes out: tool input, a task's command, a reason quoting claude.
	all := dump(rcv.ResourceSpans())
	for _, secret := range []string{"secret.txt", "xyz", "hunter2"} {
		if strings.Contains(all, secret) {
			t.Errorf("the trace carries %q", secret)
		}
	}

	m := metricsOf(rcv.ResourceMetrics())
	wantSum(t, m, MetricRuns, map[string]string{"malarun.outcome": "success"}, 1)
	wantSum(t, m, MetricAttempts, map[string]string{"malarun.attempt.ending": "hang"}, 1)
	wantSum(t, m, MetricAttempts, map[string]string{"malarun.attempt.ending": "exited"}, 1)
	wantSum(t, m, MetricHangs, map[string]string{"malarun.hang.phase": "tool"}, 1)
	wantSum(t, m, MetricTokens, map[string]string{"malarun.token.type": "input"}, 100)
	wantSum(t, m, MetricTokens, map[string]string{"malarun.token.type": "cache_read"}, 7)
	wantSum(t, m, MetricCost, nil, 0.25)
	if h := histogram(t, m, MetricHangSilence); h.GetCount() != 1 || h.GetSum() != 4.2 {
		t.Errorf("hang silence histogram count %d sum %v, want 1 and 4.2", h.GetCount(), h.GetSum())
	}
	if h := histogram(t, m, MetricTreeStopSeconds); h.GetCount() != 1 || h.GetSum() != 0.2 {
		t.Errorf("tree stop histogram count %d sum %v", h.GetCount(), h.GetSum())
	}
	if h := histogram(t, m, MetricRunSeconds); h.GetCount() != 1 || h.GetSum() < 10 {
		t.Errorf("run duration histogram count %d sum %v, want 1 and >= 10", h.GetCount(), h.GetSum())
	}
	if _, ok := m[MetricReclaims]; ok {
		t.Errorf("a run that was not reclaimed recorded %s", MetricReclaims)
	}
	res := rcv.ResourceMetrics()[0].Resource
	wantAttrs(t, "resource", res.Attributes, map[string]any{"service.name": "malarun", "service.version": "v1.2.3"})
	if id := attrs(res.Attributes)["service.instance.id"]; id == nil || len(id.(string)) != 36 {
		t.Errorf("service.instance.id %v, want a UUID", id)
	}
	if reqs := rcv.Requests(); len(reqs) == 0 || reqs[0].ContentType != "application/x-protobuf" {
		t.Errorf("requests %+v", reqs)
	}
}

func TestALimitWaitIsMeasuredUntilTheNextAttempt(t *testing.T) {
	rcv := otlptest.Start()
	defer rcv.Close()
	tel := Start(settingsFor(rcv.URL()), Info{Issue: "i"}, zerolog.Nop())
	t0 := time.Now().Add(-time.Hour)
	tel.Observe(event.Event{Time: t0, Kind: event.RunStarted, RunDir: "/s/i/runs/r"})
	tel.Observe(event.Event{Time: t0.Add(time.Second), Kind: event.AttemptEnded, Attempt: 1, Outcome: "rate-limit", Ending: "exited"})
	retryAt := t0.Add(30 * time.Minute)
	tel.Observe(event.Event{Time: t0.Add(2 * time.Second), Kind: event.LimitWait, UsageLimit: record.UsageLimit{RetryAt: retryAt, LimitType: "five_hour"}, Until: retryAt})
	tel.Traceparent(2) // now: about an hour after t0
	// A kind no CLI has used yet is one label value, "other", however many there are.
	for _, kind := range []string{"weird\x1b[2J", strings.Repeat("k", 5000)} {
		tel.Observe(event.Event{Time: time.Now(), Kind: event.LimitWait, UsageLimit: record.UsageLimit{LimitType: kind}})
	}
	tel.Finish(event.Report{Started: t0}, "success", 0)
	tel.Shutdown()
	m := metricsOf(rcv.ResourceMetrics())
	wantSum(t, m, MetricLimitWaits, map[string]string{"malarun.limit.type": "five_hour"}, 1)
	wantSum(t, m, MetricLimitWaits, map[string]string{"malarun.limit.type": "other"}, 2)
	if h := histogramWith(t, m, MetricLimitWaitSeconds, "five_hour"); h.GetCount() != 1 || h.GetSum() < 3590 || h.GetSum() > 3700 {
		t.Errorf("limit wait count %d sum %v, want 1 wait of about an hour", h.GetCount(), h.GetSum())
	}
	root := findSpan(t, spansOf(rcv.ResourceSpans()), "malarun.run", 0)
	wantAttrs(t, "limit_wait", root.Events[0].Attributes, map[string]any{"malarun.limit.retry_at": retryAt.UTC().Format(time.RFC3339), "malarun.limit.type": "five_hour"})
}

func TestAnUnusableTraceparentStartsATraceOfItsOwn(t *testing.T) {
	rcv := otlptest.Start()
	defer rcv.Close()
	var logs bytes.Buffer
	tel := Start(settingsFor(rcv.URL()), Info{Issue: "i", Traceparent: "00-zz\x1b[31m-01"}, zerolog.New(&logs))
	tp, _ := tel.Traceparent(1)
	tel.Finish(event.Report{}, "crash", 1)
	tel.Shutdown()
	if !strings.Contains(logs.String(), "TRACEPARENT is not a W3C traceparent") || strings.Contains(logs.String(), "\x1b") {
		t.Errorf("log %q: want one warning that does not repeat the value", logs.String())
	}
	root := findSpan(t, spansOf(rcv.ResourceSpans()), "malarun.run", 0)
	if len(root.ParentSpanId) != 0 || !strings.HasPrefix(tp, "00-"+hex.EncodeToString(root.TraceId)) {
		t.Errorf("root parent %x, attempt TRACEPARENT %q: want a new trace", root.ParentSpanId, tp)
	}
	if root.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("a failed run's status is %v", root.Status)
	}
	wantAttrs(t, "run", root.Attributes, map[string]any{"malarun.outcome": "crash", "process.exit.code": int64(1)})
}

func TestTelemetryOffIsANilRun(t *testing.T) {
	tel := Start(Settings{}, Info{Issue: "i"}, zerolog.Nop())
	if tel != nil {
		t.Fatal("Start with no endpoint is not nil")
	}
	// Every method of the nil Run does nothing.
	if tp, ts := tel.Traceparent(1); tp != "" || ts != "" || !tel.Trace().IsZero() {
		t.Errorf("nil Run: traceparent %q %q trace %v", tp, ts, tel.Trace())
	}
	tel.Observe(event.Event{Kind: event.RunStarted})
	tel.Finish(event.Report{}, "success", 0)
	tel.Shutdown()
}

func TestMetricsOnlyPassTraceparentThrough(t *testing.T) {
	rcv := otlptest.Start()
	defer rcv.Close()
	s, _ := FromEnv(envOf(map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": rcv.URL() + "/v1/metrics"}))
	parent := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tel := Start(s, Info{Issue: "i", Traceparent: parent}, zerolog.Nop())
	if tp, _ := tel.Traceparent(1); tp != parent {
		t.Errorf("with traces off the attempt's TRACEPARENT is %q, want malarun's own %q", tp, parent)
	}
	if !tel.Trace().IsZero() {
		t.Errorf("with traces off the record gets trace %v", tel.Trace())
	}
	tel.Finish(event.Report{}, "success", 0)
	tel.Shutdown()
	if len(rcv.ResourceSpans()) != 0 || len(rcv.ResourceMetrics()) == 0 {
		t.Errorf("spans %d metrics %d, want metrics only", len(rcv.ResourceSpans()), len(rcv.ResourceMetrics()))
	}
}

func TestGzipAndHeadersReachTheCollector(t *testing.T) {
	rcv := otlptest.Start()
	defer rcv.Close()
	s, problems := FromEnv(envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL(), "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
		"OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=k%3D1"}))
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	tel := Start(s, Info{Issue: "i"}, zerolog.Nop())
	tel.Finish(event.Report{}, "success", 0)
	tel.Shutdown()
	reqs := rcv.Requests()
	if len(reqs) != 2 || len(rcv.Errors()) > 0 {
		t.Fatalf("requests %+v errors %v, want traces and metrics", reqs, rcv.Errors())
	}
	for _, r := range reqs {
		if r.Encoding != "gzip" || r.Header.Get("x-api-key") != "k=1" {
			t.Errorf("request %s: encoding %q key %q", r.Path, r.Encoding, r.Header.Get("x-api-key"))
		}
	}
}

// helpers

func spansOf(rs []*tracepb.ResourceSpans) []*tracepb.Span {
	var out []*tracepb.Span
	for _, r := range rs {
		for _, ss := range r.ScopeSpans {
			out = append(out, ss.Spans...)
		}
	}
	return out
}

// findSpan finds the span named name; for attempts, the one numbered n.
func findSpan(t *testing.T, spans []*tracepb.Span, name string, n int) *tracepb.Span {
	t.Helper()
	for _, s := range spans {
		if s.Name == name && (n == 0 || attrs(s.Attributes)["malarun.attempt.number"] == int64(n)) {
			return s
		}
	}
	t.Fatalf("no span %s %d among %d", name, n, len(spans))
	return nil
}

func attrs(kvs []*commonpb.KeyValue) map[string]any { return otlptest.Attrs(kvs) }

func wantAttrs(t *testing.T, what string, kvs []*commonpb.KeyValue, want map[string]any) {
	t.Helper()
	got := attrs(kvs)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s = %#v, want %#v", what, k, got[k], v)
		}
	}
}

func eventNames(evs []*tracepb.Span_Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Name)
	}
	return out
}

func dump(rs []*tracepb.ResourceSpans) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.String())
	}
	return b.String()
}

func metricsOf(rms []*metricspb.ResourceMetrics) map[string]*metricspb.Metric {
	out := map[string]*metricspb.Metric{}
	for _, rm := range rms {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				out[m.Name] = m
			}
		}
	}
	return out
}

// wantSum checks the point of a monotonic cumulative sum whose attributes are labels.
func wantSum(t *testing.T, m map[string]*metricspb.Metric, name string, labels map[string]string, want float64) {
	t.Helper()
	mt, ok := m[name]
	if !ok || mt.GetSum() == nil {
		t.Errorf("no sum %s", name)
		return
	}
	sum := mt.GetSum()
	if !sum.IsMonotonic || sum.AggregationTemporality != metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE {
		t.Errorf("%s: monotonic %v temporality %v", name, sum.IsMonotonic, sum.AggregationTemporality)
	}
	if v, ok := otlptest.SumValue(mt, labels); !ok || v != want {
		t.Errorf("%s%v = %v (found %v), want %v", name, labels, v, ok, want)
	}
}

func histogram(t *testing.T, m map[string]*metricspb.Metric, name string) *metricspb.HistogramDataPoint {
	t.Helper()
	mt, ok := m[name]
	if !ok || mt.GetHistogram() == nil || len(mt.GetHistogram().DataPoints) != 1 {
		t.Fatalf("no histogram %s with one point", name)
	}
	if mt.Unit != "s" {
		t.Errorf("%s: unit %q, want s", name, mt.Unit)
	}
	return mt.GetHistogram().DataPoints[0]
}

func TestACollectorThatNeverAnswersCostsTheFlushBoundAndOneWarning(t *testing.T) {
	silent, err := otlptest.StartSilent()
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	var logs bytes.Buffer
	tel := Start(settingsFor(strings.Replace(silent.URL(), "://", "://user:pass@", 1)), Info{Issue: "i"}, zerolog.New(&logs))
	runAgainstSilence(t, tel, &logs, func() bool { return silent.Accepted() > 0 })
	awaitLeftoverExport(silent.Close)
}

// runAgainstSilence runs tel to its end against a collector that never
// answers (reached says whether it was reached at all) and checks what
// that may cost: the flush bound, one warning, and no password in it.
func runAgainstSilence(t *testing.T, tel *Run, logs *bytes.Buffer, reached func() bool) {
	t.Helper()
	aHungThenResumedRun(time.Now(), tel, record.TraceRef{})
	tel.Finish(event.Report{}, "success", 0)
	began := time.Now()
	tel.Shutdown()
	// A bound, not a sleep: the flush gives up at FlushLimit.
	if took := time.Since(began); took > FlushLimit+time.Second {
		t.Errorf("Shutdown took %s with a collector that never answers, want at most %s", took, FlushLimit)
	}
	if !reached() {
		t.Error("the collector was never reached: the test tests nothing")
	}
	if n := strings.Count(logs.String(), `"level":"warn"`); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), "pass") {
		t.Errorf("the warning repeats the endpoint's password: %s", logs.String())
	}
}

// awaitLeftoverExport stops a collector that never answers and waits for
// the export the run left under way to fail. The SDK sends the last spans
// on a goroutine of its own, bounded by the export timeout (10 s), not by
// Shutdown's context, so it outlives Shutdown (malarun's exit ends it);
// its error goes through OpenTelemetry's error handler, which is the
// process's: it would be the next test's Run's warning.
func awaitLeftoverExport(stop func()) {
	failed := make(chan struct{})
	var once sync.Once
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) { once.Do(func() { close(failed) }) }))
	stop()
	select {
	case <-failed:
	case <-time.After(defaultExportTimeout + time.Second): // it ended unseen: nothing is left
	}
}

func TestALongToolNameIsCut(t *testing.T) {
	rcv := otlptest.Start()
	defer rcv.Close()
	tel := Start(settingsFor(rcv.URL()), Info{Issue: "i"}, zerolog.Nop())
	tel.Traceparent(1)
	tel.Observe(event.Event{Time: time.Now(), Kind: event.HangDetected, Attempt: 1, ToolsRunning: []string{strings.Repeat("x", 1<<20)}})
	tel.Finish(event.Report{}, "success", 0)
	tel.Shutdown()
	a := findSpan(t, spansOf(rcv.ResourceSpans()), "malarun.attempt", 1)
	tools := attrs(a.Events[0].Attributes)["malarun.tools_running"].(*commonpb.ArrayValue)
	if n := len(tools.Values[0].GetStringValue()); n != maxAttributeBytes {
		t.Errorf("a 1 MiB tool name went out as %d bytes, want %d", n, maxAttributeBytes)
	}
}

func TestTheSDKsOwnComplaintsGoToTheLogOnce(t *testing.T) {
	rcv := otlptest.Start()
	defer rcv.Close()
	// The SDK reads OTEL_METRIC_EXPORT_INTERVAL itself and logs a bad
	// value; by default that line goes to stderr as it is.
	t.Setenv("OTEL_METRIC_EXPORT_INTERVAL", "\x1b[31mnot-a-number")
	var logs bytes.Buffer
	tel := Start(settingsFor(rcv.URL()), Info{Issue: "i"}, zerolog.New(&logs))
	tel.Finish(event.Report{}, "success", 0)
	tel.Shutdown()
	if n := strings.Count(logs.String(), "OpenTelemetry reported a problem"); n != 1 {
		t.Errorf("%d warnings from the SDK, want 1:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), "\x1b") {
		t.Errorf("the log carries the raw escape: %q", logs.String())
	}
}

// histogramWith is the point of a histogram labelled with limit type kind.
func histogramWith(t *testing.T, m map[string]*metricspb.Metric, name, kind string) *metricspb.HistogramDataPoint {
	t.Helper()
	for _, p := range m[name].GetHistogram().GetDataPoints() {
		if attrs(p.Attributes)["malarun.limit.type"] == kind {
			return p
		}
	}
	t.Fatalf("no %s point for %q", name, kind)
	return nil
}

func TestTracesAloneRecordNoMetricsAndDoNotFail(t *testing.T) {
	rcv := otlptest.Start()
	defer rcv.Close()
	s, _ := FromEnv(envOf(map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": rcv.URL() + "/v1/traces"}))
	tel := Start(s, Info{Issue: "i"}, zerolog.Nop())
	rep, _ := aHungThenResumedRun(time.Now(), tel, record.TraceRef{})
	tel.Observe(event.Event{Time: time.Now(), Kind: event.LimitWait, UsageLimit: record.UsageLimit{LimitType: "five_hour"}})
	tel.Finish(rep, "success", 0)
	tel.Shutdown()
	if len(spansOf(rcv.ResourceSpans())) != 3 || len(rcv.ResourceMetrics()) != 0 {
		t.Errorf("%d spans and %d metric exports, want 3 and none", len(spansOf(rcv.ResourceSpans())), len(rcv.ResourceMetrics()))
	}
}

func TestARedirectIsNotFollowed(t *testing.T) {
	elsewhere := otlptest.Start()
	defer elsewhere.Close()
	redirecting := httptest.NewServer(http.RedirectHandler(elsewhere.URL()+"/v1/traces", http.StatusTemporaryRedirect))
	defer redirecting.Close()
	s, _ := FromEnv(envOf(map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": redirecting.URL + "/v1/traces",
		"OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=s3cret"}))
	var logs bytes.Buffer
	tel := Start(s, Info{Issue: "i"}, zerolog.New(&logs))
	tel.Finish(event.Report{}, "success", 0)
	tel.Shutdown()
	if n := len(elsewhere.Requests()); n != 0 {
		t.Errorf("the export followed the redirect to another server (%d requests) with its headers", n)
	}
	if !strings.Contains(logs.String(), "HTTP 307") || strings.Count(logs.String(), `"level":"warn"`) != 1 {
		t.Errorf("want one warning naming the answer:\n%s", logs.String())
	}
}

func TestTemporalityFollowsThePreference(t *testing.T) {
	kinds := []sdkmetric.InstrumentKind{sdkmetric.InstrumentKindCounter, sdkmetric.InstrumentKindHistogram,
		sdkmetric.InstrumentKindObservableCounter, sdkmetric.InstrumentKindUpDownCounter}
	d, c := metricdata.DeltaTemporality, metricdata.CumulativeTemporality
	for pref, want := range map[string][]metricdata.Temporality{
		temporalityCumulative: {c, c, c, c},
		temporalityDelta:      {d, d, d, c},
		temporalityLowMemory:  {d, d, c, c},
	} {
		e := &metricExporter{temporality: pref}
		for i, k := range kinds {
			if got := e.Temporality(k); got != want[i] {
				t.Errorf("%s: %v gets %v, want %v", pref, k, got, want[i])
			}
		}
	}
}
