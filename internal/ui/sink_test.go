package ui

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// gate is a writer whose reader can stop reading (writes block until it
// is opened) or go away (writes fail).
type gate struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	err    error
	open   chan struct{} // closed: writes go through
	inside chan struct{} // a write is blocked at the gate
}

func newGate(open bool) *gate {
	g := &gate{open: make(chan struct{}), inside: make(chan struct{}, 1)}
	if open {
		close(g.open)
	}
	return g
}

func (g *gate) Write(p []byte) (int, error) {
	select {
	case <-g.open:
	default:
		g.inside <- struct{}{}
		<-g.open
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err != nil {
		return 0, g.err
	}
	return g.buf.Write(p)
}

func (g *gate) String() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.String()
}

func TestSinkWritesInOrder(t *testing.T) {
	g := newGate(true)
	s := NewSink("stderr", g, SinkLimit)
	var want strings.Builder
	for i := range 1000 {
		line := fmt.Sprintf("line %d\n", i)
		want.WriteString(line)
		if n, err := s.Write([]byte(line)); n != len(line) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if !s.Flush(time.Minute) {
		t.Fatal("Flush gave up")
	}
	if g.String() != want.String() {
		t.Errorf("written out of order or incompletely")
	}
	if f, ok := s.Failure(); ok {
		t.Errorf("failure %+v", f)
	}
	s.Close(time.Minute)
}

// A reader that went away: Write neither fails nor blocks, the first error
// is kept once, and everything after it is dropped.
func TestSinkKeepsTheFirstFailureAndGoesOn(t *testing.T) {
	g := newGate(true)
	g.err = syscall.EPIPE
	s := NewSink("stderr", g, SinkLimit)
	for range 100 {
		if _, err := s.Write([]byte("hang detected\n")); err != nil {
			t.Fatalf("Write failed: %v", err)
		}
	}
	if !s.Flush(time.Minute) {
		t.Fatal("Flush gave up on a writer that fails at once")
	}
	f, ok := s.Failure()
	if !ok || !errors.Is(f.Err, syscall.EPIPE) || f.Output != "stderr" || f.At.IsZero() {
		t.Fatalf("failure %+v, %v", f, ok)
	}
	g.mu.Lock()
	g.err = nil // the output works again: it is not written to any more
	g.mu.Unlock()
	s.Write([]byte("later\n"))
	s.Flush(time.Minute)
	if g.String() != "" {
		t.Errorf("written after the failure: %q", g.String())
	}
	if f2, _ := s.Failure(); f2 != f {
		t.Errorf("failure changed: %+v", f2)
	}
	s.Close(time.Minute)
}

// A reader that stops reading: writes never block; beyond the limit they
// are dropped (a failure); once the reader reads again, writing goes on.
func TestSinkDropsWhatAStalledReaderCannotTake(t *testing.T) {
	g := newGate(false)
	s := NewSink("events", g, 64)
	s.Write([]byte("first\n"))
	<-g.inside // the goroutine is blocked on the reader
	for range 20 {
		s.Write([]byte("0123456789\n")) // 220 bytes: more than the limit
	}
	f, ok := s.Failure()
	if !ok || !strings.Contains(f.Err.Error(), "fell behind by more than 64 bytes") {
		t.Fatalf("failure %+v, %v", f, ok)
	}
	close(g.open)
	s.Flush(time.Minute)
	s.Write([]byte("after\n"))
	s.Flush(time.Minute)
	if got := g.String(); !strings.HasPrefix(got, "first\n0123456789\n") || !strings.HasSuffix(got, "after\n") || len(got) > len("first\n")+64+len("after\n") {
		t.Errorf("written: %q", got)
	}
	s.Close(time.Minute)
}

// Flush waits only so long for a reader that takes nothing, and says so.
func TestSinkFlushGivesUpOnAStalledReader(t *testing.T) {
	g := newGate(false)
	s := NewSink("stderr", g, SinkLimit)
	s.Write([]byte("status line\n"))
	<-g.inside
	if s.Flush(20 * time.Millisecond) {
		t.Fatal("Flush reported a stalled reader as done")
	}
	if f, ok := s.Failure(); !ok || !strings.Contains(f.Err.Error(), "nothing for 20ms") {
		t.Errorf("failure %+v, %v", f, ok)
	}
	if !s.Flush(time.Hour) {
		t.Error("a second Flush waited again for a reader already taken for gone")
	}
	s.Close(20 * time.Millisecond)
	close(g.open) // lets the blocked goroutine end
}

func TestSinkFdIsTheFile(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := NewSink("stderr", f, SinkLimit)
	defer s.Close(time.Second)
	if s.Fd() != f.Fd() {
		t.Errorf("Fd %d, want %d", s.Fd(), f.Fd())
	}
	b := NewSink("stderr", &bytes.Buffer{}, SinkLimit)
	defer b.Close(time.Second)
	if b.Fd() != ^uintptr(0) {
		t.Errorf("Fd of a buffer %d", b.Fd())
	}
	if _, ok := TerminalFd(s); ok {
		t.Error("a file taken for a terminal")
	}
}

// slowWriter takes every write, one at a time, when the test lets it.
type slowWriter struct{ step chan struct{} }

func (w slowWriter) Write(p []byte) (int, error) { <-w.step; return len(p), nil }

// A reader that keeps reading, however slowly, is waited for: only one
// that takes nothing for the limit counts as gone.
func TestSinkFlushWaitsForASlowReader(t *testing.T) {
	w := slowWriter{step: make(chan struct{})}
	s := NewSink("stderr", w, SinkLimit)
	for range 40 {
		s.Write([]byte("line\n"))
	}
	stop := make(chan struct{})
	go func() { // one write each 5 ms: 200 ms for all, twice the limit
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				select {
				case w.step <- struct{}{}:
				case <-stop:
					return
				}
			case <-stop:
				return
			}
		}
	}()
	defer close(stop)
	if !s.Flush(100 * time.Millisecond) {
		f, _ := s.Failure()
		t.Fatalf("Flush gave up on a reader that reads: %v", f.Err)
	}
}
