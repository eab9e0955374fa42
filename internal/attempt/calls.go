package attempt

import (
	"strconv"
	"strings"

	"github.com/malarun/malarun/internal/stream"
)

// callSet is an agent's tool calls without a result, in call order. A
// stream can open thousands of calls (issue 47: 20,000 in under a second)
// and end them in any order, so a call is found by its id in a map, the
// open calls are linked in call order through their slots, and an ended
// call is unlinked: walking the first few open calls never passes an
// ended one, whatever order the results came in. Slots are reused once
// most are free. Every operation a line makes costs the same whatever
// the number of calls open: malarun's work stays linear in the lines it
// reads.
type callSet struct {
	slots []callSlot
	index map[string]int // id -> slot
	live  int
	// head and tail are the first and last open slots (-1: none); free
	// are the slots of ended calls.
	head, tail int
	free       []int
}

type callSlot struct {
	tu         stream.ToolUse
	seq        int
	prev, next int // the open slots before and after, in call order (-1: none)
}

// add opens a call; seq orders it among every agent's calls. A call whose
// id is already open is not opened twice.
func (c *callSet) add(tu stream.ToolUse, seq int) {
	if _, open := c.index[tu.ID]; open {
		return
	}
	if c.index == nil {
		c.index = map[string]int{}
		c.head, c.tail = -1, -1
	}
	slot := callSlot{tu: tu, seq: seq, prev: c.tail, next: -1}
	var i int
	if n := len(c.free); n > 0 {
		i, c.free = c.free[n-1], c.free[:n-1]
		c.slots[i] = slot
	} else {
		i = len(c.slots)
		c.slots = append(c.slots, slot)
	}
	if c.tail >= 0 {
		c.slots[c.tail].next = i
	} else {
		c.head = i
	}
	c.tail = i
	c.index[tu.ID] = i
	c.live++
}

// has reports whether the call with this id is open here.
func (c *callSet) has(id string) bool { _, open := c.index[id]; return open }

// end closes the call with this id, if it is open here.
func (c *callSet) end(id string) bool {
	_, ok := c.take(id)
	return ok
}

// take removes the open call with this id and returns it.
func (c *callSet) take(id string) (callSlot, bool) {
	i, open := c.index[id]
	if !open {
		return callSlot{}, false
	}
	s := c.slots[i]
	delete(c.index, id)
	if s.prev >= 0 {
		c.slots[s.prev].next = s.next
	} else {
		c.head = s.next
	}
	if s.next >= 0 {
		c.slots[s.next].prev = s.prev
	} else {
		c.tail = s.prev
	}
	c.slots[i] = callSlot{prev: -1, next: -1}
	c.live--
	if c.live == 0 {
		// Nothing open: the memory goes back at once.
		c.slots, c.free, c.head, c.tail = c.slots[:0], c.free[:0], -1, -1
	} else {
		c.free = append(c.free, i)
	}
	return s, true
}

// each calls f on every open call in call order until f says stop.
func (c *callSet) each(f func(s callSlot) bool) {
	if c.index == nil {
		return
	}
	for i := c.head; i >= 0; i = c.slots[i].next {
		if !f(c.slots[i]) {
			return
		}
	}
}

// list is the open calls in call order (a copy).
func (c *callSet) list() []stream.ToolUse {
	out := make([]stream.ToolUse, 0, c.live)
	c.each(func(s callSlot) bool { out = append(out, s.tu); return true })
	return out
}

// namesShown bounds how many running calls a label names: the status line
// and a hang's reason name the first few and count the rest.
const namesShown = 4

// names are the names of the first namesShown open calls, and how many
// more are open.
func (c *callSet) names() (names []string, more int) {
	c.each(func(s callSlot) bool {
		names = append(names, s.tu.Name)
		return len(names) < namesShown
	})
	return names, c.live - len(names)
}

// label joins names and a count of the rest: "Bash, Read and 3 more".
func label(names []string, more int) string {
	s := strings.Join(names, ", ")
	if more > 0 {
		s += " and " + strconv.Itoa(more) + " more"
	}
	return s
}
