package ui

import (
	"encoding/json"
	"io"

	"github.com/malarun/malarun/internal/event"
)

// EventLog writes every event but progress to w as one JSON line (see
// InertJSON), in one Write: on a file that is unbuffered, so a reader
// following the file sees each line whole as soon as it happens.
type EventLog struct {
	w   io.Writer
	err error // the first write error; later events are dropped
}

// NewEventLog writes to w.
func NewEventLog(w io.Writer) *EventLog { return &EventLog{w: w} }

// Event writes e (not progress: that is for the status line).
func (l *EventLog) Event(e event.Event) {
	if e.Kind == event.Progress || l.err != nil {
		return
	}
	b, err := json.Marshal(e.Entry())
	if err == nil {
		// "-" writes the lines among the logs, and people tail the file:
		// what a terminal acts on is escaped (the same JSON to a program).
		_, err = l.w.Write(InertJSON(append(b, '\n')))
	}
	l.err = err
}

// Err is the first error writing the log.
func (l *EventLog) Err() error { return l.err }
