package ui

import (
	"errors"
	"io"
	"unicode/utf8"
)

// inertChunk bounds what inertWriter passes to its writer at once: a write
// of any size is made inert and written in pieces of about this size, so
// the memory used does not grow with the text.
const inertChunk = 32 << 10

// InertWriter writes to w what Inert would make of everything written to
// it, for text of any size (a result of hundreds of MB streamed to a
// terminal). Writes may cut the text anywhere, a UTF-8 sequence or a CRLF
// included: the few bytes the next write decides (at most
// utf8.UTFMax-1) are held until it comes, everything else is written to
// w before Write returns. Close writes what is held; it does not close w.
//
// Write returns len(p) and nil, or the first error of w, which every
// later Write and Close return too. It is not safe for concurrent use.
type InertWriter struct {
	w      io.Writer
	held   [utf8.UTFMax]byte
	nheld  int
	buf    []byte
	err    error
	closed bool
	// after is the context of the text written so far (joiners, classify).
	after joinAfter
}

// NewInertWriter writes the inert form of the text written to it to w.
func NewInertWriter(w io.Writer) *InertWriter {
	return &InertWriter{w: w}
}

// Write makes p inert and writes it, except for an unfinished UTF-8
// sequence or a CR at its end, held for the next Write or Close.
func (iw *InertWriter) Write(p []byte) (int, error) {
	if iw.err != nil {
		return 0, iw.err
	}
	if iw.closed {
		return 0, errors.New("ui: write to a closed InertWriter")
	}
	n := len(p)
	if iw.nheld > 0 {
		// The held bytes and the first bytes of p decide each other: at
		// most 3 + 4 bytes, after which what is held is settled.
		var tmp [2*utf8.UTFMax - 1]byte
		k := copy(tmp[:], iw.held[:iw.nheld])
		take := copy(tmp[k:], p)
		out, used := appendInert(iw.buf[:0], tmp[:k+take], false, &iw.after)
		iw.buf = out
		if used < k {
			// Still undecided: p was short enough to be held with them.
			iw.nheld = copy(iw.held[:], tmp[used:k+take])
			p = nil
		} else {
			iw.nheld = 0
			p = p[used-k:]
		}
	}
	for len(p) > 0 {
		part := p[:min(len(p), inertChunk)]
		last := len(part) == len(p)
		out, used := appendInert(iw.buf, part, false, &iw.after)
		iw.buf = out
		if !last && used < len(part) {
			// Cut inside a sequence at the chunk's end: the next part
			// starts with it again.
			part = part[:used]
		}
		if last {
			iw.nheld = copy(iw.held[:], part[used:])
		}
		p = p[len(part):]
		if err := iw.flush(); err != nil {
			return 0, err
		}
	}
	if err := iw.flush(); err != nil {
		return 0, err
	}
	return n, nil
}

// Close writes what is held, as the end of the text (an unfinished UTF-8
// sequence is invalid, a last CR is "^M"). It does not close w.
func (iw *InertWriter) Close() error {
	if iw.err != nil || iw.closed {
		return iw.err
	}
	iw.closed = true
	out, _ := appendInert(iw.buf[:0], iw.held[:iw.nheld], true, &iw.after)
	iw.buf, iw.nheld = out, 0
	return iw.flush()
}

// flush writes the inert bytes made so far and empties the buffer.
func (iw *InertWriter) flush() error {
	if len(iw.buf) == 0 {
		return nil
	}
	_, err := iw.w.Write(iw.buf)
	iw.buf = iw.buf[:0]
	if err != nil {
		iw.err = err
	}
	return err
}
