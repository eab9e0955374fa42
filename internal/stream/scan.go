package stream

import (
	"encoding/binary"
	"unicode/utf16"
	"unicode/utf8"
)

// state is what the parser expects next.
type state uint8

const (
	stValue    state = iota
	stObjFirst       // after '{': a key or '}'
	stObjKey         // after ',' in an object: a key
	stObjNext        // after a member: ',' or '}'
	stArrFirst       // after '[': a value or ']'
	stArrNext        // after an element: ',' or ']'
)

// parseObject parses one JSON object and fills d.ev on the way. It keeps an
// explicit stack instead of recursing so that nesting costs a bounded,
// preallocated amount of memory. On failure d.stop says why.
func (d *Decoder) parseObject() bool {
	c, ok := d.peekNonSpace()
	if !ok {
		return false
	}
	if c != '{' {
		return d.fail(stopBad)
	}
	d.discard(1)
	d.stack = append(d.stack[:0], frame{ctx: ctxTop})
	st, f := stObjFirst, fNone
	for len(d.stack) > 0 {
		c, ok := d.peekNonSpace()
		if !ok {
			return false
		}
		switch st {
		case stObjFirst, stObjKey:
			if c == '}' && st == stObjFirst {
				d.discard(1)
				st = d.pop('}')
				continue
			}
			if c != '"' {
				return d.fail(stopBad)
			}
			d.discard(1)
			if f, ok = d.objectKey(); !ok {
				return false
			}
			if c, ok = d.peekNonSpace(); !ok {
				return false
			}
			if c != ':' {
				return d.fail(stopBad)
			}
			d.discard(1)
			d.emit(':')
			st = stValue

		case stValue:
			if f == fBlockInput {
				d.capturing, d.capBase = true, len(d.stack)
				d.blk.input.reset(MaxInputBytes)
			}
			switch {
			case c == '{' || c == '[':
				if len(d.stack) >= maxDepth {
					return d.fail(stopBad)
				}
				d.discard(1)
				d.emit(c)
				arr := c == '['
				cx := childCtx(f, arr)
				d.stack = append(d.stack, frame{arr: arr, ctx: cx})
				d.opened(cx)
				st = stObjFirst
				if arr {
					st = stArrFirst
				}
				continue
			case c == '"':
				d.discard(1)
				ok = d.stringValue(f)
			case c == '-' || c >= '0' && c <= '9':
				ok = d.numberValue(f)
			case c == 't':
				if ok = d.literal("true"); ok {
					d.setBool(f, true)
				}
			case c == 'f':
				if ok = d.literal("false"); ok {
					d.setBool(f, false)
				}
			case c == 'n':
				ok = d.literal("null") // a null kept field stays at its zero value
			default:
				return d.fail(stopBad)
			}
			if !ok {
				return false
			}
			st = d.resume()

		case stArrFirst:
			if c == ']' {
				d.discard(1)
				st = d.pop(']')
				continue
			}
			f, st = elemField(d.stack[len(d.stack)-1].ctx), stValue

		case stObjNext, stArrNext:
			closer := byte('}')
			if st == stArrNext {
				closer = ']'
			}
			switch c {
			case ',':
				d.discard(1)
				d.emit(',')
				st = stObjKey
				if top := d.stack[len(d.stack)-1]; top.arr {
					f, st = elemField(top.ctx), stValue
				}
			case closer:
				d.discard(1)
				st = d.pop(closer)
			default:
				return d.fail(stopBad)
			}
		}
	}
	return true
}

// pop closes the innermost container and returns what comes after it.
func (d *Decoder) pop(closer byte) state {
	d.emit(closer)
	top := d.stack[len(d.stack)-1]
	d.stack = d.stack[:len(d.stack)-1]
	d.closed(top.ctx)
	return d.resume()
}

// resume is the state after a complete value.
func (d *Decoder) resume() state {
	if d.capturing && len(d.stack) == d.capBase {
		d.capturing = false
	}
	if len(d.stack) > 0 && d.stack[len(d.stack)-1].arr {
		return stArrNext
	}
	return stObjNext
}

func (d *Decoder) emit(c byte) {
	if d.capturing {
		d.blk.input.addByte(c)
	}
}

// objectKey reads a key whose opening quote is consumed and tells which
// field its value is. Keys are only decoded where a field can be kept.
func (d *Decoder) objectKey() (field, bool) {
	if d.capturing {
		d.emit('"')
		return fNone, d.scanString(&d.blk.input, true)
	}
	top := d.stack[len(d.stack)-1].ctx
	switch top {
	case ctxSkip:
		return fNone, d.scanString(nil, false)
	case ctxModelUsage: // keyed by model name: any key will do
		return fModelEntry, d.scanString(nil, false)
	}
	d.key.reset(maxKeyBytes)
	if !d.scanString(&d.key, false) {
		return fNone, false
	}
	if d.key.trunc {
		return fNone, true
	}
	return keyField(top, d.key.b), true
}

// stringValue reads a string value whose opening quote is consumed.
func (d *Decoder) stringValue(f field) bool {
	if d.capturing {
		d.emit('"')
		return d.scanString(&d.blk.input, true)
	}
	n := d.stringCap(f)
	if n == 0 {
		return d.scanString(nil, false)
	}
	d.str.reset(n)
	if !d.scanString(&d.str, false) {
		return false
	}
	d.setString(f, d.str.text(), d.str.trunc)
	return true
}

// scanString consumes the rest of a string and its closing quote. With a
// nil dst it only validates; with raw it copies the bytes as written (for
// compact JSON), else it decodes the escapes into dst. Either way dst stops
// growing at its cap, so a string of any size costs no memory.
func (d *Decoder) scanString(dst *capBuf, raw bool) bool {
	var high rune // a \u high surrogate waiting for its low half
	for {
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

// literal consumes true, false or null.
func (d *Decoder) literal(word string) bool {
	for k := 0; k < len(word); k++ {
		c, ok := d.peekByte()
		if !ok {
			return false
		}
		if c != word[k] {
			return d.fail(stopBad)
		}
		d.discard(1)
	}
	if d.capturing {
		d.blk.input.addString(word)
	}
	return true
}

// Number grammar states (RFC 8259).
const (
	nBegin = iota // before the optional '-'
	nMinus        // after '-'
	nZero         // after a leading 0
	nInt          // in integer digits
	nDot          // after '.'
	nFrac         // in fraction digits
	nE            // after e/E
	nESign        // after the exponent's sign
	nExp          // in exponent digits
	nEnd          // the byte ends a complete number
	nBad          // the byte makes the number invalid
)

func numStep(st int, c byte) int {
	digit := c >= '0' && c <= '9'
	switch st {
	case nBegin:
		switch {
		case c == '-':
			return nMinus
		case c == '0':
			return nZero
		case digit:
			return nInt
		}
	case nMinus:
		switch {
		case c == '0':
			return nZero
		case digit:
			return nInt
		}
	case nZero, nInt, nFrac:
		switch {
		case digit && st != nZero:
			return st
		case c == '.' && st != nFrac:
			return nDot
		case c == 'e' || c == 'E':
			return nE
		}
		return nEnd
	case nDot:
		if digit {
			return nFrac
		}
	case nE:
		switch {
		case c == '+' || c == '-':
			return nESign
		case digit:
			return nExp
		}
	case nESign:
		if digit {
			return nExp
		}
	case nExp:
		if digit {
			return nExp
		}
		return nEnd
	}
	return nBad
}

// numberValue consumes a number. It keeps the text only for a kept field or
// a captured input, and at most maxNumBytes of it: longer ones are valid
// JSON but no count we care about.
func (d *Decoder) numberValue(f field) bool {
	keep := isNumberField(f)
	d.num.reset(maxNumBytes)
	st := nBegin
	for {
		buf, ok := d.window()
		if !ok {
			return false // the object around it is incomplete anyway
		}
		i := 0
		for ; i < len(buf); i++ {
			next := numStep(st, buf[i])
			if next == nEnd {
				break
			}
			if next == nBad {
				d.discard(i)
				return d.fail(stopBad)
			}
			st = next
		}
		if keep {
			d.num.add(buf[:i])
		}
		if d.capturing {
			d.blk.input.add(buf[:i])
		}
		d.discard(i)
		if i < len(buf) {
			if keep && !d.num.trunc {
				d.setNumber(f, d.num.b)
			}
			return true
		}
	}
}
