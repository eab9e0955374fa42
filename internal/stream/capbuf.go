package stream

import "unicode/utf8"

// capBuf collects the bytes of one kept value, up to max: whatever the line
// holds, the decoder never keeps more than the cap of the field it fills.
type capBuf struct {
	b     []byte
	max   int
	trunc bool
}

func (c *capBuf) reset(max int) {
	c.b = c.b[:0]
	c.max = max
	c.trunc = false
}

func (c *capBuf) add(p []byte) {
	room := c.max - len(c.b)
	if len(p) > room {
		c.b = append(c.b, p[:max(room, 0)]...)
		c.trunc = true
		return
	}
	c.b = append(c.b, p...)
}

func (c *capBuf) addString(s string) {
	room := c.max - len(c.b)
	if len(s) > room {
		c.b = append(c.b, s[:max(room, 0)]...)
		c.trunc = true
		return
	}
	c.b = append(c.b, s...)
}

func (c *capBuf) addByte(x byte) {
	if len(c.b) >= c.max {
		c.trunc = true
		return
	}
	c.b = append(c.b, x)
}

// addRune never splits a rune: a cut string stays valid UTF-8.
func (c *capBuf) addRune(r rune) {
	if len(c.b)+utf8.RuneLen(r) > c.max {
		c.trunc = true
		return
	}
	c.b = utf8.AppendRune(c.b, r)
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
		b = replaceInvalid(b)
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

func replaceInvalid(b []byte) []byte {
	out := make([]byte, 0, len(b)+8)
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
