package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/malarun/malarun/internal/endpoint"
)

// maxResponseBytes bounds what is read of a collector's answer.
const maxResponseBytes = 64 << 10

// poster sends OTLP/HTTP requests to one destination. It tries each body
// once (a batch that fails is dropped): the exit's flush is bounded, and a
// collector that is down costs a run one warning, never a wait.
type poster struct {
	dest   Destination
	client *http.Client
	// failed is called with each export that fails (the run warns once).
	failed func(error)
}

func newPoster(dest Destination, failed func(error)) (*poster, error) {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	tlsConfig, err := caTLSConfig(dest)
	if err != nil {
		return nil, err
	}
	if tlsConfig != nil {
		transport.TLSClientConfig = tlsConfig
	}
	// Proxies apply as for any HTTP client of the machine (HTTPS_PROXY...).
	// A redirect is not followed: it would carry the headers (an API key)
	// to another host, or from https to http. It fails the export instead.
	client := &http.Client{Transport: transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &poster{dest: dest, client: client, failed: failed}, nil
}

// caTLSConfig is the TLS configuration that verifies dest's collector
// with OTEL_EXPORTER_OTLP_CERTIFICATE's certificates; nil when none is set
// (the machine's roots). The gRPC exporters (grpc_on.go) use it too.
func caTLSConfig(dest Destination) (*tls.Config, error) {
	if dest.CAFile == "" {
		return nil, nil
	}
	pem, err := readCertificate(dest.CAFile)
	if err != nil {
		return nil, fmt.Errorf("reading the collector's certificate: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("the collector's certificate file %s holds no PEM certificate", dest.CAFile)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// post sends one protobuf body within the destination's timeout.
func (p *poster) post(ctx context.Context, body []byte) error {
	err := p.send(ctx, body)
	if err != nil {
		p.failed(err)
		return &exportError{err}
	}
	return nil
}

func (p *poster) send(ctx context.Context, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, p.dest.Timeout)
	defer cancel()
	if p.dest.Gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(body) // a bytes.Buffer does not fail
		_ = zw.Close()
		body = buf.Bytes()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.dest.URL, bytes.NewReader(body))
	if err != nil {
		return errors.New("the endpoint is not a URL HTTP can use")
	}
	for k, v := range p.dest.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if p.dest.Gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := p.client.Do(req)
	if err != nil {
		// url.Error repeats the URL, which may carry a password; the
		// warning names the endpoint without it.
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err
		}
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBytes))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the collector answered HTTP %d", resp.StatusCode)
	}
	return nil
}

// exportError is an export that failed and was warned about: the SDK
// hands it on to OpenTelemetry's error handler, which leaves it alone.
type exportError struct{ err error }

func (e *exportError) Error() string { return e.err.Error() }

func (e *exportError) Unwrap() error { return e.err }

// maxCertificateBytes bounds the CA file read (a bundle is tens of KB).
const maxCertificateBytes = 4 << 20

// readCertificate reads the CA file, which must be a regular file: a FIFO
// or a device would block malarun's start or never end.
func readCertificate(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCertificateBytes+1))
	if err == nil && len(b) > maxCertificateBytes {
		err = fmt.Errorf("%s is larger than %d MiB", path, maxCertificateBytes>>20)
	}
	return b, err
}

// spanExporter is the SDK's span exporter over OTLP/HTTP protobuf.
type spanExporter struct{ p *poster }

func (e *spanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	return e.p.post(ctx, encodeTraces(spans))
}

func (e *spanExporter) Shutdown(context.Context) error { return nil }

// metricExporter is the SDK's metric exporter over OTLP/HTTP protobuf.
type metricExporter struct {
	p           *poster
	temporality string
}

// Temporality follows OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE:
// cumulative for all; delta for counters (observable ones too) and
// histograms; lowmemory for synchronous counters and histograms only.
func (e *metricExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	switch {
	case e.temporality == temporalityDelta && k == sdkmetric.InstrumentKindObservableCounter,
		e.temporality != temporalityCumulative && (k == sdkmetric.InstrumentKindCounter || k == sdkmetric.InstrumentKindHistogram):
		return metricdata.DeltaTemporality
	}
	return metricdata.CumulativeTemporality
}

func (e *metricExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}

func (e *metricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	if len(rm.ScopeMetrics) == 0 {
		return nil
	}
	return e.p.post(ctx, encodeMetrics(rm))
}

func (e *metricExporter) ForceFlush(context.Context) error { return nil }

func (e *metricExporter) Shutdown(context.Context) error { return nil }

// shownURL is an endpoint for a warning, as endpoint shows the API's.
func shownURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(not a URL)"
	}
	return endpoint.ShownURL(u)
}
