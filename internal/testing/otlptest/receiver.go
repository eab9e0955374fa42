// Package otlptest is an OTLP/HTTP receiver for tests: it decodes what it
// is sent with the official generated OTLP types (go.opentelemetry.io/proto/otlp),
// so a test checks malarun's hand-written encoding against the reference
// one. It takes bodies with or without a length (chunked, as claude
// 2.1.197 sends them) and gzip-compressed ones. Only tests import it.
package otlptest

import (
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"

	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Request is one export as received.
type Request struct {
	Path        string
	ContentType string
	Encoding    string
	Chunked     bool
	Header      http.Header
}

// Receiver collects what is exported to it.
type Receiver struct {
	srv *httptest.Server

	mu       sync.Mutex
	requests []Request
	spans    []*tracepb.ResourceSpans
	metrics  []*metricspb.ResourceMetrics
	errs     []string
	got      chan struct{}
}

// Start runs a receiver on a loopback port; Close stops it.
func Start() *Receiver {
	r := &Receiver{got: make(chan struct{}, 1)}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

// URL is the receiver's base URL (OTEL_EXPORTER_OTLP_ENDPOINT).
func (r *Receiver) URL() string { return r.srv.URL }

// Close stops the receiver.
func (r *Receiver) Close() { r.srv.Close() }

// Received is signalled (without blocking the sender) after each export.
func (r *Receiver) Received() <-chan struct{} { return r.got }

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			r.fail(w, "gzip: "+err.Error())
			return
		}
		body = zr
	}
	data, err := io.ReadAll(body)
	if err != nil {
		r.fail(w, "read: "+err.Error())
		return
	}
	rq := Request{Path: req.URL.Path, ContentType: req.Header.Get("Content-Type"), Encoding: req.Header.Get("Content-Encoding"),
		Chunked: len(req.TransferEncoding) > 0 && req.TransferEncoding[0] == "chunked", Header: req.Header.Clone()}
	json := req.Header.Get("Content-Type") == "application/json"
	unmarshal := func(m proto.Message) error {
		if json {
			return unmarshalJSON(data, m)
		}
		if err := proto.Unmarshal(data, m); err != nil {
			return err
		}
		if bad := unknownFields(m.ProtoReflect()); bad != "" {
			return fmt.Errorf("%s holds fields it does not define", bad)
		}
		return nil
	}
	switch req.URL.Path {
	case "/v1/traces":
		var m colltrace.ExportTraceServiceRequest
		if err := unmarshal(&m); err != nil {
			r.fail(w, "traces: "+err.Error())
			return
		}
		r.mu.Lock()
		r.spans = append(r.spans, m.ResourceSpans...)
		r.mu.Unlock()
		r.answer(w, json, &colltrace.ExportTraceServiceResponse{})
	case "/v1/metrics":
		var m collmetrics.ExportMetricsServiceRequest
		if err := unmarshal(&m); err != nil {
			r.fail(w, "metrics: "+err.Error())
			return
		}
		r.mu.Lock()
		r.metrics = append(r.metrics, m.ResourceMetrics...)
		r.mu.Unlock()
		r.answer(w, json, &collmetrics.ExportMetricsServiceResponse{})
	default:
		// Logs and anything else are taken and dropped.
		w.WriteHeader(http.StatusOK)
	}
	r.mu.Lock()
	r.requests = append(r.requests, rq)
	r.mu.Unlock()
	select {
	case r.got <- struct{}{}:
	default:
	}
}

func (r *Receiver) answer(w http.ResponseWriter, json bool, m proto.Message) {
	if json {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
		return
	}
	b, _ := proto.Marshal(m)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

func (r *Receiver) fail(w http.ResponseWriter, msg string) {
	r.mu.Lock()
	r.errs = append(r.errs, msg)
	r.mu.Unlock()
	http.Error(w, msg, http.StatusBadRequest)
}

// Requests are the exports received so far.
func (r *Receiver) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.requests...)
}

// Errors are the bodies the receiver could not decode.
func (r *Receiver) Errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

// ResourceSpans are the traces received so far.
func (r *Receiver) ResourceSpans() []*tracepb.ResourceSpans {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tracepb.ResourceSpans(nil), r.spans...)
}

// ResourceMetrics are the metrics received so far.
func (r *Receiver) ResourceMetrics() []*metricspb.ResourceMetrics {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*metricspb.ResourceMetrics(nil), r.metrics...)
}

// Silent is a collector that accepts connections and never answers: a
// test of what a run pays for one. Close ends it.
type Silent struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	done  chan struct{}
}

// StartSilent listens on a loopback port.
func StartSilent() (*Silent, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Silent{ln: ln, done: make(chan struct{})}
	go s.accept()
	return s, nil
}

// URL is the silent collector's base URL.
func (s *Silent) URL() string { return "http://" + s.ln.Addr().String() }

// Accepted is how many connections it took.
func (s *Silent) Accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

func (s *Silent) accept() {
	defer close(s.done)
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
	}
}

// Close stops listening and drops every connection.
func (s *Silent) Close() {
	_ = s.ln.Close()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		_ = c.Close()
	}
}

func unmarshalJSON(data []byte, m proto.Message) error {
	return protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(data, m)
}

// unknownFields names the first message in m (or m itself) that holds
// bytes its type does not define: proto.Unmarshal keeps a field with a
// wrong number or wire type as unknown rather than failing, and a
// hand-written encoder must not be let off that way.
func unknownFields(m protoreflect.Message) string {
	if len(m.GetUnknown()) > 0 {
		return string(m.Descriptor().FullName())
	}
	bad := ""
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := 0; i < v.List().Len() && bad == ""; i++ {
				bad = unknownFields(v.List().Get(i).Message())
			}
		case fd.Message() != nil && !fd.IsMap():
			bad = unknownFields(v.Message())
		}
		return bad == ""
	})
	return bad
}
