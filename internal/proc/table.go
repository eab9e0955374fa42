package proc

// procStat is one row of the process table, as each kernel's side of the
// seam reads it (os_linux.go from /proc, os_darwin.go from sysctl
// kern.proc). Every decision about a tree (who belongs to it, in what
// order to signal, each once, when it is gone) is made over rows like
// these, so it is the same code, tested on fake tables, on every kernel.
type procStat struct {
	Pid, PPid, Pgid int
	// StartTime tells a process from a later one that reuses its pid. Its
	// unit is the kernel's (Linux: clock ticks since boot; darwin:
	// microseconds since the epoch): start times are compared only with
	// ones read on the same boot of the same kernel (Identity.SameView).
	StartTime uint64
	// Zombie: dead, and still in the table until its parent waits for it.
	Zombie bool
}

func (s procStat) zombie() bool { return s.Zombie }

// Alive reports whether pid names a live process (not a zombie) that
// started at startTime (0 = any start time). kill(pid, 0) is not enough: it
// succeeds on a zombie.
func Alive(pid int, startTime uint64) bool {
	s, err := readStat(pid)
	if err != nil || s.zombie() {
		return false
	}
	return startTime == 0 || s.StartTime == startTime
}

// StartTime returns the start time of pid, in the kernel's unit (see procStat).
func StartTime(pid int) (uint64, error) {
	s, err := readStat(pid)
	if err != nil {
		return 0, err
	}
	return s.StartTime, nil
}

// treeQuery is what one walk of a table needs to know about a tree.
type treeQuery struct {
	root Ref // the direct child: its pid is also its group's id
	self int // malarun: never a member
	// seen holds every member an earlier walk found (pid -> start time):
	// one that re-parented elsewhere is still a member while it lives
	// under that start time, and a pid reused by a stranger is not. The
	// walk adds what it finds.
	seen map[int]uint64
	// adopted: an orphan that re-parented to malarun (as subreaper or PID 1).
	adopted func(procStat) bool
	// marked, where orphans do not re-parent to malarun (no subreaper),
	// finds the tree's processes that the walk from the child cannot reach
	// by the run's marker. nil: not needed, and not paid for.
	marked func(procStat) bool
	// contained are the pids in the run's cgroup: members whatever their
	// parent, group or environment (nil: no cgroup).
	contained map[int]bool
	// unreaped: adopted zombies that could not be waited for yet.
	unreaped map[int]bool
}

// liveMembers returns the live members of the tree in procs, ancestors
// first: the child, its descendants by parent pid, anything in its process
// group, adopted orphans, marked orphans, processes in the run's cgroup,
// and any earlier member still alive under its original start time. Zombies are dead and not members,
// except one that malarun cannot reap yet, and one whose parent is another
// member: that one re-parents to malarun when its parent dies and is reaped
// by a later walk, and until then it counts, or a stop could end with it
// still in the table (seen under load: the parent was killed in the same pass).
func liveMembers(procs []procStat, q treeQuery) []procStat {
	byPid := make(map[int]procStat, len(procs))
	children := make(map[int][]int, len(procs))
	for _, s := range procs {
		byPid[s.Pid] = s
		children[s.PPid] = append(children[s.PPid], s.Pid)
	}
	in := map[int]bool{}
	var queue []int
	add := func(pid int) {
		if pid == q.self || in[pid] {
			return
		}
		in[pid] = true
		queue = append(queue, pid)
	}
	// The group bears the child's pid, and the kernel gives no process a
	// pid that still names a group. So a stranger under that pid means the
	// child's group is gone, and the stranger's own group (setsid) is not it.
	root, ok := byPid[q.root.Pid]
	// (A start time unread at spawn, 0, cannot tell: the group is kept,
	// and the root is a member only as the group's.)
	ourGroup := !ok || q.root.StartTime == 0 || root.StartTime == q.root.StartTime
	if ok && root.StartTime == q.root.StartTime {
		add(q.root.Pid)
	}
	for _, s := range procs {
		if ourGroup && s.Pgid == q.root.Pid || q.adopted != nil && q.adopted(s) {
			add(s.Pid)
		}
		if st, ok := q.seen[s.Pid]; ok && st == s.StartTime || q.contained[s.Pid] {
			add(s.Pid)
		}
	}
	descend := func() {
		for len(queue) > 0 {
			pid := queue[0]
			queue = queue[1:]
			for _, c := range children[pid] {
				add(c)
			}
		}
	}
	descend()
	if q.marked != nil {
		// The orphans went wherever the kernel sent them (launchd; init or
		// the nearest subreaper on Linux): any process not found yet may be
		// one. Descendants are found above without reading anything.
		for _, s := range procs {
			if !in[s.Pid] && s.Pid != q.self && !s.zombie() && q.marked(s) {
				add(s.Pid)
			}
		}
		descend()
	}

	var live []procStat
	for pid := range in {
		s := byPid[pid]
		if q.seen != nil {
			q.seen[pid] = s.StartTime
		}
		orphanToBe := in[s.PPid] && s.PPid != q.self
		if !s.zombie() || q.unreaped[pid] || orphanToBe {
			live = append(live, s)
		}
	}
	return ancestorsFirst(live)
}
