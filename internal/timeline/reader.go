package timeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// maxEntryBytes bounds one timeline line: malarun writes far less (a tool
// input is cut to 512 bytes); a longer line is skipped as damaged.
const maxEntryBytes = 1 << 20

// Reader reads entries from a timeline that may still be growing: a last
// line without its newline is kept and completed by a later Next, once the
// writer has finished it. The file is outside input (anyone who can write
// the state directory wrote it): a line that is not an entry is skipped and
// counted, never an error.
type Reader struct {
	// SkipLines leaves out the line entries (a time for each message of
	// the CLI, most of a timeline) without decoding them, for a reader
	// that needs only malarun's decisions (the fleet summary).
	SkipLines bool

	r        io.Reader
	buf      []byte // read, not yet returned; starts at a line's beginning
	store    []byte // the array buf lies in
	scanned  int    // how much of buf is known to hold no newline
	skipping bool   // inside a line over maxEntryBytes: drop up to its newline
	// Damaged counts the lines skipped: not JSON, not an entry, too long.
	Damaged int
}

// NewReader reads entries from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: r}
}

// storeSize is the store a reader starts with, and minRoom the least
// room a read is given: a timeline's lines are a few hundred bytes, so
// what is left of the store slides to its front instead of growing it.
const (
	storeSize = 32 << 10
	minRoom   = 4 << 10
)

// Next returns the next whole entry, or io.EOF when none is complete yet.
// After io.EOF, Next may be called again when r has grown.
func (t *Reader) Next() (Entry, error) {
	for {
		if i := bytes.IndexByte(t.buf[t.scanned:], '\n'); i >= 0 {
			line := t.buf[:t.scanned+i]
			t.buf, t.scanned = t.buf[t.scanned+i+1:], 0
			if t.skipping {
				t.skipping = false
				continue
			}
			if len(line) > maxEntryBytes { // whole in one read, past the bound
				t.Damaged++
				continue
			}
			if len(bytes.TrimSpace(line)) == 0 || t.SkipLines && isLineEntry(line) {
				continue
			}
			if e, ok := parse(line); ok {
				return e, nil
			}
			t.Damaged++
			continue
		}
		t.scanned = len(t.buf)
		if len(t.buf) > maxEntryBytes {
			if !t.skipping {
				t.Damaged++
			}
			t.buf, t.scanned, t.skipping = t.buf[:0], 0, true
		}
		// Read into the buffer's free room. When there is too little, what
		// is left slides to the front of the store, or to a new store twice
		// its size when it does not fit: the store grows with the longest
		// line, never with the file, and a long line is copied a bounded
		// number of times, not once per read.
		if cap(t.buf)-len(t.buf) < minRoom {
			if need := len(t.buf) + minRoom; cap(t.store) < need {
				t.store = make([]byte, max(2*len(t.buf), need, storeSize))
			}
			t.buf = t.store[:copy(t.store[:cap(t.store)], t.buf)]
		}
		n, err := t.r.Read(t.buf[len(t.buf):cap(t.buf)])
		t.buf = t.buf[:len(t.buf)+n]
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

// lineEntryMark is how malarun's writer begins the event of a line entry,
// right after the time.
const lineEntryMark = `","event":"line",`

// isLineEntry reports whether line is a line entry as malarun writes them
// (a planted line that only looks like one is left out too: it would be
// left out as a line entry anyway).
func isLineEntry(line []byte) bool {
	const timePrefix = `{"time":"`
	if !bytes.HasPrefix(line, []byte(timePrefix)) {
		return false
	}
	head := line[len(timePrefix):min(len(line), 80)]
	return bytes.Contains(head, []byte(lineEntryMark))
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
