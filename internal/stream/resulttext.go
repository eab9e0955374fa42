package stream

import (
	"errors"
	"fmt"
	"io"
)

// The decoder keeps at most MaxResultBytes of a result's text: a result can
// be hundreds of megabytes and malarun's memory must not grow with it. The
// whole text is still in the transcript, the CLI's stdout on disk
// (docs/design.md §D1, §D16), so whoever needs all of it copies it from
// there: NewResultText finds the line again in the transcript (opened by
// internal/transcript's ReadResult), checks that it is still the line the
// decoder saw, and ResultText.WriteTo decodes the string into a writer in
// chunks, through the decoder's own string scanner.

// LineRef locates one line of a transcript, so that it can be read again.
type LineRef struct {
	Path   string // the transcript (attempt-N.jsonl)
	Offset int64  // Event.Offset: where the line begins
	Bytes  int64  // Event.Bytes: its length, newline excluded
}

// copyChunk is how much decoded text a copy holds before writing it.
const copyChunk = 64 << 10

// ResultText is the whole result string of one line of a transcript, found
// and checked by NewResultText; WriteTo copies it.
type ResultText struct {
	r     io.ReaderAt
	ref   LineRef
	body  int64 // where the string's body begins in the line (after its quote)
	chunk int
}

// NewResultText checks, before anything is copied, that the line at ref in
// r (the transcript, which holds size bytes) is still the one the decoder
// saw: a JSON object of ref.Bytes bytes whose top-level "result" (the last
// one, as the decoder keeps) is a string that decodes to kept, or begins
// with it when the decoder cut it. A transcript that was cut short or
// changed is an error: the caller has only kept then. The line is scanned
// once here, with the memory of one decoder.
func NewResultText(r io.ReaderAt, size int64, ref LineRef, kept string) (*ResultText, error) {
	t := &ResultText{r: r, ref: ref, chunk: copyChunk}
	if err := t.check(size, kept); err != nil {
		return nil, fmt.Errorf("%s, line at byte %d: %w", ref.Path, ref.Offset, err)
	}
	return t, nil
}

func (t *ResultText) check(size int64, kept string) error {
	if t.ref.Offset < 0 || t.ref.Bytes <= 0 {
		return errors.New("no line to read")
	}
	if end := t.ref.Offset + t.ref.Bytes; size < end {
		return fmt.Errorf("the transcript has %d bytes, the line ended at %d: it was cut short", size, end)
	}
	// The newline after the line, if any, is read too: the line must end
	// exactly where it did.
	d := NewDecoder(io.NewSectionReader(t.r, t.ref.Offset, t.ref.Bytes+1))
	ev, err := d.Next()
	switch {
	case err != nil:
		return fmt.Errorf("read the line again: %w", err)
	case ev.Kind != KindJSON || ev.Offset != 0 || ev.Bytes != t.ref.Bytes:
		return fmt.Errorf("the line is no longer the same: %s line of %d bytes at %d, want a JSON line of %d",
			ev.Kind, ev.Bytes, ev.Offset, t.ref.Bytes)
	case d.resultAt == 0:
		return errors.New("the line has no result string")
	case ev.Result != kept:
		return errors.New("the line's result no longer begins with the text that was read")
	}
	t.body = d.resultAt
	return nil
}

// WriteTo writes the result's text, its JSON escapes decoded and invalid
// UTF-8 replaced by U+FFFD (as the decoder and encoding/json do), to w in
// chunks of at most 64 KiB. An error after the first chunk means w got part
// of the text: a transcript changed since NewResultText checked it, or w's
// own.
func (t *ResultText) WriteTo(w io.Writer) (int64, error) {
	start := t.ref.Offset + t.body
	d := NewDecoder(io.NewSectionReader(t.r, start, t.ref.Bytes-t.body))
	var sink capBuf
	sink.spillTo(w, t.chunk)
	ok := d.scanString(&sink, false)
	if ok {
		sink.spill(true)
	}
	switch {
	case sink.err != nil:
		return sink.n, sink.err
	case d.err != nil:
		return sink.n, fmt.Errorf("%s: read the result: %w", t.ref.Path, d.err)
	case !ok:
		return sink.n, fmt.Errorf("%s: the result string at byte %d is no longer whole: the transcript changed", t.ref.Path, start)
	}
	return sink.n, nil
}
