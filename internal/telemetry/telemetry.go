// Package telemetry exports what a run did as OpenTelemetry traces and
// metrics over OTLP/HTTP (docs/design.md §D22), or OTLP/gRPC in a build
// with the otlpgrpc tag (grpc_on.go): one trace per malarun, with a span
// for the run and one per attempt, the supervisor's decisions as span
// events, and counters and histograms across runs. It is off
// unless the standard OTEL_EXPORTER_OTLP_* variables name a collector, and
// it never stops, slows or changes a run: exports are asynchronous, a
// failure is one warning, and the flush at exit is bounded by FlushLimit.
package telemetry

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/record"
)

// FlushLimit bounds the export of what is left at exit (the last spans
// and the metrics): a collector that does not answer delays malarun's
// exit by at most this much.
const FlushLimit = 2 * time.Second

// scopeName is the instrumentation scope of malarun's spans and metrics.
const scopeName = "github.com/malarun/malarun"

// Info is what the run's telemetry needs to know before the run starts.
type Info struct {
	Issue string
	// Version is malarun's version (service.version).
	Version string
	// Traceparent and Tracestate are malarun's own TRACEPARENT and
	// TRACESTATE: the trace of whatever started malarun, if any.
	Traceparent string
	Tracestate  string
}

// Run is the telemetry of one malarun invocation. A nil *Run is telemetry
// turned off: every method does nothing.
type Run struct {
	log    zerolog.Logger
	tp     *sdktrace.TracerProvider // nil: traces off
	mp     *sdkmetric.MeterProvider // nil: metrics off
	tracer trace.Tracer
	inst   instruments

	mu       sync.Mutex
	root     trace.Span
	rootCtx  context.Context
	attempts map[int]trace.Span
	waitFrom time.Time // a usage-limit wait under way since then
	waitType string
	finished bool

	// exportOnce makes a collector that fails one warning for the whole
	// run, whichever signal notices first; sdkOnce does the same for the
	// SDK's own complaints (a bad OTEL_* value it reads itself).
	exportOnce, sdkOnce sync.Once
}

// Start turns telemetry on as s says, or returns nil when s exports
// nothing. What cannot be used is reported through log, once; the run
// goes on either way.
func Start(s Settings, info Info, log zerolog.Logger) *Run {
	if !s.On() {
		return nil
	}
	// Instruments record nothing until metrics are on (traces alone).
	t := &Run{log: log, attempts: map[int]trace.Span{}, inst: newInstruments(nil)}
	// The SDK reports its own errors (an export that failed among them)
	// through OpenTelemetry's process-wide handler, whose default prints
	// to stderr in its own format: they go to malarun's log instead.
	sdkProblem := func(msg string, err error) {
		if _, ok := errors.AsType[*exportError](err); ok {
			return // the exporter warned already
		}
		t.sdkOnce.Do(func() {
			ev := log.Warn().Str("what", msg)
			if err != nil {
				ev = ev.Str("error", err.Error())
			}
			ev.Msg("telemetry: OpenTelemetry reported a problem; the run goes on")
		})
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { sdkProblem("", err) }))
	// The exporters first: the official gRPC ones (grpc_on.go) silence
	// the logger while they read the variables, which can print a header.
	var spans sdktrace.SpanExporter
	var metrics sdkmetric.Exporter
	if s.Traces.On() {
		spans = t.spanExporterFor(s.Traces)
	}
	if s.Metrics.On() {
		metrics = t.metricExporterFor(s.Metrics, s.Temporality)
	}
	otel.SetLogger(logr.New(sdkLog{report: sdkProblem}))
	res := resource.NewSchemaless(resourceAttrs(s, info)...)
	if spans != nil {
		t.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(spans), sdktrace.WithResource(res),
			sdktrace.WithRawSpanLimits(spanLimits()))
	}
	if metrics != nil {
		t.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metrics)), sdkmetric.WithResource(res))
		t.inst = newInstruments(t.mp.Meter(scopeName, metric.WithInstrumentationVersion(info.Version)))
	}
	if t.tp == nil && t.mp == nil {
		return nil
	}
	if t.tp != nil {
		t.tracer = t.tp.Tracer(scopeName, trace.WithInstrumentationVersion(info.Version))
	} else {
		t.tracer = noop.NewTracerProvider().Tracer(scopeName)
	}
	parent := context.Background()
	if info.Traceparent != "" {
		carrier := propagation.MapCarrier{"traceparent": info.Traceparent, "tracestate": info.Tracestate}
		parent = propagation.TraceContext{}.Extract(parent, carrier)
		if !trace.SpanContextFromContext(parent).IsValid() {
			log.Warn().Str("variable", "TRACEPARENT").Msg("telemetry: TRACEPARENT is not a W3C traceparent; the run starts a trace of its own")
		}
	}
	t.rootCtx, t.root = t.tracer.Start(parent, "malarun.run", trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attribute.String("malarun.issue", info.Issue)))
	return t
}

// maxAttributeBytes bounds an attribute's text when
// OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT sets no bound: the few values that
// come from claude (tool names) are short unless something is wrong.
const maxAttributeBytes = 1024

// spanLimits are the SDK's (from the OTEL_SPAN_* variables), with a
// bound on an attribute's length where none is set.
func spanLimits() sdktrace.SpanLimits {
	l := sdktrace.NewSpanLimits()
	if l.AttributeValueLengthLimit < 0 {
		l.AttributeValueLengthLimit = maxAttributeBytes
	}
	return l
}

// spanExporterFor makes the traces' exporter: malarun's own OTLP/HTTP
// one, or the official gRPC one (grpc_on.go) when d says grpc. nil when
// it cannot be made (a certificate it cannot read): traces are off, with
// one warning.
func (t *Run) spanExporterFor(d Destination) sdktrace.SpanExporter {
	failed := t.failedFor(d, "traces")
	if d.Protocol == protocolGRPC {
		exp, err := grpcSpanExporter(d, failed)
		if err != nil {
			t.notExported("traces", err)
			return nil
		}
		return exp
	}
	p, err := newPoster(d, failed)
	if err != nil {
		t.notExported("traces", err)
		return nil
	}
	return &spanExporter{p: p}
}

// metricExporterFor is spanExporterFor's counterpart for the metrics.
func (t *Run) metricExporterFor(d Destination, temporality string) sdkmetric.Exporter {
	failed := t.failedFor(d, "metrics")
	if d.Protocol == protocolGRPC {
		exp, err := grpcMetricExporter(d, temporality, failed)
		if err != nil {
			t.notExported("metrics", err)
			return nil
		}
		return exp
	}
	p, err := newPoster(d, failed)
	if err != nil {
		t.notExported("metrics", err)
		return nil
	}
	return &metricExporter{p: p, temporality: temporality}
}

// failedFor is what the signal's exporter, HTTP or gRPC, calls with each
// export that fails: the run warns once.
func (t *Run) failedFor(d Destination, signal string) func(error) {
	return func(err error) {
		t.exportOnce.Do(func() {
			t.log.Warn().Str("signal", signal).Str("endpoint", shownURL(d.URL)).Str("error", err.Error()).
				Msg("telemetry: the collector did not take an export; the run goes on without it")
		})
	}
}

func (t *Run) notExported(signal string, err error) {
	t.log.Warn().Str("signal", signal).Str("error", err.Error()).Msg("telemetry: not exported")
}

// resourceAttrs: malarun's own, then OTEL_RESOURCE_ATTRIBUTES, then
// service.name (later ones win). Each invocation is its own
// service.instance.id, so that a backend keeps the cumulative series of
// hundreds of short-lived malaruns apart (docs/telemetry.md).
func resourceAttrs(s Settings, info Info) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		attribute.String("service.instance.id", journal.NewUUID()),
		attribute.String("service.version", info.Version),
	}
	for _, kv := range s.Resource {
		attrs = append(attrs, attribute.String(kv.Key, kv.Value))
	}
	return attrs
}

// Trace names the run's span, for the record: a later malarun that
// continues the run links its trace to this one. Zero when no trace is
// exported.
func (t *Run) Trace() record.TraceRef {
	if t == nil || t.tp == nil {
		return record.TraceRef{}
	}
	sc := t.root.SpanContext()
	if !sc.IsSampled() {
		return record.TraceRef{}
	}
	return record.TraceRef{TraceID: sc.TraceID().String(), SpanID: sc.SpanID().String()}
}

// Traceparent starts attempt n's span (when claude is about to start) and
// returns the TRACEPARENT and TRACESTATE that name it, for claude's
// environment: a CLI with its own telemetry on puts its spans under it.
func (t *Run) Traceparent(n int) (traceparent, tracestate string) {
	if t == nil {
		return "", ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	t.endLimitWait(now) // the next claude starts: a usage-limit wait is over
	span := t.attemptSpan(n, now)
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(trace.ContextWithSpan(t.rootCtx, span), carrier)
	return carrier["traceparent"], carrier["tracestate"]
}

// attemptSpan returns attempt n's span, starting it at now if need be.
// t.mu is held.
func (t *Run) attemptSpan(n int, now time.Time) trace.Span {
	if span, ok := t.attempts[n]; ok {
		return span
	}
	_, span := t.tracer.Start(t.rootCtx, "malarun.attempt", trace.WithTimestamp(now),
		trace.WithAttributes(attribute.Int("malarun.attempt.number", n)))
	t.attempts[n] = span
	return span
}

// Shutdown exports what is left, within FlushLimit. An export still
// waiting on a collector then may go on in the background until its own
// timeout; malarun exits without waiting for it.
func (t *Run) Shutdown() {
	if t == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), FlushLimit)
	defer cancel()
	var wg sync.WaitGroup
	if t.tp != nil {
		wg.Go(func() { _ = t.tp.Shutdown(ctx) })
	}
	if t.mp != nil {
		wg.Go(func() { _ = t.mp.Shutdown(ctx) })
	}
	wg.Wait()
}
