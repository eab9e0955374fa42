package timeline

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// growing is a file being appended to: Read returns what was written so far.
type growing struct{ data, read string }

func (g *growing) Read(p []byte) (int, error) {
	if g.read == g.data {
		return 0, io.EOF
	}
	n := copy(p, g.data[len(g.read):])
	g.read = g.data[:len(g.read)+n]
	return n, nil
}

func TestReaderWaitsForAWholeLineAndSkipsDamage(t *testing.T) {
	ok := `{"time":"2026-01-02T12:00:00Z","event":"hang_detected","issue":"i","attempt":1,"limit_ms":5}`
	line := `{"time":"2026-01-02T12:00:01Z","event":"line","issue":"i","attempt":2,"offset":0}`
	g := &growing{data: "not json\n" + ok + "\n" + `{"event":"x"}` + "\n" +
		`{"time":"2026-01-02T12:00:01Z","event":"line","issue":"i","attempt":1}` + "\n" + // no offset
		strings.Repeat("x", MaxEntryBytes+10) + "\n\n" + line[:20]}
	r := NewReader(g)
	e, err := r.Next()
	if err != nil || e.Event != "hang_detected" || e.LimitMS != 5 || !e.Time.Equal(time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)) {
		t.Fatalf("first: %+v, %v", e, err)
	}
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("half a line: %v, want io.EOF", err)
	}
	g.data += line[20:] + "\n"
	e, err = r.Next()
	if err != nil || e.Event != EventLine || e.Attempt != 2 || e.Offset == nil || *e.Offset != 0 {
		t.Fatalf("completed line: %+v, %v", e, err)
	}
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("end: %v", err)
	}
	if r.Damaged != 4 {
		t.Errorf("damaged %d, want 4 (not JSON, no time, line without offset, too long)", r.Damaged)
	}
}
