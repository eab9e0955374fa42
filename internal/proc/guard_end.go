package proc

import (
	"time"

	"golang.org/x/sys/unix"
)

// guardEnd is the guard's work once malarun is gone: ending the trees it
// was told to watch, and nothing else.
type guardEnd struct {
	watched map[int]guardNote // by group id
	// cutoff is when malarun was seen gone, in the kernel's start-time
	// unit: a marked process started later is a later malarun's, unless
	// its parent is one this guard took (the dead run's CLI goes on forking
	// until it is ended).
	cutoff uint64
	taken  map[int]uint64 // every process taken so far: pid -> start time
	marks  markMemo       // whether a process carries a watched marker
}

// targets returns the live processes of the watched trees in table: the
// members of a watched group, while the group is still the tree's (no
// stranger holds its leader's pid), and the processes that carry a
// watched marker and started before the cutoff or whose parent was taken.
// What it returns is recorded as taken.
func (g *guardEnd) targets(table []procStat, carries func(pid int, marker string) bool) []procStat {
	byPid := make(map[int]procStat, len(table))
	for _, s := range table {
		byPid[s.Pid] = s
	}
	var out []procStat
	for _, s := range table {
		if s.zombie() || s.Pid <= 1 {
			continue
		}
		if g.inWatchedGroup(s, byPid) || g.marked(s, byPid, carries) {
			out = append(out, s)
		}
	}
	for _, s := range out {
		g.taken[s.Pid] = s.StartTime
	}
	return ancestorsFirst(out)
}

func (g *guardEnd) inWatchedGroup(s procStat, byPid map[int]procStat) bool {
	n, ok := g.watched[s.Pgid]
	if !ok {
		return false
	}
	// The kernel gives no process a pid that still names a group: a
	// stranger under the leader's pid means the tree's group is gone.
	leader, present := byPid[n.Pgid]
	return !present || leader.StartTime == n.Start
}

func (g *guardEnd) marked(s procStat, byPid map[int]procStat, carries func(int, string) bool) bool {
	parentStart, parentTaken := g.taken[s.PPid]
	parent, present := byPid[s.PPid]
	fromTaken := parentTaken && present && parent.StartTime == parentStart
	if s.StartTime > g.cutoff && !fromTaken {
		return false
	}
	return g.marks.carries(s, func(pid int) bool {
		for _, n := range g.watched {
			if carries(pid, n.Marker) {
				return true
			}
		}
		return false
	})
}

// end signals the targets until none is left: one SIGTERM (and SIGCONT)
// each during grace, then SIGKILL on every pass, for at most maxKillTime.
// It returns how many processes it took.
func (g *guardEnd) end(grace time.Duration) int {
	termed := signalled{}
	killFrom := time.Now().Add(grace)
	killUntil := killFrom.Add(maxKillTime)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		table, err := snapshot()
		if err != nil {
			return len(g.taken)
		}
		targets := g.targets(table, carries)
		now := time.Now()
		if len(targets) == 0 || now.After(killUntil) {
			return len(g.taken)
		}
		if now.Before(killFrom) {
			for _, s := range termed.newcomers(targets) {
				_ = unix.Kill(s.Pid, unix.SIGTERM)
				_ = unix.Kill(s.Pid, unix.SIGCONT)
			}
		} else {
			for _, s := range targets {
				_ = unix.Kill(s.Pid, unix.SIGKILL)
			}
		}
		<-tick.C
	}
}
