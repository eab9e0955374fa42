package telemetry

import (
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// encodeTraces writes an ExportTraceServiceRequest holding spans, grouped
// by resource and then by instrumentation scope, in the order first seen.
func encodeTraces(spans []sdktrace.ReadOnlySpan) []byte {
	type scoped struct {
		scope instrumentation.Scope
		spans []sdktrace.ReadOnlySpan
	}
	type resourced struct {
		res    *resource.Resource
		scopes []*scoped
	}
	var groups []*resourced
	for _, s := range spans {
		var rg *resourced
		for _, g := range groups {
			if g.res == s.Resource() {
				rg = g
			}
		}
		if rg == nil {
			rg = &resourced{res: s.Resource()}
			groups = append(groups, rg)
		}
		var sg *scoped
		for _, g := range rg.scopes {
			if g.scope == s.InstrumentationScope() {
				sg = g
			}
		}
		if sg == nil {
			sg = &scoped{scope: s.InstrumentationScope()}
			rg.scopes = append(rg.scopes, sg)
		}
		sg.spans = append(sg.spans, s)
	}
	var b []byte
	for _, rg := range groups {
		b = appendMessage(b, 1, func(m []byte) []byte { // ResourceSpans
			m = appendMessage(m, 1, func(r []byte) []byte { return appendResource(r, rg.res) })
			for _, sg := range rg.scopes {
				m = appendMessage(m, 2, func(ss []byte) []byte { // ScopeSpans
					ss = appendMessage(ss, 1, func(sc []byte) []byte { return appendScope(sc, sg.scope) })
					for _, s := range sg.spans {
						ss = appendMessage(ss, 2, func(sp []byte) []byte { return appendSpan(sp, s) })
					}
					return ss
				})
			}
			return m
		})
	}
	return b
}

// OTLP's Span.flags: the W3C trace flags, and whether the parent is
// known to be remote.
const (
	flagsHasIsRemote = 0x100
	flagsIsRemote    = 0x200
)

func appendSpan(b []byte, s sdktrace.ReadOnlySpan) []byte {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytes(b, 1, tid[:])
	b = appendBytes(b, 2, sid[:])
	b = appendString(b, 3, sc.TraceState().String())
	if p := s.Parent(); p.IsValid() {
		psid := p.SpanID()
		b = appendBytes(b, 4, psid[:])
	}
	b = appendString(b, 5, s.Name())
	b = appendVarint(b, 6, uint64(s.SpanKind()))
	b = appendFixed64(b, 7, unixNano(s.StartTime()))
	b = appendFixed64(b, 8, unixNano(s.EndTime()))
	b = appendKeyValues(b, 9, s.Attributes())
	b = appendVarint(b, 10, uint64(max(s.DroppedAttributes(), 0)))
	for _, ev := range s.Events() {
		b = appendMessage(b, 11, func(e []byte) []byte {
			e = appendFixed64(e, 1, unixNano(ev.Time))
			e = appendString(e, 2, ev.Name)
			e = appendKeyValues(e, 3, ev.Attributes)
			return appendVarint(e, 4, uint64(max(ev.DroppedAttributeCount, 0)))
		})
	}
	b = appendVarint(b, 12, uint64(max(s.DroppedEvents(), 0)))
	for _, l := range s.Links() {
		b = appendMessage(b, 13, func(m []byte) []byte {
			ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
			m = appendBytes(m, 1, ltid[:])
			m = appendBytes(m, 2, lsid[:])
			m = appendString(m, 3, l.SpanContext.TraceState().String())
			m = appendKeyValues(m, 4, l.Attributes)
			m = appendVarint(m, 5, uint64(max(l.DroppedAttributeCount, 0)))
			return appendFlags(m, 6, l.SpanContext.TraceFlags(), l.SpanContext)
		})
	}
	b = appendVarint(b, 14, uint64(max(s.DroppedLinks(), 0)))
	if st := s.Status(); st.Code != codes.Unset {
		b = appendMessage(b, 15, func(m []byte) []byte {
			m = appendString(m, 2, st.Description)
			return appendVarint(m, 3, statusCode(st.Code))
		})
	}
	return appendFlags(b, 16, s.SpanContext().TraceFlags(), s.Parent())
}

// appendFlags writes a fixed32 flags field: the W3C trace flags of the
// span (or of a link's target), and whether remote (the span's parent,
// or the link's target) is remote.
func appendFlags(b []byte, num fieldNum, flags trace.TraceFlags, remote trace.SpanContext) []byte {
	f := uint32(flags) | flagsHasIsRemote
	if remote.IsRemote() {
		f |= flagsIsRemote
	}
	b = appendTag(b, num, wireFixed32)
	return appendFixed32Raw(b, f)
}

// statusCode maps the API's status codes to OTLP's, which number them
// differently (OTLP: unset 0, ok 1, error 2).
func statusCode(c codes.Code) uint64 {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0
}

// unixNano is t in OTLP's unit; a time before 1970 (a zero time.Time,
// whose UnixNano is undefined) is 0, OTLP's "unknown".
func unixNano(t time.Time) uint64 {
	if t.Year() < 1970 || t.Year() > 2261 {
		return 0
	}
	return uint64(max(t.UnixNano(), 0))
}
