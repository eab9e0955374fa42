//go:build otlpgrpc

// The tests of OTLP over gRPC, in a build with it (make test runs them:
// go test -tags otlpgrpc ./internal/telemetry/). The collector is the
// official generated services on an in-process gRPC server.

package telemetry

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/pem"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/record"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel"
	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"

	"github.com/malarun/malarun/internal/testing/otlptest"
)

// grpcCollector serves the OTLP collector's trace and metrics services.
type grpcCollector struct {
	addr string
	// hang: every export waits until its caller gives up (a collector
	// that never answers).
	hang bool
	stop func()

	mu      sync.Mutex
	spans   []*tracepb.ResourceSpans
	metrics []*metricspb.ResourceMetrics
	calls   []grpcCall
}

// grpcCall is one export as it arrived: its method, metadata and
// compression (seen by a stats handler, before the service runs).
type grpcCall struct {
	method      string
	header      metadata.MD
	compression string
}

func startGRPCCollector(t *testing.T, hang bool, opts ...grpc.ServerOption) *grpcCollector {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &grpcCollector{addr: ln.Addr().String(), hang: hang}
	srv := grpc.NewServer(append(opts, grpc.StatsHandler(c))...)
	c.stop = srv.Stop
	colltrace.RegisterTraceServiceServer(srv, traceService{c: c})
	collmetrics.RegisterMetricsServiceServer(srv, metricsService{c: c})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return c
}

// The two services are two types: both have a method named Export.
type traceService struct {
	colltrace.UnimplementedTraceServiceServer
	c *grpcCollector
}

func (s traceService) Export(ctx context.Context, req *colltrace.ExportTraceServiceRequest) (*colltrace.ExportTraceServiceResponse, error) {
	if s.c.hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	s.c.spans = append(s.c.spans, req.ResourceSpans...)
	return &colltrace.ExportTraceServiceResponse{}, nil
}

type metricsService struct {
	collmetrics.UnimplementedMetricsServiceServer
	c *grpcCollector
}

func (s metricsService) Export(ctx context.Context, req *collmetrics.ExportMetricsServiceRequest) (*collmetrics.ExportMetricsServiceResponse, error) {
	if s.c.hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	s.c.metrics = append(s.c.metrics, req.ResourceMetrics...)
	return &collmetrics.ExportMetricsServiceResponse{}, nil
}

// The stats.Handler: it records each call's header.
func (c *grpcCollector) HandleRPC(_ context.Context, s stats.RPCStats) {
	if h, ok := s.(*stats.InHeader); ok {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.calls = append(c.calls, grpcCall{method: h.FullMethod, header: h.Header.Copy(), compression: h.Compression})
	}
}

func (*grpcCollector) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (*grpcCollector) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (*grpcCollector) HandleConn(context.Context, stats.ConnStats)                       {}

func (c *grpcCollector) received() ([]*tracepb.ResourceSpans, []*metricspb.ResourceMetrics, []grpcCall) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.spans), slices.Clone(c.metrics), slices.Clone(c.calls)
}

// grpcSettings reads env, with grpc as the protocol and endpoint as the
// general endpoint, as malarun does.
func grpcSettings(t *testing.T, endpoint string, env map[string]string) Settings {
	t.Helper()
	all := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}
	for k, v := range env {
		all[k] = v
	}
	s, problems := FromEnv(envOf(all))
	if len(problems) > 0 || s.Traces.Protocol != protocolGRPC || s.Metrics.Protocol != protocolGRPC {
		t.Fatalf("settings %+v problems %v", s, problems)
	}
	return s
}

func TestGRPCARunBecomesOneTraceAndItsMetrics(t *testing.T) {
	col := startGRPCCollector(t, false)
	s := grpcSettings(t, "http://"+col.addr, map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=k%3D1",
		"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"})
	var logs bytes.Buffer
	parent := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tel := Start(s, Info{Issue: "issue-7", Version: "v1.2.3", Traceparent: parent}, zerolog.New(&logs))
	if tel == nil {
		t.Fatal("Start returned nil for a gRPC endpoint")
	}
	_, tp2 := aHungThenResumedRun(time.Now(), tel, record.TraceRef{})
	tel.Finish(event.Report{Attempts: 2}, "success", 0)
	tel.Shutdown()
	if logs.Len() > 0 {
		t.Fatalf("log: %s", logs.String())
	}
	rs, rms, calls := col.received()

	spans := spansOf(rs)
	if len(spans) != 3 {
		t.Fatalf("%d spans, want the run and 2 attempts", len(spans))
	}
	root := findSpan(t, spans, "malarun.run", 0)
	if got := hex.EncodeToString(root.TraceId); got != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("the run's trace %s, want TRACEPARENT's", got)
	}
	a1, a2 := findSpan(t, spans, "malarun.attempt", 1), findSpan(t, spans, "malarun.attempt", 2)
	for _, a := range []*tracepb.Span{a1, a2} {
		if !bytes.Equal(a.ParentSpanId, root.SpanId) || !bytes.Equal(a.TraceId, root.TraceId) {
			t.Errorf("attempt span %x is not a child of the run span", a.SpanId)
		}
	}
	if tp2 != "00-"+hex.EncodeToString(a2.TraceId)+"-"+hex.EncodeToString(a2.SpanId)+"-01" {
		t.Errorf("attempt 2's TRACEPARENT %q does not name its span", tp2)
	}
	if evs := eventNames(a1.Events); !slices.Equal(evs, []string{"task_started", "hang_detected", "kill_sent", "tree_gone"}) {
		t.Errorf("attempt 1 events %v", evs)
	}
	wantAttrs(t, "run", root.Attributes, map[string]any{"malarun.issue": "issue-7", "malarun.outcome": "success"})
	wantAttrs(t, "resource", rs[0].Resource.Attributes, map[string]any{"service.name": "malarun", "service.version": "v1.2.3"})

	m := metricsOf(rms)
	wantSum(t, m, MetricRuns, map[string]string{"malarun.outcome": "success"}, 1)
	wantSum(t, m, MetricAttempts, map[string]string{"malarun.attempt.ending": "hang"}, 1)
	wantSum(t, m, MetricHangs, map[string]string{"malarun.hang.phase": "tool"}, 1)
	if h := histogram(t, m, MetricHangSilence); h.GetCount() != 1 || h.GetSum() != 4.2 {
		t.Errorf("hang silence histogram count %d sum %v, want 1 and 4.2", h.GetCount(), h.GetSum())
	}

	var methods []string
	for _, c := range calls {
		methods = append(methods, c.method)
		if got := c.header.Get("x-api-key"); c.compression != "gzip" || !slices.Equal(got, []string{"k=1"}) {
			t.Errorf("%s: compression %q x-api-key %q, want gzip and k=1", c.method, c.compression, got)
		}
	}
	slices.Sort(methods)
	want := []string{"/opentelemetry.proto.collector.metrics.v1.MetricsService/Export", "/opentelemetry.proto.collector.trace.v1.TraceService/Export"}
	if !slices.Equal(methods, want) {
		t.Errorf("calls %v, want one export of each signal", methods)
	}
}

// The official exporters read the OTEL_* variables again when made:
// malarun's settings must win, and the exporters must print nothing.
func TestGRPCMalarunsSettingsWinOverTheExportersOwnReading(t *testing.T) {
	col := startGRPCCollector(t, false)
	for k, v := range map[string]string{
		// Each would change where, how or what is sent, were it applied.
		"OTEL_EXPORTER_OTLP_ENDPOINT":                              "https://127.0.0.1:1",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT":                       "http://127.0.0.1:2",
		"OTEL_EXPORTER_OTLP_INSECURE":                              "false",
		"OTEL_EXPORTER_OTLP_CERTIFICATE":                           writeCA(t), // TLS, even for an http endpoint
		"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE":                    "/nonexistent/cert.pem",
		"OTEL_EXPORTER_OTLP_CLIENT_KEY":                            "/nonexistent/key.pem",
		"OTEL_EXPORTER_OTLP_HEADERS":                               "x-api-key=from-env,x-bad=%zzs3cret",
		"OTEL_EXPORTER_OTLP_COMPRESSION":                           "gzip",
		"OTEL_EXPORTER_OTLP_TIMEOUT":                               "soon",
		"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT":                        "1", // ms
		"OTEL_EXPORTER_OTLP_METRICS_TIMEOUT":                       "1",
		"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE":        "delta",
		"OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION": "base2_exponential_bucket_histogram",
	} {
		t.Setenv(k, v)
	}
	// What OpenTelemetry's logger is given: the exporters' reading of
	// the header above prints its value, s3cret, unless silenced.
	var mu sync.Mutex
	var printed []string
	otel.SetLogger(funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		printed = append(printed, args)
	}, funcr.Options{}))
	t.Cleanup(func() { otel.SetLogger(logr.Discard()) })

	s := grpcSettings(t, "http://"+col.addr, map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=mine"})
	var logs bytes.Buffer
	tel := Start(s, Info{Issue: "i"}, zerolog.New(&logs))
	aHungThenResumedRun(time.Now(), tel, record.TraceRef{})
	tel.Finish(event.Report{}, "success", 0)
	tel.Shutdown()
	if logs.Len() > 0 {
		t.Errorf("log: %s", logs.String())
	}
	mu.Lock()
	if len(printed) > 0 {
		t.Errorf("OpenTelemetry's logger printed %q", printed)
	}
	mu.Unlock()
	rs, rms, calls := col.received()
	if len(spansOf(rs)) != 3 || len(rms) == 0 {
		t.Fatalf("%d spans, %d metric exports: want the run's, sent to malarun's endpoint in plaintext", len(spansOf(rs)), len(rms))
	}
	for _, c := range calls {
		if got := c.header.Get("x-api-key"); c.compression == "gzip" || !slices.Equal(got, []string{"mine"}) || len(c.header.Get("x-bad")) > 0 {
			t.Errorf("%s: compression %q x-api-key %q x-bad %q, want none, malarun's key and no other", c.method, c.compression, got, c.header.Get("x-bad"))
		}
	}
	m := metricsOf(rms)
	wantSum(t, m, MetricHangs, map[string]string{"malarun.hang.phase": "tool"}, 1) // cumulative, as malarun's settings say
	histogram(t, m, MetricHangSilence)                                             // explicit buckets, not exponential
}

func TestGRPCOverTLSWithTheCertificateVariable(t *testing.T) {
	srv := httptest.NewTLSServer(nil) // for its certificate, made for 127.0.0.1
	cert := srv.TLS.Certificates[0]
	srv.Close()
	col := startGRPCCollector(t, false, grpc.Creds(credentials.NewServerTLSFromCert(&cert)))
	s := grpcSettings(t, "https://"+col.addr, map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": writeCA(t)})
	var logs bytes.Buffer
	tel := Start(s, Info{Issue: "i"}, zerolog.New(&logs))
	tel.Finish(event.Report{}, "success", 0)
	tel.Shutdown()
	rs, rms, _ := col.received()
	if logs.Len() > 0 || len(spansOf(rs)) != 1 || len(rms) == 0 {
		t.Errorf("over TLS: %d spans, %d metric exports, log %s", len(spansOf(rs)), len(rms), logs.String())
	}
}

func TestGRPCACertificateThatCannotBeReadTurnsExportOff(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	s := grpcSettings(t, "https://127.0.0.1:4317", map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": notPEM})
	if tel := Start(s, Info{Issue: "i"}, zerolog.New(&logs)); tel != nil {
		t.Error("Start with no usable exporter is not nil")
	}
	if n := strings.Count(logs.String(), "holds no PEM certificate"); n != 2 {
		t.Errorf("log %s: want one warning per signal", logs.String())
	}
}

// writeCA writes the certificate of httptest's TLS servers as a PEM file.
func writeCA(t *testing.T) string {
	t.Helper()
	srv := httptest.NewTLSServer(nil)
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestGRPCACollectorThatNeverAnswersCostsTheFlushBoundAndOneWarning(t *testing.T) {
	for _, c := range []struct {
		name  string
		start func(t *testing.T) (addr string, reached func() bool, stop func())
	}{
		{"gRPC calls never answered", func(t *testing.T) (string, func() bool, func()) {
			col := startGRPCCollector(t, true)
			return col.addr, func() bool { _, _, calls := col.received(); return len(calls) > 0 }, col.stop
		}},
		{"no HTTP/2 handshake", func(t *testing.T) (string, func() bool, func()) {
			silent, err := otlptest.StartSilent()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(silent.Close)
			return strings.TrimPrefix(silent.URL(), "http://"), func() bool { return silent.Accepted() > 0 }, silent.Close
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr, reached, stop := c.start(t)
			var logs bytes.Buffer
			tel := Start(grpcSettings(t, "http://user:pass@"+addr, nil), Info{Issue: "i"}, zerolog.New(&logs))
			runAgainstSilence(t, tel, &logs, reached)
			awaitLeftoverExport(stop)
		})
	}
}
