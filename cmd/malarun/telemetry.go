package main

import (
	"runtime/debug"

	"github.com/malarun/malarun/internal/event"

	"github.com/rs/zerolog"

	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/supervisor"
	"github.com/malarun/malarun/internal/telemetry"
)

// startTelemetry turns the run's telemetry on when the OTEL_* variables
// name a collector (nil: off, which costs the run nothing). A variable
// that cannot be used is one warning; the run goes on without what it
// applied to.
func startTelemetry(d *deps, issue string, log zerolog.Logger) *telemetry.Run {
	s, problems := telemetry.FromEnv(d.getenv)
	for _, p := range problems {
		log.Warn().Str("variable", p.Variable).Str("problem", p.Message).Msg("telemetry: a variable cannot be used")
	}
	if !s.On() {
		return nil
	}
	v := readVersion(versionOptions{version: version, buildInfo: debug.ReadBuildInfo})
	return telemetry.Start(s, telemetry.Info{Issue: issue, Version: v.Version,
		Traceparent: d.getenv("TRACEPARENT"), Tracestate: d.getenv("TRACESTATE")}, log)
}

// withTelemetry wires the run's telemetry into the supervisor: the run
// span for the record, each attempt's TRACEPARENT, and every event.
func withTelemetry(t *telemetry.Run, cfg *supervisor.Config, sd *supervisor.Deps) {
	if t == nil {
		return
	}
	cfg.Trace = t.Trace()
	sd.Traceparent = t.Traceparent
	observe := sd.Observer
	sd.Observer = func(e event.Event) {
		if observe != nil {
			observe(e)
		}
		t.Observe(e)
	}
}

// finishTelemetry ends the run's span with what the run came to.
func finishTelemetry(t *telemetry.Run, report event.Report, err error) {
	t.Finish(report, string(outcome.Of(err)), exitCodeFor(err))
}
