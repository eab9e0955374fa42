package telemetry

import (
	"math"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	"google.golang.org/protobuf/encoding/protowire"
)

// malarun writes OTLP's protobuf messages by hand, field by field, rather
// than linking the official exporters: those pull in the generated OTLP
// types and gRPC, whose package initialisation every malarun would pay
// at start-up, exporting or not (docs/design.md §D22). The field numbers
// are those of opentelemetry-proto v1; the tests decode what is written
// here with the official generated types.

// appendMessage appends field num holding the message that fill writes.
func appendMessage(b []byte, num protowire.Number, fill func([]byte) []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, fill(nil))
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendFixed64(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

func appendDouble(b []byte, num protowire.Number, v float64) []byte {
	return appendFixed64(b, num, math.Float64bits(v))
}

// appendKeyValues writes attributes as repeated KeyValue field num.
func appendKeyValues(b []byte, num protowire.Number, kvs []attribute.KeyValue) []byte {
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
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		return protowire.AppendVarint(b, protowire.EncodeBool(v.AsBool()))
	case attribute.INT64:
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		return protowire.AppendVarint(b, uint64(v.AsInt64()))
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
	default:
		// A string (an empty one is still a value: field 1 is written).
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		return protowire.AppendString(b, v.Emit())
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
