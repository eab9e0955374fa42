package ui

import (
	"time"

	"github.com/malarun/malarun/internal/event"
)

// Redraw pacing: the status line is redrawn at most every minRedraw (progress
// comes after every line of the stream, hundreds a second while a reply
// streams), and every second while visible, for the clock and the countdown.
const (
	minRedraw = 100 * time.Millisecond
	tick      = time.Second
)

// Live is the terminal display of a run: a status line and, above it, one
// line per event that matters. It runs on its own goroutine.
type Live struct {
	term   *Terminal
	status *Status
	q      *queue
	done   chan struct{}
	syncs  chan chan struct{} // Sync's requests
	now    func() time.Time
}

// StartLive starts drawing status on term.
func StartLive(term *Terminal, status *Status) *Live {
	l := &Live{term: term, status: status, q: newQueue(), done: make(chan struct{}), syncs: make(chan chan struct{}), now: time.Now}
	go l.loop()
	return l
}

// Observe takes an event; it never blocks.
func (l *Live) Observe(e event.Event) { l.q.Put(e) }

// Close draws what is queued, erases the status line and waits until the
// terminal is left clean.
func (l *Live) Close() {
	l.q.Close()
	<-l.done
}

func (l *Live) loop() {
	defer close(l.done)
	defer l.term.Close()
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	redraw := time.NewTimer(0)
	defer redraw.Stop()
	var last time.Time // the last redraw
	pending := true    // a redraw is due once redraw fires
	for {
		dirty := false
		select {
		case <-l.q.Wake():
			n, closed := l.show()
			if closed {
				return
			}
			dirty = n > 0
		case reply := <-l.syncs:
			n, closed := l.show()
			close(reply)
			if closed {
				return
			}
			dirty = n > 0
		case <-ticker.C:
			dirty = true
		case <-redraw.C:
			pending = false
			l.draw()
			last = l.now()
		}
		if dirty && !pending {
			pending = true
			redraw.Reset(max(0, minRedraw-l.now().Sub(last)))
		}
	}
}

// show applies the queued events and prints their lines; it returns how
// many there were and whether the queue is closed.
func (l *Live) show() (int, bool) {
	items, closed := l.q.Take()
	for _, e := range items {
		l.status.Apply(e)
		if line, ok := eventLine(e, l.status); ok {
			// Println redraws the status line as it was; the redraw after
			// the batch brings it up to date.
			l.term.Println(line)
		}
	}
	return len(items), closed
}

// Sync waits, at most limit, until the events queued so far are shown.
func (l *Live) Sync(limit time.Duration) { syncWith(l.syncs, l.done, limit) }

func (l *Live) draw() { l.term.SetStatus(l.status.LineWithin(l.now(), l.term.StatusWidth())) }
