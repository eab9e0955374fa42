package telemetry

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The protocols of OTEL_EXPORTER_OTLP_PROTOCOL.
const (
	protocolHTTPProtobuf = "http/protobuf"
	protocolGRPC         = "grpc"
	protocolHTTPJSON     = "http/json"
)

// The values of OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE.
const (
	temporalityCumulative = "cumulative"
	temporalityDelta      = "delta"
	temporalityLowMemory  = "lowmemory"
)

// defaultServiceName is service.name when neither OTEL_SERVICE_NAME nor
// OTEL_RESOURCE_ATTRIBUTES names one.
const defaultServiceName = "malarun"

// defaultExportTimeout is OTEL_EXPORTER_OTLP_TIMEOUT's default (the spec's).
const defaultExportTimeout = 10 * time.Second

// Destination is where one signal (traces or metrics) goes.
type Destination struct {
	// URL is the full URL of the signal's endpoint ("" = not exported);
	// for grpc, the collector's as given (scheme, host and port).
	URL string
	// Protocol is http/protobuf or, in a build with gRPC, grpc.
	Protocol string
	// Headers are sent with every export (an API key, say): never logged.
	Headers map[string]string
	Gzip    bool
	Timeout time.Duration
	// CAFile, if set, is the PEM file of the certificates that verify an
	// https collector (OTEL_EXPORTER_OTLP_CERTIFICATE).
	CAFile string
}

// On reports whether the signal is exported.
func (d Destination) On() bool { return d.URL != "" }

// Settings are what the OTEL_* variables ask of malarun's telemetry.
type Settings struct {
	Traces  Destination
	Metrics Destination
	// Temporality is OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE:
	// temporalityCumulative, temporalityDelta or temporalityLowMemory.
	Temporality string
	// Resource holds OTEL_RESOURCE_ATTRIBUTES, then service.name.
	Resource []KeyValue
}

// KeyValue is one resource attribute, as the variables give it.
type KeyValue struct{ Key, Value string }

// On reports whether anything is exported.
func (s Settings) On() bool { return s.Traces.On() || s.Metrics.On() }

// Problem is a variable malarun cannot use as set; the message names the
// variable and never its value when that may be a secret (headers).
type Problem struct {
	Variable string
	Message  string
}

func (p Problem) Error() string { return p.Variable + ": " + p.Message }

// FromEnv reads the OpenTelemetry SDK's variables. Telemetry is off unless
// an OTLP endpoint is set. A variable that cannot be used turns off what
// it applies to and is returned as a problem, for one warning each:
// telemetry never stops a run.
func FromEnv(getenv func(string) string) (Settings, []Problem) {
	var s Settings
	var problems []Problem
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return s, nil
	}
	s.Traces, problems = readDestination(getenv, "TRACES", "traces", problems)
	s.Metrics, problems = readDestination(getenv, "METRICS", "metrics", problems)
	problems = mergeSignals(problems)
	if !s.On() {
		return s, problems
	}
	s.Temporality = temporalityCumulative
	switch v := strings.ToLower(strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE"))); v {
	case "", temporalityCumulative:
	case temporalityDelta, temporalityLowMemory:
		s.Temporality = v
	default:
		problems = append(problems, Problem{"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE",
			fmt.Sprintf("%q is none of cumulative, delta, lowmemory: cumulative is used", v)})
	}
	// The SDK also reads OTEL_RESOURCE_ATTRIBUTES (from the process's
	// environment) and warns about what it cannot parse; here only the
	// service name is needed from it.
	attrs, _ := parseKeyValues(getenv("OTEL_RESOURCE_ATTRIBUTES"))
	name := strings.TrimSpace(getenv("OTEL_SERVICE_NAME"))
	if name == "" {
		name = defaultServiceName
		for _, kv := range attrs {
			if kv.Key == "service.name" && kv.Value != "" {
				name = kv.Value
			}
		}
	}
	s.Resource = append(attrs, KeyValue{"service.name", name})
	return s, problems
}

// useHTTPProtobuf is what a refused protocol's warning tells the user to do.
const useHTTPProtobuf = "point the endpoint at the collector's OTLP/HTTP port (4318 by default) and set the protocol to http/protobuf"

// readDestination reads one signal's variables: the signal's own, else the
// general OTEL_EXPORTER_OTLP_* ones, as the spec orders them.
func readDestination(getenv func(string) string, signal, path string, problems []Problem) (Destination, []Problem) {
	lookup := func(suffix string) (string, string) {
		specific := "OTEL_EXPORTER_OTLP_" + signal + "_" + suffix
		if v := strings.TrimSpace(getenv(specific)); v != "" {
			return v, specific
		}
		general := "OTEL_EXPORTER_OTLP_" + suffix
		return strings.TrimSpace(getenv(general)), general
	}
	exporterVar := "OTEL_" + signal + "_EXPORTER"
	switch v := strings.ToLower(strings.TrimSpace(getenv(exporterVar))); v {
	case "", "otlp":
	case "none":
		return Destination{}, problems
	default:
		return Destination{}, append(problems, Problem{exporterVar, fmt.Sprintf("%q is not an exporter malarun has (otlp, none): %s are not exported", v, path)})
	}
	var d Destination
	protocol, protocolVar := lookup("PROTOCOL")
	endpointVar := "OTEL_EXPORTER_OTLP_" + signal + "_ENDPOINT"
	raw := strings.TrimSpace(getenv(endpointVar))
	if raw == "" {
		endpointVar = "OTEL_EXPORTER_OTLP_ENDPOINT"
		base := strings.TrimSpace(getenv(endpointVar))
		if base == "" {
			return Destination{}, problems
		}
		// For OTLP/HTTP the general endpoint is a base: the signal's path
		// is appended to its path (before a query, if it has one). A gRPC
		// endpoint is used as given (the spec's rule: gRPC names the
		// service in the call, not in the URL).
		raw = base
		if u, err := url.Parse(base); err == nil && protocol != protocolGRPC {
			u.Path, u.RawPath = strings.TrimRight(u.Path, "/")+"/v1/"+path, ""
			raw = u.String()
		}
	}
	if err := checkEndpoint(raw); err != nil {
		return Destination{}, append(problems, Problem{endpointVar, err.Error() + ": " + path + " are not exported"})
	}
	d.URL = raw
	switch protocol {
	case "", protocolHTTPProtobuf:
		d.Protocol = protocolHTTPProtobuf
	case protocolGRPC:
		if !grpcBuiltIn() {
			return Destination{}, append(problems, Problem{protocolVar, fmt.Sprintf(
				"grpc is not built into this malarun, which exports OTLP as http/protobuf (go build -tags otlpgrpc makes one with gRPC): %s; %s are not exported",
				useHTTPProtobuf, path)})
		}
		// The endpoint's scheme says whether the connection is secure:
		// http is plaintext, https is TLS (grpc_on.go).
		d.Protocol = protocolGRPC
	case protocolHTTPJSON:
		return Destination{}, append(problems, Problem{protocolVar, fmt.Sprintf(
			"%s is not built into malarun, which exports OTLP as http/protobuf: %s; %s are not exported",
			protocol, useHTTPProtobuf, path)})
	default:
		return Destination{}, append(problems, Problem{protocolVar, fmt.Sprintf("%q is not an OTLP protocol (http/protobuf, grpc, http/json): %s are not exported", protocol, path)})
	}
	headers, headersVar := lookup("HEADERS")
	h, err := parseKeyValues(headers)
	if err != nil {
		// The value may hold a key: the message names the variable only.
		return Destination{}, append(problems, Problem{headersVar, err.Error() + ": " + path + " are not exported"})
	}
	d.Headers = map[string]string{}
	for _, kv := range h {
		if !validHeaderName(kv.Key) || strings.ContainsAny(kv.Value, "\r\n\x00") {
			return Destination{}, append(problems, Problem{headersVar, "holds a header name or value HTTP cannot carry: " + path + " are not exported"})
		}
		d.Headers[kv.Key] = kv.Value
	}
	switch c, compressionVar := lookup("COMPRESSION"); strings.ToLower(c) {
	case "", "none":
	case "gzip":
		d.Gzip = true
	default:
		problems = append(problems, Problem{compressionVar, fmt.Sprintf("%q is neither gzip nor none: not compressed", c)})
	}
	d.Timeout = defaultExportTimeout
	if t, timeoutVar := lookup("TIMEOUT"); t != "" {
		ms, err := strconv.ParseInt(t, 10, 64)
		if err != nil || ms <= 0 || ms > int64(time.Hour/time.Millisecond) {
			problems = append(problems, Problem{timeoutVar, fmt.Sprintf("%q is not a number of milliseconds between 1 and 3600000: %s is used", t, defaultExportTimeout)})
		} else {
			d.Timeout = time.Duration(ms) * time.Millisecond
		}
	}
	d.CAFile, _ = lookup("CERTIFICATE")
	if key, keyVar := lookup("CLIENT_KEY"); key != "" {
		problems = append(problems, Problem{keyVar, "client certificates are not supported by malarun: " + path + " are sent without one"})
	}
	return d, problems
}

// mergeSignals makes one problem of a general variable that both signals
// could not use: the same words, "traces" for "metrics".
func mergeSignals(problems []Problem) []Problem {
	var out []Problem
	for _, p := range problems {
		if n := len(out); n > 0 && out[n-1].Variable == p.Variable &&
			strings.ReplaceAll(p.Message, "metrics", "traces") == out[n-1].Message && p.Message != out[n-1].Message {
			out[n-1].Message = strings.ReplaceAll(out[n-1].Message, "traces", "traces and metrics")
			continue
		}
		out = append(out, p)
	}
	return out
}

// checkEndpoint accepts an http or https URL with a host. The URL's text
// is never repeated in the message: it may carry a password.
func checkEndpoint(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("is not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("is not an http:// or https:// URL")
	}
	if u.Host == "" || u.Hostname() == "" {
		return fmt.Errorf("has no host")
	}
	return nil
}

// parseKeyValues reads the W3C-Baggage-like lists of the OTEL_* variables
// (key1=value1,key2=value2, values percent-encoded). An empty list is nil;
// on an error the entries before the bad one are returned with it.
func parseKeyValues(s string) ([]KeyValue, error) {
	var out []KeyValue
	for i, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return out, fmt.Errorf("entry %d is not key=value", i+1)
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return out, fmt.Errorf("entry %d (%q) has a bad percent-encoding", i+1, k)
		}
		out = append(out, KeyValue{k, dv})
	}
	return out, nil
}

// validHeaderName reports whether name is an HTTP token.
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"(),/:;<=>?@[\\]{}", c) >= 0 {
			return false
		}
	}
	return true
}
