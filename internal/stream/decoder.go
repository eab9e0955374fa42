package stream

import (
	"bufio"
	"io"
)

const (
	bufSize = 64 << 10
	// maxDepth bounds the explicit parse stack: deeper lines are reported
	// as malformed rather than growing memory with nesting.
	maxDepth = 512
	// Keys longer than any we look for are only validated; a longer number
	// of a kept field is rejected (bounds.go).
	maxKeyBytes = 64
	maxNumBytes = 64
)

// Decoder reads stream-json lines and returns one Event per non-empty line.
// It scans each line once, token by token, through a fixed buffer: a line of
// any length costs the same memory, only the capped strings it keeps.
type Decoder struct {
	br   *bufio.Reader
	line int64 // number of the current line, 1-based
	n    int64 // bytes of the current line consumed so far
	pos  int64 // bytes of the stream consumed so far: where the next line begins
	stop stop  // why the current line stopped parsing
	err  error // first I/O error; every later call returns it

	// resultAt is where, in the current line, the body of the kept result
	// string begins (after its quote): the re-read of a cut result
	// (resulttext.go) starts there.
	resultAt int64

	ev    Event
	blk   block
	task  Task      // the tasks[] element being read
	mcp   MCPServer // the mcp_servers[] element being read
	stack []frame

	str capBuf // the kept string being decoded
	key capBuf
	num capBuf

	// capturing copies the significant bytes of a tool_use input into
	// blk.input, as compact JSON, until the stack is back to capBase.
	capturing bool
	capBase   int

	// tr is nil unless KeepToolResults was called (toolresult.go).
	tr *toolResults
}

type frame struct {
	arr bool
	ctx ctx
}

// stop says why parsing of a line ended early.
type stop uint8

const (
	stopNone stop = iota
	stopBad       // a byte that cannot continue the line; left unconsumed
	stopEOF
	stopErr
)

// NewDecoder returns a Decoder reading r. The Decoder buffers r: read the
// stream through it only.
func NewDecoder(r io.Reader) *Decoder {
	d := &Decoder{
		br:    bufio.NewReaderSize(r, bufSize),
		stack: make([]frame, 0, 16),
	}
	d.key.reset(maxKeyBytes)
	d.num.reset(maxNumBytes)
	d.blk.reset()
	return d
}

// Next returns the event of the next non-empty line, or io.EOF at the end of
// the stream. Bad content never makes an error: it comes back as an event of
// kind KindMalformed or KindCutShort, and decoding goes on at the next line.
// Only an error of the reader is returned, and then on every later call.
func (d *Decoder) Next() (Event, error) {
	if d.err != nil {
		return Event{}, d.err
	}
	for {
		c, err := d.br.ReadByte()
		if err != nil {
			if err == io.EOF {
				return Event{}, io.EOF
			}
			d.err = err
			return Event{}, err
		}
		d.line++
		if c != '\n' {
			_ = d.br.UnreadByte() // cannot fail right after ReadByte
			break
		}
		d.pos++
	}
	start := d.pos
	d.n, d.stop, d.capturing, d.resultAt = 0, stopNone, false, 0
	d.ev = Event{}
	d.blk.reset()

	if d.parseObject() && d.endOfLine() {
		ev := d.ev
		d.ev = Event{}
		ev.Kind, ev.Bytes, ev.Line, ev.Offset = KindJSON, d.n, d.line, start
		return ev, nil
	}
	kind := KindCutShort
	if d.stop == stopBad && d.skipLine() {
		kind = KindMalformed
	}
	if d.stop == stopErr {
		return Event{}, d.err
	}
	d.ev = Event{}
	return Event{Kind: kind, Bytes: d.n, Line: d.line, Offset: start}, nil
}

// endOfLine accepts what may follow a complete object: blanks, then a
// newline or the end of the stream.
func (d *Decoder) endOfLine() bool {
	c, ok := d.peekNonSpace()
	if !ok {
		return d.stop == stopEOF
	}
	if c == '\n' {
		d.br.Discard(1) // the newline is not part of Bytes
		d.pos++
		return true
	}
	return d.fail(stopBad)
}

// skipLine consumes the rest of a bad line and its newline, and reports
// whether there was one.
func (d *Decoder) skipLine() bool {
	for {
		buf, ok := d.window()
		if !ok {
			return false
		}
		for i, c := range buf {
			if c == '\n' {
				d.discard(i)
				d.br.Discard(1)
				d.pos++
				return true
			}
		}
		d.discard(len(buf))
	}
}

// window returns the buffered bytes, reading if there are none. It fails
// only at the end of the stream or on a read error.
func (d *Decoder) window() ([]byte, bool) {
	if n := d.br.Buffered(); n > 0 {
		b, _ := d.br.Peek(n)
		return b, true
	}
	if _, err := d.br.Peek(1); err != nil {
		if err == io.EOF {
			d.stop = stopEOF
		} else {
			d.stop, d.err = stopErr, err
		}
		return nil, false
	}
	b, _ := d.br.Peek(d.br.Buffered())
	return b, true
}

func (d *Decoder) peekByte() (byte, bool) {
	b, ok := d.window()
	if !ok {
		return 0, false
	}
	return b[0], true
}

// discard consumes n bytes of the current line (n never exceeds what
// window returned, so Discard cannot fail).
func (d *Decoder) discard(n int) {
	d.br.Discard(n)
	d.n += int64(n)
	d.pos += int64(n)
}

// peekNonSpace consumes blanks and returns the next byte without consuming
// it. A newline is returned like any other byte: it is not JSON whitespace
// here, since it ends the line.
func (d *Decoder) peekNonSpace() (byte, bool) {
	for {
		buf, ok := d.window()
		if !ok {
			return 0, false
		}
		for i, c := range buf {
			if c != ' ' && c != '\t' && c != '\r' {
				d.discard(i)
				return c, true
			}
		}
		d.discard(len(buf))
	}
}

func (d *Decoder) fail(s stop) bool {
	d.stop = s
	return false
}
