package telemetry

import "github.com/go-logr/logr"

// sdkLog takes what the OpenTelemetry SDK logs through its process-wide
// logger, whose default prints to stderr unescaped (an OTEL_* variable's
// value among it): its errors become the run's one telemetry warning,
// through report, in a log field; its informational lines are dropped.
type sdkLog struct {
	report func(msg string, err error)
}

func (s sdkLog) Init(logr.RuntimeInfo) {}

// Enabled: only the SDK's errors are wanted (verbosity 0; its warnings
// and infos are V(1) and up).
func (s sdkLog) Enabled(level int) bool { return level <= 0 }

func (s sdkLog) Info(int, string, ...any) {}

func (s sdkLog) Error(err error, msg string, _ ...any) { s.report(msg, err) }

func (s sdkLog) WithValues(...any) logr.LogSink { return s }

func (s sdkLog) WithName(string) logr.LogSink { return s }
