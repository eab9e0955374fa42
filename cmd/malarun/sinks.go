package main

import (
	"io"
	"sync"
	"time"

	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/ui"
)

// sinkFlushLimit bounds each wait for a sink's reader: before the result
// is printed (the status line's erasure must reach the terminal first) and
// at exit. A reader that takes nothing for this long is taken for gone.
const sinkFlushLimit = 2 * time.Second

// sinks are the outputs of one malarun that may fail without failing the
// run, so that their failures can be recorded and reported.
type sinks struct {
	mu   sync.Mutex
	list []*ui.Sink
}

// add starts a sink writing to w, named for the record and the report.
func (s *sinks) add(name string, w io.Writer) *ui.Sink {
	sink := ui.NewSink(name, w, ui.SinkLimit)
	s.mu.Lock()
	s.list = append(s.list, sink)
	s.mu.Unlock()
	return sink
}

// failures are the outputs that failed so far, in the record's terms.
// Safe to call from any goroutine (the supervisor asks at every save).
func (s *sinks) failures() []record.OutputFailure {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []record.OutputFailure
	for _, sink := range s.list {
		if f, ok := sink.Failure(); ok {
			out = append(out, record.OutputFailure{Output: f.Output, Error: f.Err.Error(), At: f.At.UTC()})
		}
	}
	return out
}

// flush waits for every sink's reader, each at most sinkFlushLimit.
func (s *sinks) flush() {
	if s == nil {
		return
	}
	for _, sink := range s.snapshot() {
		sink.Flush(sinkFlushLimit)
	}
}

func (s *sinks) close() {
	for _, sink := range s.snapshot() {
		sink.Close(sinkFlushLimit)
	}
}

func (s *sinks) snapshot() []*ui.Sink {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*ui.Sink(nil), s.list...)
}
