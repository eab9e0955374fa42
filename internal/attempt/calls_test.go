package attempt

import (
	"fmt"
	"slices"
	"testing"

	"github.com/malarun/malarun/internal/stream"
)

// Calls end in any order: the set keeps call order, and naming the first
// few never walks past ended calls, whatever order they ended in (a
// stream that keeps the first call open and ends every other one).
func TestCallSetKeepsOrderWhateverEndsFirst(t *testing.T) {
	var c callSet
	const n = 10_000
	for i := range n {
		c.add(stream.ToolUse{ID: fmt.Sprint(i), Name: fmt.Sprint("T", i)}, i)
	}
	for i := 1; i < n-10; i++ { // all but the first and the last ten
		if !c.end(fmt.Sprint(i)) {
			t.Fatalf("call %d was not open", i)
		}
	}
	walked := 0
	c.each(func(s callSlot) bool { walked++; return walked < namesShown })
	if walked != namesShown {
		t.Errorf("walked %d slots to name %d", walked, namesShown)
	}
	names, more := c.names()
	if want := []string{"T0", fmt.Sprint("T", n-10), fmt.Sprint("T", n-9), fmt.Sprint("T", n-8)}; !slices.Equal(names, want) || more != 7 {
		t.Errorf("names %v and %d more, want %v and 7", names, more, want)
	}
	// Slots are reused, and the order is still the order of calls.
	c.add(stream.ToolUse{ID: "new", Name: "New"}, n)
	got := c.list()
	if len(got) != 12 || got[0].ID != "0" || got[11].ID != "new" || c.end("absent") || c.has("1") {
		t.Errorf("list %v", got)
	}
	for _, tu := range got {
		c.end(tu.ID)
	}
	if c.live != 0 || c.head != -1 || len(c.slots) != 0 {
		t.Errorf("an empty set keeps %d slots (live %d, head %d)", len(c.slots), c.live, c.head)
	}
}
