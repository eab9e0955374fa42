package telemetry

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// The metrics, named and measured as the OpenTelemetry semantic
// conventions ask (dotted lower-case names, seconds for durations,
// annotations in braces for counts). Their attributes are few-valued
// (outcomes, endings, kinds); the issue id is on the spans only.
const (
	MetricRuns             = "malarun.runs"
	MetricAttempts         = "malarun.attempts"
	MetricHangs            = "malarun.hangs"
	MetricReclaims         = "malarun.reclaims"
	MetricLimitWaits       = "malarun.limit_waits"
	MetricLimitWaitSeconds = "malarun.limit_wait.duration"
	MetricRunSeconds       = "malarun.run.duration"
	MetricHangSilence      = "malarun.hang.silence.duration"
	MetricTreeStopSeconds  = "malarun.tree.stop.duration"
	MetricCost             = "malarun.cost"
	MetricTokens           = "malarun.tokens"
)

// The attributes of the metrics (and of the spans, where they apply).
const (
	attrOutcome   = "malarun.outcome"
	attrEnding    = "malarun.attempt.ending"
	attrHangPhase = "malarun.hang.phase" // what claude was doing when it hung (docs/design.md §D30)
	attrLimitType = "malarun.limit.type"
	// malarun's own: the semantic conventions' gen_ai.token.type has no
	// values for cache reads and writes.
	attrTokenType = "malarun.token.type"
)

type instruments struct {
	runs, attempts, hangs, reclaims, limitWaits metric.Int64Counter
	tokens                                      metric.Int64Counter
	cost                                        metric.Float64Counter
	runSeconds, limitWaitSeconds                metric.Float64Histogram
	hangSilence, treeStop                       metric.Float64Histogram
}

// newInstruments makes the instruments on m (nil: on a meter that records
// nothing, when metrics are off). An instrument the SDK refuses records
// nothing; the SDK reports why.
func newInstruments(m metric.Meter) instruments {
	if m == nil {
		m = noop.NewMeterProvider().Meter(scopeName)
	}
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, _ := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		return c
	}
	histogram := func(name, desc string, bounds ...float64) metric.Float64Histogram {
		h, _ := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(bounds...))
		return h
	}
	cost, _ := m.Float64Counter(MetricCost, metric.WithUnit("{USD}"), metric.WithDescription("What claude reported the runs cost, in US dollars."))
	return instruments{
		runs:       counter(MetricRuns, "{run}", "malarun invocations that ended, by outcome."),
		attempts:   counter(MetricAttempts, "{attempt}", "claude processes that ended, by how they ended."),
		hangs:      counter(MetricHangs, "{hang}", "Attempts stopped because claude was silent past its limit."),
		reclaims:   counter(MetricReclaims, "{reclaim}", "Runs taken over from a malarun that died."),
		limitWaits: counter(MetricLimitWaits, "{wait}", "Waits for a usage limit to reset."),
		tokens:     counter(MetricTokens, "{token}", "Tokens claude reported, by kind."),
		cost:       cost,
		runSeconds: histogram(MetricRunSeconds, "How long a malarun invocation took, by outcome.",
			10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400, 28800),
		limitWaitSeconds: histogram(MetricLimitWaitSeconds, "How long malarun waited for a usage limit to reset.",
			60, 300, 900, 1800, 3600, 7200, 14400, 18000, 36000, 86400),
		hangSilence: histogram(MetricHangSilence, "How long claude was silent when malarun took it for hung.",
			1, 5, 10, 30, 60, 120, 180, 300, 600, 900, 1800),
		treeStop: histogram(MetricTreeStopSeconds, "How long stopping claude's process tree took.",
			0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
	}
}

func with(kvs ...attribute.KeyValue) metric.MeasurementOption {
	return metric.WithAttributes(kvs...)
}
