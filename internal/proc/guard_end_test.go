package proc

import (
	"slices"
	"testing"
)

// What the guard takes once malarun is gone. The dead run: CLI 100 (group
// 100, start 1000), its shell 101, a setsid tool 200 that carries the
// marker "M=a". The cutoff is 2000.
func TestGuardTargetsOnlyTheDeadRunsTrees(t *testing.T) {
	const cutoff = 2000
	watch := map[int]guardNote{100: {Op: "watch", Pgid: 100, Start: 1000, Marker: "M=a"}}
	base := []procStat{
		{Pid: 1, PPid: 0, Pgid: 1, StartTime: 1},
		{Pid: 100, PPid: 1, Pgid: 100, StartTime: 1000},
		{Pid: 101, PPid: 100, Pgid: 100, StartTime: 1001},
		{Pid: 200, PPid: 1, Pgid: 200, StartTime: 1002},
		{Pid: 500, PPid: 1, Pgid: 500, StartTime: 5}, // a stranger
	}
	markers := map[int]string{100: "M=a", 101: "M=a", 200: "M=a"}
	tests := []struct {
		name  string
		swap  []procStat // rows that replace base's rows of the same pid
		add   []procStat
		marks map[int]string
		first []procStat // an earlier pass's table, to take parents from
		want  []int
	}{
		{name: "the group and the marked escapee", want: []int{100, 200, 101}},
		{name: "a later malarun of the same run: its CLI carries the marker but started after the cutoff",
			add:   []procStat{{Pid: 600, PPid: 599, Pgid: 600, StartTime: 2500}, {Pid: 599, PPid: 1, Pgid: 599, StartTime: 2400}},
			marks: map[int]string{600: "M=a"}, want: []int{100, 200, 101}},
		{name: "the dead run's tool forks after the cutoff: its child is taken through its parent",
			first: base,
			add:   []procStat{{Pid: 201, PPid: 200, Pgid: 201, StartTime: 2100}},
			marks: map[int]string{201: "M=a"}, want: []int{100, 200, 101, 201}},
		{name: "a marked process cut off and not of a taken parent is left",
			add:   []procStat{{Pid: 201, PPid: 1, Pgid: 201, StartTime: 2100}},
			marks: map[int]string{201: "M=a"}, want: []int{100, 200, 101}},
		{name: "a group member that cleared its environment is still the group's",
			add:  []procStat{{Pid: 102, PPid: 101, Pgid: 100, StartTime: 2200}},
			want: []int{100, 200, 101, 102}},
		{name: "the leader's pid reused by a stranger: the group is not the tree's",
			swap:  []procStat{{Pid: 100, PPid: 1, Pgid: 100, StartTime: 3000}, {Pid: 101, PPid: 100, Pgid: 100, StartTime: 3001}},
			marks: map[int]string{100: "", 101: ""}, want: []int{200}},
		{name: "zombies are dead, not targets",
			add:   []procStat{{Pid: 300, PPid: 1, Pgid: 300, StartTime: 1003, Zombie: true}},
			marks: map[int]string{300: "M=a"}, want: []int{100, 200, 101}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table := slices.Clone(base)
			for _, row := range tt.swap {
				i := slices.IndexFunc(table, func(s procStat) bool { return s.Pid == row.Pid })
				table[i] = row
			}
			table = append(table, tt.add...)
			marks := map[int]string{}
			for p, m := range markers {
				marks[p] = m
			}
			for p, m := range tt.marks {
				marks[p] = m
			}
			carries := func(pid int, marker string) bool { return marks[pid] == marker }
			g := &guardEnd{watched: watch, cutoff: cutoff, taken: map[int]uint64{}, marks: markMemo{}}
			if tt.first != nil {
				g.targets(tt.first, carries)
			}
			if got := pids(g.targets(table, carries)); !slices.Equal(got, tt.want) {
				t.Errorf("targets %v, want %v", got, tt.want)
			}
		})
	}
}
