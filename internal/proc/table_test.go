package proc

import (
	"slices"
	"testing"
)

// The tables below are what each kernel shows of one run: malarun (pid
// 10), the CLI (100, its own group), its shell (101), a setsid tool the
// shell started (200), and whatever each case adds. Linux re-parents
// orphans to malarun, the child subreaper; darwin to launchd (pid 1).
const (
	self    = 10
	cli     = 100
	cliTime = 1000
	marker  = "MALARUN_RUN=issue-1/r1"
)

func baseTable() []procStat {
	return []procStat{
		{Pid: 1, PPid: 0, Pgid: 1, StartTime: 1},
		{Pid: self, PPid: 1, Pgid: self, StartTime: 900},
		{Pid: cli, PPid: self, Pgid: cli, StartTime: cliTime},
		{Pid: 101, PPid: cli, Pgid: cli, StartTime: 1001},
		{Pid: 200, PPid: 101, Pgid: 200, StartTime: 1002},
		{Pid: 500, PPid: 1, Pgid: 500, StartTime: 5}, // a stranger: some daemon
	}
}

func pids(members []procStat) []int {
	var out []int
	for _, m := range members {
		out = append(out, m.Pid)
	}
	return out
}

func TestLiveMembersOnEachKernel(t *testing.T) {
	markedPids := map[int]bool{}
	marked := func(s procStat) bool { return markedPids[s.Pid] }
	tests := []struct {
		name     string
		add      []procStat
		seen     map[int]uint64
		adopted  bool // orphans re-parent to malarun (Linux subreaper)
		marked   []int
		unreaped map[int]bool
		want     []int
	}{
		{name: "the tree, ancestors first", adopted: true, want: []int{cli, 101, 200}},
		{name: "linux: a setsid escapee adopted by malarun",
			add: []procStat{{Pid: 300, PPid: self, Pgid: 300, StartTime: 1003}}, adopted: true,
			want: []int{cli, 300, 101, 200}},
		{name: "darwin: an escapee adopted by launchd carries the marker",
			add:    []procStat{{Pid: 300, PPid: 1, Pgid: 300, StartTime: 1003}},
			marked: []int{300}, want: []int{cli, 300, 101, 200}},
		{name: "darwin: launchd's other children are strangers",
			add:    []procStat{{Pid: 300, PPid: 1, Pgid: 300, StartTime: 1003}},
			marked: []int{}, want: []int{cli, 101, 200}},
		{name: "darwin: an escapee seen before is found without its marker",
			add:  []procStat{{Pid: 300, PPid: 1, Pgid: 300, StartTime: 1003}},
			seen: map[int]uint64{300: 1003}, marked: []int{}, want: []int{cli, 300, 101, 200}},
		{name: "a member's pid reused by a stranger",
			add:  []procStat{{Pid: 300, PPid: 1, Pgid: 300, StartTime: 7777}},
			seen: map[int]uint64{300: 1003}, adopted: true, want: []int{cli, 101, 200}},
		{name: "a zombie of a member counts until it is reaped",
			add:     []procStat{{Pid: 400, PPid: 101, Pgid: cli, StartTime: 1004, Zombie: true}},
			adopted: true, want: []int{cli, 101, 200, 400}},
		{name: "a zombie adopted by malarun is gone once reaped",
			add:     []procStat{{Pid: 400, PPid: self, Pgid: 400, StartTime: 1004, Zombie: true}},
			adopted: true, want: []int{cli, 101, 200}},
		{name: "an adopted zombie that cannot be reaped yet still counts",
			add:     []procStat{{Pid: 400, PPid: self, Pgid: 400, StartTime: 1004, Zombie: true}},
			adopted: true, unreaped: map[int]bool{400: true}, want: []int{cli, 400, 101, 200}},
		{name: "linux without a subreaper: an escapee adopted by another subreaper carries the marker",
			add:    []procStat{{Pid: 50, PPid: 1, Pgid: 50, StartTime: 2}, {Pid: 300, PPid: 50, Pgid: 300, StartTime: 1003}, {Pid: 301, PPid: 300, Pgid: 300, StartTime: 1004}},
			marked: []int{300}, want: []int{cli, 300, 101, 301, 200}},
		{name: "darwin: a marked zombie under launchd is dead, not a member",
			add:    []procStat{{Pid: 400, PPid: 1, Pgid: 400, StartTime: 1004, Zombie: true}},
			marked: []int{400}, want: []int{cli, 101, 200}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table := append(baseTable(), tt.add...)
			q := treeQuery{root: Ref{Pid: cli, StartTime: cliTime}, self: self, seen: map[int]uint64{}, unreaped: tt.unreaped}
			for pid, st := range tt.seen {
				q.seen[pid] = st
			}
			if tt.adopted {
				q.adopted = func(s procStat) bool { return s.PPid == self }
			}
			if tt.marked != nil {
				clear(markedPids)
				for _, p := range tt.marked {
					markedPids[p] = true
				}
				q.marked = marked
			}
			if got := pids(liveMembers(table, q)); !slices.Equal(got, tt.want) {
				t.Errorf("members %v, want %v", got, tt.want)
			}
		})
	}
}

// The CLI was reaped, its group emptied, and its pid given to a stranger
// that made a group of its own (setsid): a stop after the CLI's exit must
// not take that group, or the stranger's child, for the tree.
func TestLiveMembersNeedTheRootsStartTime(t *testing.T) {
	table := []procStat{{Pid: cli, PPid: 1, Pgid: cli, StartTime: 5555}, {Pid: 101, PPid: cli, Pgid: cli, StartTime: 5556}}
	q := treeQuery{root: Ref{Pid: cli, StartTime: cliTime}, self: self, seen: map[int]uint64{}}
	if got := pids(liveMembers(table, q)); len(got) != 0 {
		t.Errorf("members %v: a stranger's group taken for the tree", got)
	}
}

// The walks of one stop, over the tables a kernel shows as it goes: the
// group is signalled, a process that ignores SIGTERM is not sent another,
// a process forked during the grace gets its own, one SIGKILL pass ends
// what is left, and the tree is gone only when nothing of it is left and
// the child has been waited for.
func TestStopWalksSignalEachProcessOnceUntilTheTreeIsGone(t *testing.T) {
	q := treeQuery{root: Ref{Pid: cli, StartTime: cliTime}, self: self, seen: map[int]uint64{},
		adopted: func(s procStat) bool { return s.PPid == self }}
	termed := signalled{}
	walk := func(table []procStat) []procStat { return liveMembers(table, q) }

	first := walk(baseTable())
	termed.markGroup(first, cli) // kill(-cli, SIGTERM)
	if got := pids(termed.newcomers(first)); !slices.Equal(got, []int{200}) {
		t.Fatalf("after the group's signal, SIGTERM to %v, want [200] (the setsid tool)", got)
	}
	// The CLI ignores SIGTERM and stays; the shell obeys and is gone, its
	// zombie reaped by the CLI.
	ignoring := []procStat{baseTable()[0], baseTable()[1], baseTable()[2], baseTable()[4], baseTable()[5]}
	if got := termed.newcomers(walk(ignoring)); len(got) != 0 {
		t.Fatalf("a second SIGTERM to %v: each process gets one", pids(got))
	}
	// The CLI forks during the grace.
	forked := append(ignoring, procStat{Pid: 102, PPid: cli, Pgid: cli, StartTime: 1010})
	if got := pids(termed.newcomers(walk(forked))); !slices.Equal(got, []int{102}) {
		t.Fatalf("SIGTERM to %v during the grace, want [102] (the newcomer)", got)
	}
	// After the grace every member left gets SIGKILL.
	// The tool's parent (the shell) is gone, so it has no ancestor left.
	if got := pids(walk(forked)); !slices.Equal(got, []int{cli, 200, 102}) {
		t.Fatalf("SIGKILL to %v, want [100 200 102]", got)
	}
	// The CLI is a zombie until malarun waits for it; the tool's zombie,
	// adopted by malarun, is reaped.
	dying := []procStat{baseTable()[0], baseTable()[1], {Pid: cli, PPid: self, Pgid: cli, StartTime: cliTime, Zombie: true}}
	if got := walk(dying); len(got) != 0 {
		t.Fatalf("members %v of a tree whose every process is dead", pids(got))
	}
}
