package main

import (
	"context"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/malarun/malarun/internal/event"

	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/supervisor"
	"github.com/malarun/malarun/internal/testing/otlptest"
)

func TestTelemetryIsOffWithoutAnEndpoint(t *testing.T) {
	c := newCLI(t)
	c.env["TRACEPARENT"] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	o := c.run("issue-1", "--prompt", c.prompt())
	cfg := o.wantRun(t)
	if o.sdeps.Traceparent != nil || !cfg.Trace.IsZero() {
		t.Errorf("without an endpoint: Traceparent set %v, trace %+v; want neither", o.sdeps.Traceparent != nil, cfg.Trace)
	}
	if strings.Contains(o.stderr, "telemetry") {
		t.Errorf("stderr mentions telemetry:\n%s", o.stderr)
	}
}

func TestTelemetryFollowsTheRunAndItsExitCode(t *testing.T) {
	rcv := otlptest.Start()
	defer rcv.Close()
	c := newCLI(t)
	c.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = rcv.URL()
	c.env["OTEL_SERVICE_NAME"] = "fleet"
	c.runErr = &supervisor.RunError{Kind: outcome.RetriesExhausted, Detail: "no output for 3m"}
	var tp string
	o := c.runWith(func(ctx context.Context, cfg supervisor.Config, sd supervisor.Deps) {
		sd.Observer(event.Event{Kind: event.RunStarted, RunDir: "/state/issue-1/runs/r1"})
		tp, _ = sd.Traceparent(1)
		sd.Observer(event.Event{Kind: event.AttemptStarted, Attempt: 1, Pid: 7})
		sd.Observer(event.Event{Kind: event.AttemptEnded, Attempt: 1, Outcome: "hang", Ending: "hang"})
	}, "issue-1", "--prompt", c.prompt())
	if o.code != 3 {
		t.Fatalf("exit %d, want 3; stderr:\n%s", o.code, o.stderr)
	}
	var run, attempt *otlptest.Span
	for _, s := range rcv.Spans() {
		switch {
		case s.Service != "fleet":
			t.Errorf("span %s from service %q", s.Name, s.Service)
		case s.Name == "malarun.run":
			run = &s
		case s.Name == "malarun.attempt":
			attempt = &s
		}
	}
	if run == nil || attempt == nil {
		t.Fatalf("spans %v: want the run and its attempt, exported before malarun returned", rcv.Spans())
	}
	a := otlptest.Attrs(run.Attributes)
	if a["process.exit.code"] != int64(3) || a["malarun.outcome"] != string(outcome.RetriesExhausted) || a["malarun.issue"] != "issue-1" {
		t.Errorf("run span attributes %v", a)
	}
	if o.cfg.Trace.TraceID != hex.EncodeToString(run.TraceId) || o.cfg.Trace.SpanID != hex.EncodeToString(run.SpanId) {
		t.Errorf("the supervisor was given trace %+v, not the run span", o.cfg.Trace)
	}
	if want := "00-" + hex.EncodeToString(attempt.TraceId) + "-" + hex.EncodeToString(attempt.SpanId) + "-01"; tp != want {
		t.Errorf("attempt 1's TRACEPARENT %q, want %q", tp, want)
	}
	if m := rcv.Metrics("fleet"); m["malarun.runs"] == nil {
		t.Errorf("no runs metric among %d", len(m))
	}
}

func TestAnUnusableTelemetryVariableIsOneWarning(t *testing.T) {
	c := newCLI(t)
	c.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://127.0.0.1:9"
	c.env["OTEL_EXPORTER_OTLP_HEADERS"] = "authorization=Bearer%zzs3cret"
	o := c.run("issue-1", "--prompt", c.prompt())
	o.wantRun(t)
	if n := strings.Count(o.stderr, "OTEL_EXPORTER_OTLP_HEADERS"); n != 1 || strings.Contains(o.stderr, "s3cret") {
		t.Errorf("want one warning naming the variable, never its value:\n%s", o.stderr)
	}
	if o.sdeps.Traceparent != nil {
		t.Error("telemetry is on although neither signal can be exported")
	}
}
