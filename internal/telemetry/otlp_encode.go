package telemetry

import (
	"math"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
)

// malarun writes OTLP's protobuf messages by hand, field by field, rather
// than linking the official exporters: those pull in the generated OTLP
// types and gRPC, whose package initialisation every malarun would pay
// at start-up, exporting or not (docs/design.md §D22). The field numbers
// are those of opentelemetry-proto v1; the tests decode what is written
// here with the official generated types.

// appendMessage appends field num holding the message that fill writes.
func appendMessage(b []byte, num fieldNum, fill func([]byte) []byte) []byte {
	b = appendTag(b, num, wireBytes)
	return appendLenBytes(b, fill(nil))
}

func appendString(b []byte, num fieldNum, s string) []byte {
	if s == "" {
		return b
	}
	b = appendTag(b, num, wireBytes)
	return appendLenBytes(b, []byte(s))
}

func appendBytes(b []byte, num fieldNum, v []byte) []byte {
	b = appendTag(b, num, wireBytes)
	return appendLenBytes(b, v)
}

func appendVarint(b []byte, num fieldNum, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = appendTag(b, num, wireVarint)
	return appendUvarint(b, v)
}

func appendFixed64(b []byte, num fieldNum, v uint64) []byte {
	b = appendTag(b, num, wireFixed64)
	return appendFixed64Raw(b, v)
}

func appendDouble(b []byte, num fieldNum, v float64) []byte {
	return appendFixed64(b, num, math.Float64bits(v))
}

// appendKeyValues writes attributes as repeated KeyValue field num.
func appendKeyValues(b []byte, num fieldNum, kvs []attribute.KeyValue) []byte {
	for _, kv := range kvs {
		b = appendMessage(b, num, func(m []byte) []byte {
			m = appendString(m, 1, string(kv.Key))
			return appendMessage(m, 2, func(v []byte) []byte { return appendAnyValue(v, kv.Value) })
		})
	}
	return b
}

// appendAnyValue writes the fields of an AnyValue.
func appendAnyValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.BOOL:
		b = appendTag(b, 2, wireVarint)
		return appendUvarint(b, boolVarint(v.AsBool()))
	case attribute.INT64:
		b = appendTag(b, 3, wireVarint)
		return appendUvarint(b, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		return appendDouble(b, 4, v.AsFloat64())
	case attribute.BOOLSLICE:
		return appendArray(b, v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		return appendArray(b, v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		return appendArray(b, v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		return appendArray(b, v.AsStringSlice(), attribute.StringValue)
	case attribute.EMPTY:
		return b // an AnyValue with no value set
	default:
		// A string (an empty one is still a value: field 1 is written).
		// The SDK's newer kinds (bytes, slices and maps of any value),
		// which malarun never records, go as their text.
		b = appendTag(b, 1, wireBytes)
		return appendLenBytes(b, []byte(v.Emit()))
	}
}

// appendArray writes an AnyValue's array_value.
func appendArray[T any](b []byte, items []T, value func(T) attribute.Value) []byte {
	return appendMessage(b, 5, func(a []byte) []byte {
		for _, it := range items {
			a = appendMessage(a, 1, func(v []byte) []byte { return appendAnyValue(v, value(it)) })
		}
		return a
	})
}

// appendResource writes a Resource message's fields.
func appendResource(b []byte, res *resource.Resource) []byte {
	if res == nil {
		return b
	}
	return appendKeyValues(b, 1, res.Attributes())
}

// appendScope writes an InstrumentationScope message's fields.
func appendScope(b []byte, s instrumentation.Scope) []byte {
	b = appendString(b, 1, s.Name)
	b = appendString(b, 2, s.Version)
	return appendKeyValues(b, 3, s.Attributes.ToSlice())
}
