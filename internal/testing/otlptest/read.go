package otlptest

import (
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// Span is a received span with the service that sent it.
type Span struct {
	*tracepb.Span
	Service string
}

// Spans are every span received, in order.
func (r *Receiver) Spans() []Span {
	var out []Span
	for _, rs := range r.ResourceSpans() {
		service, _ := Attrs(rs.GetResource().GetAttributes())["service.name"].(string)
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				out = append(out, Span{Span: s, Service: service})
			}
		}
	}
	return out
}

// Metrics are the last value received of each metric a service sent, by name.
func (r *Receiver) Metrics(service string) map[string]*metricspb.Metric {
	out := map[string]*metricspb.Metric{}
	for _, rm := range r.ResourceMetrics() {
		if s, _ := Attrs(rm.GetResource().GetAttributes())["service.name"].(string); s != service {
			continue
		}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				out[m.Name] = m
			}
		}
	}
	return out
}

// Attrs are attributes as Go values: string, int64, float64, bool, or
// the ArrayValue.
func Attrs(kvs []*commonpb.KeyValue) map[string]any {
	out := map[string]any{}
	for _, kv := range kvs {
		switch v := kv.GetValue().GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			out[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			out[kv.Key] = v.IntValue
		case *commonpb.AnyValue_DoubleValue:
			out[kv.Key] = v.DoubleValue
		case *commonpb.AnyValue_BoolValue:
			out[kv.Key] = v.BoolValue
		case *commonpb.AnyValue_ArrayValue:
			out[kv.Key] = v.ArrayValue
		}
	}
	return out
}

// SumValue is the value of the point of a sum whose attributes are
// exactly labels (ok false: none).
func SumValue(m *metricspb.Metric, labels map[string]string) (float64, bool) {
	for _, p := range m.GetSum().GetDataPoints() {
		got := Attrs(p.Attributes)
		match := len(got) == len(labels)
		for k, v := range labels {
			match = match && got[k] == v
		}
		if !match {
			continue
		}
		if _, isInt := p.Value.(*metricspb.NumberDataPoint_AsInt); isInt {
			return float64(p.GetAsInt()), true
		}
		return p.GetAsDouble(), true
	}
	return 0, false
}
