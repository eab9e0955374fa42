package stream

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
// a captured input, and at most maxNumBytes of it: a longer one is valid
// JSON but no number the CLI writes (JavaScript never prints more than 25
// bytes), so a kept field rejects it (setNumber).
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
			if keep {
				d.setNumber(f, d.num.b, d.num.trunc)
			}
			return true
		}
	}
}
