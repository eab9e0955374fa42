package ui

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/event"
)

func TestQueueCoalescesProgressOnly(t *testing.T) {
	q := newQueue()
	q.Put(event.Event{Kind: event.Progress, Messages: 1})
	q.Put(event.Event{Kind: event.Progress, Messages: 2})
	q.Put(event.Event{Kind: event.ToolStarted, Tool: "Bash"})
	q.Put(event.Event{Kind: event.Progress, Messages: 3})
	q.Put(event.Event{Kind: event.Progress, Messages: 4})
	q.Put(event.Event{Kind: event.ToolStarted, Tool: "Read"})
	q.Put(event.Event{Kind: event.ToolStarted, Tool: "Read"})
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
	q.Put(event.Event{Kind: event.ToolStarted})
	if items, closed := q.Take(); len(items) != 0 || !closed {
		t.Errorf("after Close: %d items, closed %v", len(items), closed)
	}
}

// Async hands every event over, in order, and Close waits for the last.
func TestAsyncDeliversAll(t *testing.T) {
	var got []int
	a := Go(func(e event.Event) { got = append(got, e.Attempt) })
	for i := range 1000 {
		a.Observe(event.Event{Kind: event.AttemptStarted, Attempt: i})
	}
	a.Close()
	if len(got) != 1000 || !slices.IsSorted(got) {
		t.Errorf("got %d events, sorted %v", len(got), slices.IsSorted(got))
	}
}

// Sync returns once what was queued before it is handled.
func TestAsyncSync(t *testing.T) {
	var mu sync.Mutex
	var seen []event.Kind
	a := Go(func(e event.Event) {
		mu.Lock()
		seen = append(seen, e.Kind)
		mu.Unlock()
	})
	defer a.Close()
	for range 100 {
		a.Observe(event.Event{Kind: event.ToolStarted})
	}
	a.Sync(time.Minute)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 100 {
		t.Errorf("%d events handled before Sync returned, want 100", len(seen))
	}
}
