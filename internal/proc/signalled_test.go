package proc

import (
	"reflect"
	"testing"
)

// Stop walks the tree again and again during the grace; each walk must
// pick out only the processes that have not had their SIGTERM yet.
func TestSignalledPicksEachProcessOnce(t *testing.T) {
	const group = 100
	child := procStat{Pid: 100, Pgid: group, StartTime: 5}
	forked := procStat{Pid: 101, Pgid: group, StartTime: 6}      // in the group, seen with the child
	tool := procStat{Pid: 200, Pgid: 200, StartTime: 7}          // setsid: outside the group
	late := procStat{Pid: 300, Pgid: 300, StartTime: 9}          // setsid, started during the grace
	lateInGroup := procStat{Pid: 102, Pgid: group, StartTime: 9} // forked into the group after its signal
	reused := procStat{Pid: 200, Pgid: 200, StartTime: 50}

	type walk struct {
		members []procStat
		want    []procStat
	}
	tests := []struct {
		name     string
		grouped  bool // the group was sent the signal before the first walk
		walks    []walk
		wantSent int
	}{
		{"the group signal covers its members; a setsid tool gets its own", true, []walk{
			{[]procStat{child, forked, tool}, []procStat{tool}},
			{[]procStat{child, forked, tool}, nil},
		}, 3},
		{"a process found by a later walk gets one, once", true, []walk{
			{[]procStat{child, tool}, []procStat{tool}},
			{[]procStat{child, tool, late}, []procStat{late}},
			{[]procStat{child, tool, late, lateInGroup}, []procStat{lateInGroup}},
			{[]procStat{child, tool, late, lateInGroup}, nil},
		}, 4},
		{"a reused pid names a new process", true, []walk{
			{[]procStat{child, tool}, []procStat{tool}},
			{[]procStat{child}, nil},
			{[]procStat{child, reused}, []procStat{reused}},
		}, 3},
		{"no group signal (the child has exited): each member gets its own", false, []walk{
			{[]procStat{forked, tool}, []procStat{forked, tool}},
			{[]procStat{forked, tool}, nil},
		}, 2},
		{"nothing left", true, []walk{{nil, nil}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sent := signalled{}
			for i, w := range tt.walks {
				if i == 0 && tt.grouped {
					sent.markGroup(w.members, group)
				}
				if got := sent.newcomers(w.members); !reflect.DeepEqual(got, w.want) {
					t.Errorf("walk %d: signalled %v, want %v", i+1, got, w.want)
				}
			}
			if len(sent) != tt.wantSent {
				t.Errorf("%d processes recorded as sent the signal, want %d", len(sent), tt.wantSent)
			}
		})
	}
}
