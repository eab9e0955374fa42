package stream

import (
	"io"
	"reflect"
	"runtime"
	"testing"
)

// TestHugeLineBoundedMemory decodes a 100 MB line that exists only as it
// streams by, and checks that decoding it allocated a small, fixed amount.
func TestHugeLineBoundedMemory(t *testing.T) {
	size := 100 << 20
	if testing.Short() {
		size = 32 << 20 // make check: still four times the budget; under -race 100 MB takes seconds
	}
	const budget = 8 << 20
	r := newBigLineReader(size)
	d := NewDecoder(r)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ev, err := d.Next()
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("decoding a %d-byte line allocated %d bytes (%d objects)", ev.Bytes, alloc, after.Mallocs-before.Mallocs)
	if alloc > budget {
		t.Errorf("decoding the big line allocated %d bytes, want at most %d", alloc, budget)
	}
	want := Event{Line: 1, Bytes: r.bigLineBytes(), Type: "user", SessionID: "s-big", ToolResults: []string{"toolu_big"}}
	if !reflect.DeepEqual(ev, want) {
		t.Errorf("big line:\n got %s\nwant %s", renderEvent(ev), renderEvent(want))
	}
	if ev.Bytes < int64(size) {
		t.Errorf("big line has %d bytes, want over %d", ev.Bytes, size)
	}

	ev, err = d.Next()
	if err != nil || ev.Type != "result" || ev.Line != 2 || ev.Result != "ok" || ev.Usage.InputTokens != 7 {
		t.Errorf("line after the big one: %s, %v", renderEvent(ev), err)
	}
	if _, err := d.Next(); err != io.EOF {
		t.Errorf("got %v, want io.EOF", err)
	}
}
