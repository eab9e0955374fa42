package proc

import (
	"slices"
	"testing"
)

func TestAncestorsFirst(t *testing.T) {
	// The CLI (5), its background shell (40), the shell's `timeout` (12,
	// a pid lower than its parent's after a wrap) and its `tail` (30), and
	// an adopted orphan (7) whose parent is gone.
	members := []procStat{{Pid: 30, PPid: 12}, {Pid: 12, PPid: 40}, {Pid: 7, PPid: 1}, {Pid: 40, PPid: 5}, {Pid: 5, PPid: 1}}
	var got []int
	for _, m := range ancestorsFirst(members) {
		got = append(got, m.Pid)
	}
	if want := []int{5, 7, 40, 12, 30}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	// A cycle (two reads of /proc that disagree) still ends.
	if n := len(ancestorsFirst([]procStat{{Pid: 2, PPid: 3}, {Pid: 3, PPid: 2}})); n != 2 {
		t.Errorf("%d members out of a cycle, want 2", n)
	}
}
