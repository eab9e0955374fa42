package ui

import (
	"sync"
	"time"

	"github.com/malarun/malarun/internal/event"
)

// queue hands events from the supervisor's goroutine to one consumer
// goroutine. Put never blocks (a short mutex section and a non-blocking
// wake-up), and loses nothing but stale progress: a progress event that
// follows another replaces it, since each carries the whole live state.
type queue struct {
	mu     sync.Mutex
	items  []event.Event
	closed bool
	wake   chan struct{}
}

// newQueue returns an empty, open queue.
func newQueue() *queue { return &queue{wake: make(chan struct{}, 1)} }

// Put adds e; after Close it is dropped.
func (q *queue) Put(e event.Event) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	if n := len(q.items); e.Kind == event.Progress && n > 0 && q.items[n-1].Kind == event.Progress {
		q.items[n-1] = e
	} else {
		q.items = append(q.items, e)
	}
	q.mu.Unlock()
	q.signal()
}

// Close tells the consumer that no more events come.
func (q *queue) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

func (q *queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Wake is ready when Take may have something new.
func (q *queue) Wake() <-chan struct{} { return q.wake }

// Take returns the pending events, in order, and whether the queue is
// closed (then nothing more will come after these).
func (q *queue) Take() ([]event.Event, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	return items, q.closed
}

// Async runs a handler on its own goroutine, fed through a queue.
type Async struct {
	q     *queue
	done  chan struct{}
	syncs chan chan struct{} // Sync's requests: answered once what was queued before is handled
}

// Go starts handle's goroutine.
func Go(handle func(event.Event)) *Async {
	a := &Async{q: newQueue(), done: make(chan struct{}), syncs: make(chan chan struct{})}
	go func() {
		defer close(a.done)
		drain := func() bool {
			items, closed := a.q.Take()
			for _, e := range items {
				handle(e)
			}
			return closed
		}
		for {
			select {
			case <-a.q.Wake():
				if drain() {
					return
				}
			case reply := <-a.syncs:
				closed := drain()
				close(reply)
				if closed {
					return
				}
			}
		}
	}()
	return a
}

// Sync waits, at most limit, until the events queued so far are handled.
func (a *Async) Sync(limit time.Duration) { syncWith(a.syncs, a.done, limit) }

// syncWith asks a consumer goroutine (Async's, Live's) to take what is
// queued now, through its syncs channel, and waits, at most limit, until
// it has; done is closed when the goroutine has ended.
func syncWith(syncs chan<- chan struct{}, done <-chan struct{}, limit time.Duration) {
	reply := make(chan struct{})
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case syncs <- reply:
	case <-done:
		return
	case <-timer.C:
		return
	}
	select {
	case <-reply:
	case <-timer.C:
	}
}

// Observe queues e for the handler; it never blocks.
func (a *Async) Observe(e event.Event) { a.q.Put(e) }

// Close hands over what is queued, then waits for the handler to finish it.
func (a *Async) Close() {
	a.q.Close()
	<-a.done
}
