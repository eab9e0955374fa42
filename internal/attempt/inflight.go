package attempt

import (
	"slices"

	"github.com/malarun/malarun/internal/stream"
)

// FirstOutstanding is the first n of the calls Outstanding lists (every
// agent's calls without a result, in call order) and how many more there
// are: what a record keeps of them (record.MaxInFlight), at a cost that
// does not grow with the calls open, since the record is kept on every
// line (docs/design.md §D37). Outstanding builds the whole list: for a
// stop, once.
func (s *State) FirstOutstanding(n int) (first []stream.ToolUse, more int) {
	return s.live.firstOutstanding(n)
}

func (l *liveness) firstOutstanding(n int) ([]stream.ToolUse, int) {
	if n <= 0 {
		return nil, len(l.outstanding())
	}
	type call struct {
		tu  stream.ToolUse
		seq int
	}
	var found []call
	total := 0
	add := func(c *callSet) {
		total += c.live
		taken := 0
		c.each(func(s callSlot) bool {
			found = append(found, call{s.tu, s.seq})
			taken++
			return taken < n
		})
	}
	add(&l.main.calls)
	for _, a := range l.subs {
		if a.call.ID != "" && !a.background {
			found = append(found, call{a.call, a.seq})
			total++
		}
		add(&a.calls)
	}
	slices.SortStableFunc(found, func(x, y call) int { return x.seq - y.seq })
	found = found[:min(len(found), n)]
	out := make([]stream.ToolUse, len(found))
	for i, c := range found {
		out[i] = c.tu
	}
	return out, total - len(out)
}
