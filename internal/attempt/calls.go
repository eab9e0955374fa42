package attempt

import (
	"strconv"
	"strings"

	"github.com/malarun/malarun/internal/stream"
)

// callSet is an agent's tool calls without a result, in call order. A
// stream can open thousands of calls (issue 47: 20,000 in under a second)
// and end them in any order, so a call is found by its id in a map and
// removed by marking its slot; the slots are compacted when most are
// empty. Every operation a line makes costs the same whatever the number
// of calls open: malarun's work stays linear in the lines it reads.
type callSet struct {
	slots []callSlot
	index map[string]int // id -> slot
	live  int
	head  int // no open call before this slot
}

type callSlot struct {
	tu   stream.ToolUse
	seq  int
	gone bool
}

// add opens a call; seq orders it among every agent's calls. A call whose
// id is already open is not opened twice.
func (c *callSet) add(tu stream.ToolUse, seq int) {
	if _, open := c.index[tu.ID]; open {
		return
	}
	if c.index == nil {
		c.index = map[string]int{}
	}
	c.index[tu.ID] = len(c.slots)
	c.slots = append(c.slots, callSlot{tu: tu, seq: seq})
	c.live++
}

// end closes the call with this id, if it is open here.
func (c *callSet) end(id string) bool {
	i, open := c.index[id]
	if !open {
		return false
	}
	delete(c.index, id)
	c.slots[i] = callSlot{gone: true}
	c.live--
	for c.head < len(c.slots) && c.slots[c.head].gone {
		c.head++
	}
	if c.live == 0 {
		c.slots, c.head = c.slots[:0], 0
	} else if len(c.slots) > 64 && c.live < len(c.slots)/4 {
		c.compact()
	}
	return true
}

func (c *callSet) compact() {
	kept := c.slots[:0]
	for _, s := range c.slots {
		if !s.gone {
			c.index[s.tu.ID] = len(kept)
			kept = append(kept, s)
		}
	}
	clear(c.slots[len(kept):])
	c.slots, c.head = kept, 0
}

// take removes the open call with this id and returns it.
func (c *callSet) take(id string) (callSlot, bool) {
	i, open := c.index[id]
	if !open {
		return callSlot{}, false
	}
	s := c.slots[i]
	c.end(id)
	return s, true
}

// each calls f on every open call in call order until f says stop.
func (c *callSet) each(f func(s callSlot) bool) {
	for _, s := range c.slots[c.head:] {
		if !s.gone && !f(s) {
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
