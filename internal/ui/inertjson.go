package ui

import (
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// InertJSON rewrites JSON text so that a person reading it on a terminal
// or in a CI log sees nothing a terminal acts on, and a program decodes
// the same values. JSON encoders escape C0 controls but write DEL, C1
// controls, bidirectional controls, invisible characters and U+2028/U+2029
// raw (zerolog and encoding/json both do): each becomes a \u escape, and a
// byte of invalid UTF-8 \ufffd, as encoders do. Such runes can only stand inside a JSON
// string, where the escape means the same rune; everything else, the
// white space between values included, is left as it is. p is not changed.
func InertJSON(p []byte) []byte {
	i := 0
	for i < len(p) && p[i] < 0x7f {
		i++
	}
	if i == len(p) {
		return p // printable ASCII and C0: nothing to do
	}
	out := append(make([]byte, 0, len(p)+16), p[:i]...)
	after := joinNone
	if i > 0 {
		after = after.next(rune(p[i-1]), classify(rune(p[i-1]), 1, joinNone))
	}
	for i < len(p) {
		r, size := utf8.DecodeRune(p[i:])
		k := classify(r, size, after)
		switch {
		case r > 0xffff && k == kindHidden: // a tag character: JSON escapes it as a surrogate pair
			hi, lo := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
		case k == kindHidden, r == 0x7f:
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, p[i:i+size]...)
		}
		after = after.next(r, k)
		i += size
	}
	return out
}

// InertJSONWriter writes JSON text to w through InertJSON. Each Write must
// hold whole runes, as an encoder's writes do (json.Encoder writes a value
// at once; WriteReport cuts its stream between runes).
func InertJSONWriter(w io.Writer) io.Writer { return inertJSONWriter{w} }

type inertJSONWriter struct{ w io.Writer }

func (i inertJSONWriter) Write(p []byte) (int, error) {
	if _, err := i.w.Write(InertJSON(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
