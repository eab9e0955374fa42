package telemetry

import (
	"math"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// encodeMetrics writes an ExportMetricsServiceRequest holding rm. Kinds of
// data malarun does not record (exponential histograms, summaries) are
// left out.
func encodeMetrics(rm *metricdata.ResourceMetrics) []byte {
	return appendMessage(nil, 1, func(m []byte) []byte { // ResourceMetrics
		m = appendMessage(m, 1, func(r []byte) []byte { return appendResource(r, rm.Resource) })
		for _, sm := range rm.ScopeMetrics {
			m = appendMessage(m, 2, func(s []byte) []byte { // ScopeMetrics
				s = appendMessage(s, 1, func(sc []byte) []byte { return appendScope(sc, sm.Scope) })
				for _, mt := range sm.Metrics {
					if data := metricData(mt.Data); data != nil {
						s = appendMessage(s, 2, func(b []byte) []byte {
							b = appendString(b, 1, mt.Name)
							b = appendString(b, 2, mt.Description)
							b = appendString(b, 3, mt.Unit)
							return data(b)
						})
					}
				}
				return s
			})
		}
		return m
	})
}

// metricData returns the writer of a Metric's data field, nil for a kind
// malarun does not record.
func metricData(a metricdata.Aggregation) func([]byte) []byte {
	switch d := a.(type) {
	case metricdata.Sum[int64]:
		return func(b []byte) []byte { return appendSum(b, d.DataPoints, d.Temporality, d.IsMonotonic, appendIntPoint) }
	case metricdata.Sum[float64]:
		return func(b []byte) []byte {
			return appendSum(b, d.DataPoints, d.Temporality, d.IsMonotonic, appendDoublePoint)
		}
	case metricdata.Gauge[int64]:
		return func(b []byte) []byte { return appendGauge(b, d.DataPoints, appendIntPoint) }
	case metricdata.Gauge[float64]:
		return func(b []byte) []byte { return appendGauge(b, d.DataPoints, appendDoublePoint) }
	case metricdata.Histogram[int64]:
		return func(b []byte) []byte { return appendHistogram(b, d) }
	case metricdata.Histogram[float64]:
		return func(b []byte) []byte { return appendHistogram(b, d) }
	}
	return nil
}

func appendSum[N int64 | float64](b []byte, points []metricdata.DataPoint[N], t metricdata.Temporality, monotonic bool,
	value func([]byte, N) []byte) []byte {
	return appendMessage(b, 7, func(m []byte) []byte {
		m = appendNumberPoints(m, points, value)
		m = appendVarint(m, 2, temporality(t))
		if monotonic {
			m = appendVarint(m, 3, 1)
		}
		return m
	})
}

func appendGauge[N int64 | float64](b []byte, points []metricdata.DataPoint[N], value func([]byte, N) []byte) []byte {
	return appendMessage(b, 5, func(m []byte) []byte { return appendNumberPoints(m, points, value) })
}

func appendNumberPoints[N int64 | float64](b []byte, points []metricdata.DataPoint[N], value func([]byte, N) []byte) []byte {
	for _, p := range points {
		b = appendMessage(b, 1, func(m []byte) []byte {
			m = appendFixed64(m, 2, unixNano(p.StartTime))
			m = appendFixed64(m, 3, unixNano(p.Time))
			m = value(m, p.Value)
			return appendKeyValues(m, 7, p.Attributes.ToSlice())
		})
	}
	return b
}

func appendIntPoint(b []byte, v int64) []byte { return appendFixed64(b, 6, uint64(v)) }

func appendDoublePoint(b []byte, v float64) []byte { return appendDouble(b, 4, v) }

func appendHistogram[N int64 | float64](b []byte, h metricdata.Histogram[N]) []byte {
	return appendMessage(b, 9, func(m []byte) []byte {
		for _, p := range h.DataPoints {
			m = appendMessage(m, 1, func(dp []byte) []byte {
				dp = appendFixed64(dp, 2, unixNano(p.StartTime))
				dp = appendFixed64(dp, 3, unixNano(p.Time))
				dp = appendFixed64(dp, 4, p.Count)
				dp = appendDouble(dp, 5, float64(p.Sum))
				dp = appendPacked(dp, 6, p.BucketCounts, func(v uint64) uint64 { return v })
				dp = appendPacked(dp, 7, p.Bounds, math.Float64bits)
				dp = appendKeyValues(dp, 9, p.Attributes.ToSlice())
				if v, ok := p.Min.Value(); ok {
					dp = appendDouble(dp, 11, float64(v))
				}
				if v, ok := p.Max.Value(); ok {
					dp = appendDouble(dp, 12, float64(v))
				}
				return dp
			})
		}
		return appendVarint(m, 2, temporality(h.Temporality))
	})
}

// appendPacked writes a packed repeated fixed64 (or double) field.
func appendPacked[T any](b []byte, num fieldNum, vs []T, bits func(T) uint64) []byte {
	if len(vs) == 0 {
		return b
	}
	b = appendTag(b, num, wireBytes)
	b = appendUvarint(b, uint64(8*len(vs)))
	for _, v := range vs {
		b = appendFixed64Raw(b, bits(v))
	}
	return b
}

// temporality maps the SDK's temporality to OTLP's, which numbers them
// differently (OTLP: delta 1, cumulative 2).
func temporality(t metricdata.Temporality) uint64 {
	switch t {
	case metricdata.DeltaTemporality:
		return 1
	case metricdata.CumulativeTemporality:
		return 2
	}
	return 0
}
