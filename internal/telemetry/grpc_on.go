//go:build otlpgrpc

// OTLP over gRPC (OTEL_EXPORTER_OTLP_PROTOCOL=grpc), built only with
// `go build -tags otlpgrpc`. It uses the official exporters, which link
// gRPC and the generated protobuf types: their package initialisation
// costs every malarun start about 6 ms of CPU, whether telemetry is on or
// not, and the binary 5 MB (measured, docs/telemetry.md), so the default
// build leaves them out (grpc_off.go) and writes OTLP/HTTP itself
// (exporter.go).
//
// The official exporters read the OTEL_EXPORTER_OTLP_* variables again
// when made. Every setting malarun parsed is given as an option, which
// wins over what they read, so that malarun's reading (and its warnings)
// is what applies: the endpoint, the credentials (an http endpoint is
// plaintext even when a certificate variable is set; no client
// certificate), the headers, the timeout, the compression, no retry, and
// for metrics the temporality and the aggregation.

package telemetry

import (
	"context"
	"crypto/tls"
	"strings"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
)

// grpcBuiltIn reports whether this build exports OTLP over gRPC.
func grpcBuiltIn() bool { return true }

// grpcSpanExporter is the official OTLP/gRPC span exporter for d; each
// export that fails is reported to failed, as the HTTP poster does.
func grpcSpanExporter(d Destination, failed func(error)) (sdktrace.SpanExporter, error) {
	creds, err := grpcCredentials(d)
	if err != nil {
		return nil, err
	}
	quietEnvReading()
	exp, err := otlptracegrpc.New(context.Background(),
		otlptracegrpc.WithEndpointURL(d.URL),
		otlptracegrpc.WithTLSCredentials(creds),
		otlptracegrpc.WithHeaders(d.Headers),
		otlptracegrpc.WithTimeout(d.Timeout),
		grpcCompression(d, otlptracegrpc.WithCompressor, otlptracegrpc.WithDialOption),
		// Each export is tried once, as over HTTP: the exporter's default
		// retries for a minute, longer than the exit's flush may take.
		otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}))
	if err != nil {
		return nil, err
	}
	return &reportingSpanExporter{SpanExporter: exp, failed: failed}, nil
}

// grpcMetricExporter is grpcSpanExporter's counterpart for the metrics.
func grpcMetricExporter(d Destination, temporality string, failed func(error)) (sdkmetric.Exporter, error) {
	creds, err := grpcCredentials(d)
	if err != nil {
		return nil, err
	}
	quietEnvReading()
	exp, err := otlpmetricgrpc.New(context.Background(),
		otlpmetricgrpc.WithEndpointURL(d.URL),
		otlpmetricgrpc.WithTLSCredentials(creds),
		otlpmetricgrpc.WithHeaders(d.Headers),
		otlpmetricgrpc.WithTimeout(d.Timeout),
		grpcCompression(d, otlpmetricgrpc.WithCompressor, otlpmetricgrpc.WithDialOption),
		otlpmetricgrpc.WithRetry(otlpmetricgrpc.RetryConfig{Enabled: false}),
		// The HTTP exporter's choices (exporter.go), rather than what
		// ..._METRICS_TEMPORALITY_PREFERENCE and
		// ..._METRICS_DEFAULT_HISTOGRAM_AGGREGATION would make of them.
		otlpmetricgrpc.WithTemporalitySelector((&metricExporter{temporality: temporality}).Temporality),
		otlpmetricgrpc.WithAggregationSelector(sdkmetric.DefaultAggregationSelector))
	if err != nil {
		return nil, err
	}
	return &reportingMetricExporter{Exporter: exp, failed: failed}, nil
}

// grpcCredentials: plaintext for an http endpoint, TLS for https (with
// OTEL_EXPORTER_OTLP_CERTIFICATE's certificates when set). Always given,
// so that the exporter's own reading of the certificate variables, which
// would turn TLS on for an http endpoint, does not apply.
func grpcCredentials(d Destination) (credentials.TransportCredentials, error) {
	if !strings.HasPrefix(d.URL, "https:") {
		return insecure.NewCredentials(), nil
	}
	cfg, err := caTLSConfig(d)
	if err != nil {
		return nil, err
	}
	if cfg == nil {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return credentials.NewTLS(cfg), nil
}

// grpcCompression is gzip, or none said explicitly: WithCompressor knows
// only gzip (another name is reported through otel.Handle, which would be
// the run's one warning), so none is gRPC's identity compressor as a call
// option, which the exporter applies after its own.
func grpcCompression[O any](d Destination, compressor func(string) O, dial func(...grpc.DialOption) O) O {
	if d.Gzip {
		return compressor("gzip")
	}
	return dial(grpc.WithDefaultCallOptions(grpc.UseCompressor(encoding.Identity)))
}

// quietEnvReading silences OpenTelemetry's logger (the process's; stderr
// by default). The exporters' own reading of the variables prints there
// what it cannot parse, a header with its value among them, which may be
// a key; malarun has read and warned about those variables itself
// (FromEnv). The SDK's errors still reach the run's log through otel's
// error handler (Start).
func quietEnvReading() { otel.SetLogger(logr.Discard()) }

// reportingSpanExporter reports each failed export to failed (the run's
// one warning), as the HTTP poster does: the SDK reports some failures
// itself (otel.Handle), but not all (the metrics' last export, at exit,
// only returns its error from Shutdown, which malarun does not read).
type reportingSpanExporter struct {
	sdktrace.SpanExporter
	failed func(error)
}

func (e *reportingSpanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.SpanExporter.ExportSpans(ctx, spans)
	if err != nil {
		e.failed(err)
		return &exportError{err} // warned: the SDK's handler leaves it
	}
	return nil
}

// reportingMetricExporter is reportingSpanExporter for the metrics.
type reportingMetricExporter struct {
	sdkmetric.Exporter
	failed func(error)
}

func (e *reportingMetricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	err := e.Exporter.Export(ctx, rm)
	if err != nil {
		e.failed(err)
		return &exportError{err} // warned: the SDK's handler leaves it
	}
	return nil
}
