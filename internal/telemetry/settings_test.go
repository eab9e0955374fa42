package telemetry

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func envOf(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestFromEnvIsOffUnlessAnEndpointIsSet(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"nothing":            {},
		"only a service":     {"OTEL_SERVICE_NAME": "x", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
		"sdk disabled":       {"OTEL_SDK_DISABLED": "TRUE", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"},
		"both exporters off": {"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"},
	} {
		s, problems := FromEnv(envOf(env))
		if s.On() || len(problems) != 0 {
			t.Errorf("%s: on=%v problems=%v, want off and none", name, s.On(), problems)
		}
	}
}

func TestFromEnvEndpoints(t *testing.T) {
	cases := []struct {
		name            string
		env             map[string]string
		traces, metrics string
		problemVars     []string
	}{
		{"base gets the signal's path", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"},
			"http://c:4318/v1/traces", "http://c:4318/v1/metrics", nil},
		{"a base with a path and a slash", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c.example/otlp/"},
			"https://c.example/otlp/v1/traces", "https://c.example/otlp/v1/metrics", nil},
		{"a base with a query", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c.example/otlp?tenant=a"},
			"https://c.example/otlp/v1/traces?tenant=a", "https://c.example/otlp/v1/metrics?tenant=a", nil},
		{"a signal's own endpoint is used as given", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t:9/custom"}, "http://t:9/custom", "http://c:4318/v1/metrics", nil},
		{"only metrics", map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://m:4318/v1/metrics"}, "", "http://m:4318/v1/metrics", nil},
		{"traces turned off", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"},
			"", "http://c:4318/v1/metrics", nil},
		{"an exporter malarun lacks", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_METRICS_EXPORTER": "prometheus"},
			"http://c:4318/v1/traces", "", []string{"OTEL_METRICS_EXPORTER"}},
		{"not a URL", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "c:4318"}, "", "",
			[]string{"OTEL_EXPORTER_OTLP_ENDPOINT"}},
		{"no host", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http:///v1/traces"}, "", "",
			[]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"}},
		{"grpc is not built in", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			"", "", []string{"OTEL_EXPORTER_OTLP_PROTOCOL"}},
		{"a signal's own protocol wins", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
			"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, "http://c:4318/v1/traces", "", []string{"OTEL_EXPORTER_OTLP_PROTOCOL"}},
		{"http/json is not built in", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/json"},
			"http://c:4318/v1/traces", "", []string{"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"}},
		{"an unknown protocol", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "udp"},
			"http://c:4318/v1/traces", "", []string{"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"}},
	}
	for _, c := range cases {
		// A case that asks for grpc expects the default build's refusal;
		// TestFromEnvGRPC has the build with gRPC's.
		if grpcBuiltIn() && slices.Contains(slices.Collect(maps.Values(c.env)), protocolGRPC) {
			continue
		}
		s, problems := FromEnv(envOf(c.env))
		if s.Traces.URL != c.traces || s.Metrics.URL != c.metrics {
			t.Errorf("%s: traces %q metrics %q, want %q %q", c.name, s.Traces.URL, s.Metrics.URL, c.traces, c.metrics)
		}
		var vars []string
		for _, p := range problems {
			vars = append(vars, p.Variable)
		}
		if !reflect.DeepEqual(vars, c.problemVars) {
			t.Errorf("%s: problems %v, want variables %v", c.name, problems, c.problemVars)
		}
	}
}

func TestFromEnvHeadersAreParsedAndNeverRepeated(t *testing.T) {
	s, problems := FromEnv(envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
		"OTEL_EXPORTER_OTLP_HEADERS":        "Authorization=Bearer%20s3cret, x-team = a%2Cb",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-only-traces=1"}))
	if len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	if want := map[string]string{"x-only-traces": "1"}; !reflect.DeepEqual(s.Traces.Headers, want) {
		t.Errorf("traces headers %v, want the signal's own %v", s.Traces.Headers, want)
	}
	if want := map[string]string{"Authorization": "Bearer s3cret", "x-team": "a,b"}; !reflect.DeepEqual(s.Metrics.Headers, want) {
		t.Errorf("metrics headers %v, want %v", s.Metrics.Headers, want)
	}
	for _, bad := range []string{"Authorization", "Authorization=Bearer%zzs3cret", "Bad Name=s3cret", "a=s3cret%0D%0AX-Evil: 1"} {
		s, problems := FromEnv(envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_HEADERS": bad}))
		if s.On() || len(problems) != 1 || !strings.Contains(problems[0].Message, "traces and metrics are not exported") {
			t.Errorf("headers %q: on=%v problems=%v, want both signals off and one problem saying so", bad, s.On(), problems)
		}
		for _, p := range problems {
			if p.Variable != "OTEL_EXPORTER_OTLP_HEADERS" || strings.Contains(p.Error(), "s3cret") {
				t.Errorf("headers %q: problem %q must name the variable and not repeat its value", bad, p.Error())
			}
		}
	}
}

func TestFromEnvTheRest(t *testing.T) {
	s, problems := FromEnv(envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
		"OTEL_EXPORTER_OTLP_TIMEOUT": "1500", "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT": "0",
		"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip", "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE": "Delta",
		"OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=ci,service.name=from-attrs,k8s.job.name=fix%20it"}))
	if s.Traces.Timeout != 1500*time.Millisecond || s.Metrics.Timeout != defaultExportTimeout {
		t.Errorf("timeouts %s %s, want 1.5s and the default for a bad value", s.Traces.Timeout, s.Metrics.Timeout)
	}
	if len(problems) != 1 || problems[0].Variable != "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT" {
		t.Errorf("problems %v, want only the metrics timeout", problems)
	}
	if !s.Traces.Gzip || !s.Metrics.Gzip || s.Temporality != temporalityDelta {
		t.Errorf("gzip %v/%v temporality %q, want gzip and delta", s.Traces.Gzip, s.Metrics.Gzip, s.Temporality)
	}
	want := []KeyValue{{"deployment.environment.name", "ci"}, {"service.name", "from-attrs"}, {"k8s.job.name", "fix it"}, {"service.name", "from-attrs"}}
	if !reflect.DeepEqual(s.Resource, want) {
		t.Errorf("resource %v, want %v", s.Resource, want)
	}
	s, _ = FromEnv(envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SERVICE_NAME": "fleet",
		"OTEL_RESOURCE_ATTRIBUTES": "service.name=other"}))
	if last := s.Resource[len(s.Resource)-1]; last != (KeyValue{"service.name", "fleet"}) {
		t.Errorf("OTEL_SERVICE_NAME must win over OTEL_RESOURCE_ATTRIBUTES: %v", s.Resource)
	}
	s, _ = FromEnv(envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}))
	if !reflect.DeepEqual(s.Resource, []KeyValue{{"service.name", defaultServiceName}}) || s.Temporality != temporalityCumulative || s.Traces.Gzip {
		t.Errorf("defaults: %+v", s)
	}
}

// TestFromEnvGRPC runs in both builds: the default one refuses grpc and
// says how to get it; a build with -tags otlpgrpc takes the endpoints as
// given (no /v1/... appended, per the spec), the general one and a
// signal's own alike.
func TestFromEnvGRPC(t *testing.T) {
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c.example:4317/", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
		"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://m:4317", "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20k",
		"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip", "OTEL_EXPORTER_OTLP_TIMEOUT": "700", "OTEL_EXPORTER_OTLP_CERTIFICATE": "/etc/ca.pem"}
	s, problems := FromEnv(envOf(env))
	if !grpcBuiltIn() {
		if s.On() || len(problems) != 1 || !strings.Contains(problems[0].Message, "traces and metrics are not exported") {
			t.Fatalf("without gRPC: on=%v problems=%v, want both signals off and one problem saying so", s.On(), problems)
		}
		for _, p := range problems {
			for _, want := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL: grpc is not built into this malarun", "go build -tags otlpgrpc", "4318", "http/protobuf"} {
				if !strings.Contains(p.Error(), want) {
					t.Errorf("problem %q does not say %q", p.Error(), want)
				}
			}
		}
		return
	}
	if len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	want := Destination{URL: "https://c.example:4317/", Protocol: protocolGRPC, Headers: map[string]string{"authorization": "Bearer k"},
		Gzip: true, Timeout: 700 * time.Millisecond, CAFile: "/etc/ca.pem"}
	if !reflect.DeepEqual(s.Traces, want) {
		t.Errorf("traces %+v, want %+v", s.Traces, want)
	}
	want.URL = "http://m:4317"
	if !reflect.DeepEqual(s.Metrics, want) {
		t.Errorf("metrics %+v, want %+v", s.Metrics, want)
	}
	// A signal's own protocol still wins over the general one.
	env["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] = "http/protobuf"
	if s, _ := FromEnv(envOf(env)); s.Traces.URL != "https://c.example:4317/v1/traces" || s.Traces.Protocol != protocolHTTPProtobuf {
		t.Errorf("traces %q over %s, want the base with its path over http/protobuf", s.Traces.URL, s.Traces.Protocol)
	}
}
