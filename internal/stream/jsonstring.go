package stream

import (
	"bytes"
	"encoding/binary"
	"unicode/utf16"
	"unicode/utf8"
)

// scanString consumes the rest of a string and its closing quote. With a
// nil dst it only validates; with raw it copies the bytes as written (for
// compact JSON), else it decodes the escapes into dst. Either way dst stops
// growing at its cap, so a string of any size costs no memory.
func (d *Decoder) scanString(dst *capBuf, raw bool) bool {
	var high rune // a \u high surrogate waiting for its low half
	for {
		if dst != nil && dst.trunc {
			// A full cap keeps nothing more: the rest is only validated,
			// on the fast path (a result of hundreds of MB goes by twice
			// when it is copied from the transcript).
			dst = nil
		}
		buf, ok := d.window()
		if !ok {
			return false
		}
		i := plainRun(buf)
		for i < len(buf) {
			if strSpecial[buf[i]] == 0 {
				i++
				continue
			}
			// Skipped strings (the huge ones) step over escapes here,
			// without leaving the loop; split ones take the slow path.
			if dst == nil && buf[i] == '\\' {
				if n := escapeLen(buf[i:]); n > 0 {
					i += n
					i += plainRun(buf[i:]) // back to 8 bytes at a time
					continue
				}
			}
			break
		}
		if dst != nil && i > 0 {
			if high != 0 {
				dst.addRune(utf8.RuneError)
				high = 0
			}
			dst.add(buf[:i])
		}
		if i == len(buf) {
			d.discard(i)
			continue
		}
		c := buf[i]
		if c < 0x20 { // a raw control byte, a newline among them: not JSON
			d.discard(i)
			return d.fail(stopBad)
		}
		d.discard(i + 1)
		if c == '"' {
			if dst != nil {
				if raw {
					dst.addByte('"')
				} else if high != 0 {
					dst.addRune(utf8.RuneError)
				}
			}
			return true
		}
		if !d.escape(dst, raw, &high) {
			return false
		}
	}
}

// plainRun returns a length of b, a multiple of 8, that holds no quote,
// backslash or control byte; the byte loop takes it from there. Testing
// eight bytes at a time is what lets a huge string go by at memory speed.
func plainRun(b []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ (ones * '"')
		s := x ^ (ones * '\\')
		// A byte below 0x20, or a zero byte in q or s, sets its high bit.
		if ((x-ones*0x20)&^x|(q-ones)&^q|(s-ones)&^s)&highs != 0 {
			break
		}
	}
	return i
}

// escapeLen is the length of the valid escape sequence at the start of b,
// 0 when it is invalid or not all in b.
func escapeLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(b) >= 6 && unhex(b[2]) >= 0 && unhex(b[3]) >= 0 && unhex(b[4]) >= 0 && unhex(b[5]) >= 0 {
			return 6
		}
	}
	return 0
}

// strSpecial marks the bytes that stop the plain run of a string: the quote,
// the backslash and the control bytes JSON forbids raw.
const strSpecial = "\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" +
	"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01" +
	"\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" + // '"'
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00" + // '\\'
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"

// escape reads an escape sequence after its backslash. Surrogates are paired
// and lone ones become U+FFFD, as encoding/json does.
func (d *Decoder) escape(dst *capBuf, raw bool, high *rune) bool {
	c, ok := d.peekByte()
	if !ok {
		return false
	}
	var r rune
	switch c {
	case '"', '\\', '/':
		r = rune(c)
	case 'b':
		r = '\b'
	case 'f':
		r = '\f'
	case 'n':
		r = '\n'
	case 'r':
		r = '\r'
	case 't':
		r = '\t'
	case 'u':
		d.discard(1)
		var hex [4]byte
		for k := range hex {
			h, ok := d.peekByte()
			if !ok {
				return false
			}
			x := unhex(h)
			if x < 0 {
				return d.fail(stopBad)
			}
			d.discard(1)
			hex[k] = h
			r = r<<4 | x
		}
		switch {
		case dst == nil:
		case raw:
			dst.addString(`\u`)
			dst.add(hex[:])
		default:
			d.addUnicode(dst, r, high)
		}
		return true
	default:
		return d.fail(stopBad)
	}
	d.discard(1)
	switch {
	case dst == nil:
	case raw:
		dst.addByte('\\')
		dst.addByte(c)
	default:
		if *high != 0 {
			dst.addRune(utf8.RuneError)
			*high = 0
		}
		dst.addByte(byte(r))
	}
	return true
}

func (d *Decoder) addUnicode(dst *capBuf, r rune, high *rune) {
	if *high != 0 {
		if r >= 0xDC00 && r < 0xE000 {
			dst.addRune(utf16.DecodeRune(*high, r))
			*high = 0
			return
		}
		dst.addRune(utf8.RuneError)
		*high = 0
	}
	switch {
	case r >= 0xD800 && r < 0xDC00:
		*high = r
	case r >= 0xDC00 && r < 0xE000:
		dst.addRune(utf8.RuneError)
	default:
		dst.addRune(r)
	}
}

func unhex(c byte) rune {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c - 'a' + 10)
	case c >= 'A' && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return -1
}

// rawStringIs reports whether raw, the body of a valid JSON string as
// written (escapes not decoded), decodes to want, a plain ASCII string.
func rawStringIs(raw []byte, want string) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw) == want
	}
	k := 0
	for i := 0; i < len(raw); k++ {
		c := raw[i]
		i++
		if c == '\\' {
			if i >= len(raw) {
				return false
			}
			c = raw[i]
			i++
			switch c {
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'u':
				if i+4 > len(raw) {
					return false
				}
				var r rune
				for _, h := range raw[i : i+4] {
					r = r<<4 | unhex(h)
				}
				i += 4
				if r < 0 || r >= utf8.RuneSelf {
					return false // want is ASCII
				}
				c = byte(r)
			}
		}
		if k >= len(want) || want[k] != c {
			return false
		}
	}
	return k == len(want)
}
