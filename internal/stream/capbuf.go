package stream

import (
	"io"
	"unicode/utf8"
)

// capBuf collects the bytes of one kept value, up to max: whatever the line
// holds, the decoder never keeps more than the cap of the field it fills.
// Once the cap is hit it keeps nothing more: a short piece that would still
// fit after a rune that did not (an escape's) would leave a gap, and the
// kept text would no longer be the value's beginning.
//
// With a writer (spillTo) it keeps nothing: every max bytes it hands what
// it holds to the writer, so a string of any length is copied whole
// through a buffer of fixed size (the re-read of a cut result).
type capBuf struct {
	b     []byte
	max   int
	trunc bool

	w   io.Writer // set by spillTo
	n   int64     // bytes written to w
	err error     // the first error of w; later bytes are dropped
	fix []byte    // a spilled chunk with U+FFFD for its invalid bytes, reused
}

func (c *capBuf) reset(max int) {
	c.b = c.b[:0]
	c.max = max
	c.trunc = false
}

// spillTo makes c copy everything to w, in chunks of about max bytes.
func (c *capBuf) spillTo(w io.Writer, max int) {
	c.reset(max)
	c.w, c.n, c.err = w, 0, nil
}

func (c *capBuf) add(p []byte) {
	if c.trunc {
		return
	}
	room := c.max - len(c.b)
	if len(p) > room {
		if c.w != nil {
			c.spill(false)
			c.b = append(c.b, p...)
			return
		}
		c.b = append(c.b, p[:max(room, 0)]...)
		c.trunc = true
		return
	}
	c.b = append(c.b, p...)
}

func (c *capBuf) addString(s string) {
	if c.trunc {
		return
	}
	room := c.max - len(c.b)
	if len(s) > room {
		if c.w != nil {
			c.spill(false)
			c.b = append(c.b, s...)
			return
		}
		c.b = append(c.b, s[:max(room, 0)]...)
		c.trunc = true
		return
	}
	c.b = append(c.b, s...)
}

func (c *capBuf) addByte(x byte) {
	if c.trunc {
		return
	}
	if len(c.b) >= c.max {
		if c.w == nil {
			c.trunc = true
			return
		}
		c.spill(false)
	}
	c.b = append(c.b, x)
}

// addRune never splits a rune: a cut string stays valid UTF-8.
func (c *capBuf) addRune(r rune) {
	if c.trunc {
		return
	}
	if len(c.b)+utf8.RuneLen(r) > c.max {
		if c.w == nil {
			c.trunc = true
			return
		}
		c.spill(false)
	}
	c.b = utf8.AppendRune(c.b, r)
}

// spill writes what c holds to its writer as text() would return it:
// invalid bytes become U+FFFD. Unless final, a rune whose first bytes are
// here and the rest not yet stays behind, since the next bytes may
// complete it: where the chunks end must not change the text.
func (c *capBuf) spill(final bool) {
	keep := 0
	if !final {
		keep = len(c.b) - len(trimPartialRune(c.b))
	}
	out := c.b[:len(c.b)-keep]
	if !utf8.Valid(out) {
		// Reused: a long text full of invalid bytes must not cost a
		// new chunk each time.
		c.fix = replaceInvalid(c.fix[:0], out)
		out = c.fix
	}
	if c.err == nil && len(out) > 0 {
		var n int
		n, c.err = c.w.Write(out)
		c.n += int64(n)
	}
	c.b = append(c.b[:0], c.b[len(c.b)-keep:]...)
}

// text returns the collected bytes as valid UTF-8 within the cap. Invalid
// bytes become U+FFFD one by one, as encoding/json does, so a kept string
// reads the same as it would through encoding/json.
func (c *capBuf) text() string {
	b := c.b
	if c.trunc {
		b = trimPartialRune(b)
	}
	if !utf8.Valid(b) {
		b = replaceInvalid(make([]byte, 0, len(b)+8), b)
		if len(b) > c.max {
			b = cutAtRune(b, c.max)
			c.trunc = true
		}
	}
	return string(b)
}

// trimPartialRune drops a multi-byte sequence that the cap cut in the middle.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
		x := b[len(b)-i]
		if x < utf8.RuneSelf {
			return b
		}
		if utf8.RuneStart(x) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

// replaceInvalid appends b to out with each invalid byte replaced by U+FFFD.
func replaceInvalid(out, b []byte) []byte {
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return out
}

// cutAtRune cuts b to at most n bytes without splitting a valid rune.
func cutAtRune(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return b[:n]
}
