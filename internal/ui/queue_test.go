package ui

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/supervisor"
)

func TestQueueCoalescesProgressOnly(t *testing.T) {
	q := NewQueue()
	q.Put(supervisor.Event{Kind: supervisor.EvProgress, Messages: 1})
	q.Put(supervisor.Event{Kind: supervisor.EvProgress, Messages: 2})
	q.Put(supervisor.Event{Kind: supervisor.EvToolStarted, Tool: "Bash"})
	q.Put(supervisor.Event{Kind: supervisor.EvProgress, Messages: 3})
	q.Put(supervisor.Event{Kind: supervisor.EvProgress, Messages: 4})
	q.Put(supervisor.Event{Kind: supervisor.EvToolStarted, Tool: "Read"})
	q.Put(supervisor.Event{Kind: supervisor.EvToolStarted, Tool: "Read"})
	items, closed := q.Take()
	var got []string
	for _, e := range items {
		got = append(got, string(e.Kind)+":"+e.Tool+string(rune('0'+e.Messages)))
	}
	want := []string{"progress:2", "tool_started:Bash0", "progress:4", "tool_started:Read0", "tool_started:Read0"}
	if closed || !slices.Equal(got, want) {
		t.Errorf("got %q (closed %v), want %q", got, closed, want)
	}
	q.Close()
	q.Put(supervisor.Event{Kind: supervisor.EvToolStarted})
	if items, closed := q.Take(); len(items) != 0 || !closed {
		t.Errorf("after Close: %d items, closed %v", len(items), closed)
	}
}

// Async hands every event over, in order, and Close waits for the last.
func TestAsyncDeliversAll(t *testing.T) {
	var got []int
	a := Go(func(e supervisor.Event) { got = append(got, e.Attempt) })
	for i := range 1000 {
		a.Observe(supervisor.Event{Kind: supervisor.EvAttemptStarted, Attempt: i})
	}
	a.Close()
	if len(got) != 1000 || !slices.IsSorted(got) {
		t.Errorf("got %d events, sorted %v", len(got), slices.IsSorted(got))
	}
}

// Sync returns once what was queued before it is handled.
func TestAsyncSync(t *testing.T) {
	var mu sync.Mutex
	var seen []supervisor.EventKind
	a := Go(func(e supervisor.Event) {
		mu.Lock()
		seen = append(seen, e.Kind)
		mu.Unlock()
	})
	defer a.Close()
	for range 100 {
		a.Observe(supervisor.Event{Kind: supervisor.EvToolStarted})
	}
	a.Sync(time.Minute)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 100 {
		t.Errorf("%d events handled before Sync returned, want 100", len(seen))
	}
}
