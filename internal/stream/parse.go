package stream

// state is what the parser expects next.
type state uint8

const (
	stValue    state = iota // any value
	stObjFirst              // after '{': a key or '}'
	stObjKey                // after ',' in an object: a key
	stObjNext               // after a member: ',' or '}'
	stArrFirst              // after '[': a value or ']'
	stArrNext               // after an element: ',' or ']'
)

// parseObject parses one JSON object and fills d.ev on the way. It keeps an
// explicit stack instead of recursing, so that nesting costs at most
// maxDepth small frames whatever the line. On failure d.stop says why.
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
			if c == '{' || c == '[' {
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
			}
			if !d.scalar(c, f) {
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

// scalar reads a value that is no container, beginning with c, as field
// f; false when the line is done (bad, or cut short).
func (d *Decoder) scalar(c byte, f field) bool {
	switch {
	case c == '"':
		d.discard(1)
		return d.stringValue(f)
	case c == '-' || c >= '0' && c <= '9':
		return d.numberValue(f)
	case c == 't':
		ok := d.literal("true")
		if ok {
			d.setBool(f, true)
		}
		return ok
	case c == 'f':
		ok := d.literal("false")
		if ok {
			d.setBool(f, false)
		}
		return ok
	case c == 'n':
		return d.literal("null") // a null kept field stays at its zero value
	}
	return d.fail(stopBad)
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
	top := d.stack[len(d.stack)-1].ctx
	if d.capturing {
		d.emit('"')
		if top == ctxInput {
			return d.inputKey()
		}
		return fNone, d.scanString(&d.blk.input, true)
	}
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
	f := keyField(top, d.key.b)
	if f == fNone && d.tr != nil {
		f = d.toolResultKey(top, d.key.b)
	}
	return f, true
}

// inputKey reads a key of a tool input object into the captured input and,
// on its own, far enough to tell run_in_background: the capture may already
// be cut, and whether the call runs in the background must not depend on how
// long its command is.
func (d *Decoder) inputKey() (field, bool) {
	// A key longer than the input cap cannot fit the capture anyway.
	d.key.reset(MaxInputBytes)
	if !d.scanString(&d.key, true) {
		return fNone, false
	}
	d.blk.input.add(d.key.b)
	if d.key.trunc {
		d.blk.input.trunc = true
		return fNone, true
	}
	name := d.key.b[:len(d.key.b)-1] // raw mode kept the closing quote
	if !rawStringIs(name, "run_in_background") {
		return fNone, true
	}
	d.blk.background = false // the last occurrence decides, as in encoding/json
	return fBackground, true
}

// stringValue reads a string value whose opening quote is consumed.
func (d *Decoder) stringValue(f field) bool {
	if d.capturing {
		d.emit('"')
		return d.scanString(&d.blk.input, true)
	}
	n := d.stringCap(f)
	if n == 0 {
		if d.tr != nil && (f == fResultContent || f == fPartText) {
			return d.toolResultString(f)
		}
		return d.scanString(nil, false)
	}
	at := d.n
	d.str.reset(n)
	if !d.scanString(&d.str, false) {
		return false
	}
	if f == fResult {
		d.resultAt = at // the last one is kept, as its text is
	}
	if vocabulary(f) && !d.str.trunc {
		if s := interned(d.str.b); s != "" {
			d.setString(f, s, false)
			return true
		}
	}
	d.setString(f, d.str.text(), d.str.trunc)
	return true
}
