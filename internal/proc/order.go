package proc

import "slices"

// ancestorsFirst orders a tree's members so that each comes after its
// parent (when the parent is a member), then by pid. A stop signals them
// in this order, and the order matters: in `cmd; echo done >> file` the
// shell must get its SIGTERM before cmd does, or cmd's death lets the
// shell run the rest of its line (a background task's side effect after
// the task was killed) before its own signal arrives. A process killed by
// SIGTERM runs nothing more; one whose child died first can.
func ancestorsFirst(members []procStat) []procStat {
	parent := make(map[int]int, len(members))
	for _, m := range members {
		parent[m.Pid] = m.PPid
	}
	depth := make(map[int]int, len(members))
	var depthOf func(pid, hops int) int
	depthOf = func(pid, hops int) int {
		if d, ok := depth[pid]; ok {
			return d
		}
		ppid, ok := parent[pid]
		d := 0
		if ok && ppid != pid && hops < len(members) { // a table read twice can disagree: never loop
			if _, member := parent[ppid]; member {
				d = depthOf(ppid, hops+1) + 1
			}
		}
		depth[pid] = d
		return d
	}
	out := slices.Clone(members)
	for _, m := range out {
		depthOf(m.Pid, 0)
	}
	slices.SortStableFunc(out, func(a, b procStat) int {
		if da, db := depth[a.Pid], depth[b.Pid]; da != db {
			return da - db
		}
		return a.Pid - b.Pid
	})
	return out
}
