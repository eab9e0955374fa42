//go:build !otlpgrpc

// The default build has no OTLP/gRPC: the official gRPC exporters' package
// initialisation (gRPC and the generated protobuf types) would cost every
// malarun start about 6 ms of CPU, whether telemetry is on or not, and the
// binary 5 MB (a release build; measured, docs/telemetry.md). FromEnv
// refuses OTEL_EXPORTER_OTLP_PROTOCOL=grpc here, saying that
// `go build -tags otlpgrpc` adds it (grpc_on.go).

package telemetry

import (
	"errors"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// grpcBuiltIn reports whether this build exports OTLP over gRPC.
func grpcBuiltIn() bool { return false }

// errNoGRPC is never seen: FromEnv gives no grpc destination here. The
// two functions below only mirror grpc_on.go's, for Start to compile.
func errNoGRPC() error { return errors.New("grpc is not built in (go build -tags otlpgrpc)") }

func grpcSpanExporter(Destination, func(error)) (sdktrace.SpanExporter, error) {
	return nil, errNoGRPC()
}

func grpcMetricExporter(Destination, string, func(error)) (sdkmetric.Exporter, error) {
	return nil, errNoGRPC()
}
