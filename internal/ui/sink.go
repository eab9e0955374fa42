package ui

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Sink is one of malarun's own outputs (its stderr, the --events file) as
// a run needs it: a write never blocks the run and never fails it. The
// reader of an output can go away (`malarun ... 2>&1 | head`, a log shipper
// that restarts, a terminal closed with SIGHUP: EPIPE or EIO) or stop
// reading (a full pipe): either would otherwise stop or kill malarun in
// the middle of a log line, with claude's process tree still running.
//
// Writes are copied into a queue of at most limit bytes, which one
// goroutine writes out in order. What does not fit is dropped; after the
// first write error everything is dropped. Either is a failure, kept once:
// the run records it (record.json, the --json report) and goes on.
type Sink struct {
	name  string
	w     io.Writer
	limit int
	now   func() time.Time

	mu      sync.Mutex
	queue   [][]byte
	queued  int  // bytes in queue
	writing bool // the goroutine holds a chunk it took from the queue
	closed  bool
	gone    bool     // a write failed: the output is gone for good
	failure *Failure // the first failure: a write error, or data dropped
	dropped int64
	taken   uint64        // writes the reader has taken (or failed): progress, for Flush
	wake    chan struct{} // the goroutine: there is work, or Close
	idle    chan struct{} // Flush: the queue went empty or failed
	done    chan struct{}
}

// Failure says an output stopped taking what malarun wrote.
type Failure struct {
	Output string    // the sink's name: "stderr", "events"
	Err    error     // the write error, or why data was dropped
	At     time.Time // when it first happened
}

// SinkLimit is the most a sink holds for a slow reader: far more than a
// run logs in the time a healthy reader needs, little for memory.
const SinkLimit = 4 << 20

// NewSink starts a sink writing to w.
func NewSink(name string, w io.Writer, limit int) *Sink {
	s := &Sink{name: name, w: w, limit: limit, now: time.Now,
		wake: make(chan struct{}, 1), idle: make(chan struct{}, 1), done: make(chan struct{})}
	go s.loop()
	return s
}

// Write queues a copy of p. It never blocks on the reader and never fails.
func (s *Sink) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.mu.Lock()
	switch {
	case s.closed || s.gone:
		s.dropped += int64(len(p))
	case s.queued+len(p) > s.limit:
		// The reader fell behind: this is dropped, and writing goes on
		// once it catches up.
		s.dropped += int64(len(p))
		s.fail(fmt.Errorf("the reader fell behind by more than %d bytes; output was dropped", s.limit))
	default:
		s.queue = append(s.queue, append([]byte(nil), p...))
		s.queued += len(p)
	}
	s.mu.Unlock()
	poke(s.wake)
	return len(p), nil
}

// fail keeps the first failure. Called with s.mu held.
func (s *Sink) fail(err error) {
	if s.failure == nil {
		s.failure = &Failure{Output: s.name, Err: err, At: s.now()}
	}
}

func (s *Sink) loop() {
	defer close(s.done)
	for range s.wake {
		for {
			s.mu.Lock()
			if len(s.queue) == 0 || s.gone {
				s.queue, s.queued, s.writing = nil, 0, false
				closed := s.closed
				s.mu.Unlock()
				poke(s.idle)
				if closed {
					return
				}
				break
			}
			chunk := s.queue[0]
			s.queue = s.queue[1:]
			s.queued -= len(chunk)
			s.writing = true
			s.mu.Unlock()

			_, err := s.w.Write(chunk)
			s.mu.Lock()
			s.taken++
			if err != nil {
				s.dropped += int64(len(chunk))
				s.gone = true
				s.fail(err)
			}
			s.mu.Unlock()
		}
	}
}

// settled reports whether nothing more will be written: the queue is
// empty and no write is under way, or the output failed for good.
func (s *Sink) settled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue) == 0 && !s.writing || s.gone
}

// Flush waits until what was written so far is out. A reader that takes
// nothing for limit, or has not taken it all within flushCap times limit,
// counts as gone: its failure is kept, later writes are dropped and later
// flushes return at once (malarun flushes before the record's last save,
// before the result and at exit: a stalled reader costs limit once). A slow
// reader that keeps reading is waited for.
func (s *Sink) Flush(limit time.Duration) bool {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	until := time.Now().Add(flushCap * limit)
	taken := s.progress()
	for !s.settled() {
		select {
		case <-s.idle:
		case <-timer.C:
			if now := s.progress(); now != taken && time.Now().Before(until) {
				taken = now
				timer.Reset(limit)
				continue
			}
			s.mu.Lock()
			s.gone = true
			s.fail(fmt.Errorf("the reader did not take what malarun wrote (nothing for %s, or not all within %s); it was dropped", limit, flushCap*limit))
			s.mu.Unlock()
			return false
		}
	}
	return true
}

// flushCap bounds a flush for a reader that reads, but too slowly.
const flushCap = 5

func (s *Sink) progress() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.taken
}

// Close flushes (at most limit) and stops the sink; later writes are
// dropped. A write still blocked in the reader is left to it: malarun is
// about to exit.
func (s *Sink) Close(limit time.Duration) {
	s.Flush(limit)
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	poke(s.wake)
}

// Failure is the first failure of the output, if any.
func (s *Sink) Failure() (Failure, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failure == nil {
		return Failure{}, false
	}
	return *s.failure, true
}

// Fd is the descriptor of the output when it is a file (a terminal is
// recognised through it), else an invalid one.
func (s *Sink) Fd() uintptr {
	if f, ok := s.w.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

// poke wakes the goroutine waiting on c, without blocking.
func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
