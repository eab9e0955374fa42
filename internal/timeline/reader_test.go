package timeline

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
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
		strings.Repeat("x", maxEntryBytes+10) + "\n\n" + line[:20]}
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

// TestReaderReadsEveryEntryWhateverTheReads: entries long and short, read
// a byte at a time or in large reads, come out whole and in order, the
// line entries left out with SkipLines; a long entry (a reason of 300 KB,
// many reads) does not cost a copy per read (the store grows by doubling).
func TestReaderReadsEveryEntryWhateverTheReads(t *testing.T) {
	var b strings.Builder
	var want []string
	for i := range 300 {
		reason := strings.Repeat("r", i%7*100)
		if i == 150 {
			reason = strings.Repeat("long ", 60000)
		}
		fmt.Fprintf(&b, `{"time":"2026-01-02T12:00:00Z","event":"line","issue":"i","attempt":1,"offset":%d}`+"\n", i)
		fmt.Fprintf(&b, `{"time":"2026-01-02T12:00:00Z","event":"retry_decided","issue":"i","attempt":%d,"reason":%q}`+"\n", i+1, reason)
		want = append(want, fmt.Sprintf("%d/%d", i+1, len(reason)))
	}
	for name, r := range map[string]io.Reader{"byte by byte": iotest.OneByteReader(strings.NewReader(b.String())),
		"large reads": strings.NewReader(b.String()), "half reads": iotest.HalfReader(strings.NewReader(b.String()))} {
		rd := NewReader(r)
		rd.SkipLines = true
		var got []string
		for {
			e, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got = append(got, fmt.Sprintf("%d/%d", e.Attempt, len(e.Reason)))
		}
		if !slices.Equal(got, want) || rd.Damaged != 0 {
			t.Errorf("%s: %d entries (damaged %d), want %d; first differences: %q", name, len(got), rd.Damaged, len(want), firstDiff(got, want))
		}
	}
}

func firstDiff(got, want []string) []string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return []string{got[i], want[i]}
		}
	}
	return nil
}
