package timeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// MaxEntryBytes bounds one timeline line: malarun writes far less (a tool
// input is cut to 512 bytes); a longer line is skipped as damaged.
const MaxEntryBytes = 1 << 20

// Reader reads entries from a timeline that may still be growing: a last
// line without its newline is kept and completed by a later Next, once the
// writer has finished it. The file is outside input (anyone who can write
// the state directory wrote it): a line that is not an entry is skipped and
// counted, never an error.
type Reader struct {
	r        io.Reader
	buf      []byte // read, not yet returned; starts at a line's beginning
	skipping bool   // inside a line over MaxEntryBytes: drop up to its newline
	chunk    []byte
	// Damaged counts the lines skipped: not JSON, not an entry, too long.
	Damaged int
}

// NewReader reads entries from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: r, chunk: make([]byte, 32<<10)}
}

// Next returns the next whole entry, or io.EOF when none is complete yet.
// After io.EOF, Next may be called again when r has grown.
func (t *Reader) Next() (Entry, error) {
	for {
		if i := bytes.IndexByte(t.buf, '\n'); i >= 0 {
			line := t.buf[:i]
			t.buf = t.buf[i+1:]
			if t.skipping {
				t.skipping = false
				continue
			}
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			if e, ok := parse(line); ok {
				return e, nil
			}
			t.Damaged++
			continue
		}
		if len(t.buf) > MaxEntryBytes {
			if !t.skipping {
				t.Damaged++
			}
			t.buf, t.skipping = t.buf[:0], true
		}
		n, err := t.r.Read(t.chunk)
		// Compact before appending, so the buffer does not grow with the file.
		t.buf = append(t.buf[:0:0], t.buf...)
		t.buf = append(t.buf, t.chunk[:n]...)
		if n > 0 {
			continue
		}
		if err == nil {
			err = io.ErrNoProgress
		}
		if errors.Is(err, io.EOF) {
			return Entry{}, io.EOF
		}
		return Entry{}, err
	}
}

func parse(line []byte) (Entry, bool) {
	var e Entry
	if err := json.Unmarshal(line, &e); err != nil || e.Event == "" || e.Time.IsZero() {
		return Entry{}, false
	}
	if e.Event == EventLine && (e.Offset == nil || *e.Offset < 0 || e.Attempt < 1) {
		return Entry{}, false
	}
	return e, true
}
