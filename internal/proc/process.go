package proc

import (
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Process is one started child and the tree it grows.
type Process struct {
	Pid       int
	StartTime uint64 // in the kernel's unit (see procStat), to tell a reused pid apart

	spawner *Spawner
	done    chan struct{}
	exit    Exit

	// marker finds the tree's orphans, where they do not re-parent to
	// malarun ("" where they do); marks remembers what it found, under p.mu.
	marker   string
	marks    markMemo
	withdraw sync.Once // tells the guard, once, that the tree is gone
	// cgroup holds every process of the tree, whatever it did to leave it
	// (nil: the child was not started in one); while it does, the group,
	// not a walk of every process of the machine, says who is a member.
	// beyondGroup: look beyond the group after all (the check, at the end
	// of a stop, for processes that left it).
	cgroup      *Cgroup
	beyondGroup bool

	mu   sync.Mutex
	seen map[int]uint64 // every tree member ever seen: pid -> start time

	treeWalks atomic.Int64 // the stops' looks at the tree (gone), counted
	// graceWalks counts the looks in the grace alone (a stop's backoff,
	// pollEvery doubling to graceWalksAtMost): how many the timers make,
	// whatever the machine's speed (a loaded machine's SIGKILL phase may
	// look more times while the kernel takes its time to reap).
	graceWalks atomic.Int64
}

// Done is closed when the direct child has exited and been waited for.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exit is valid once Done is closed.
func (p *Process) Exit() Exit {
	<-p.done
	return p.exit
}

func (p *Process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Tree returns the pids of the live members of the child's tree (see members).
func (p *Process) Tree() []int {
	var pids []int
	for _, m := range p.members() {
		pids = append(pids, m.Pid)
	}
	return pids
}

// members returns the live members of the child's tree (see liveMembers),
// reaping on the way the adopted zombies that malarun can reap, as found
// in the table tableOf(p.source()) gives.
func (p *Process) members() []procStat { return p.membersIn(p.source()) }

// tableSource is where a walk of the tree reads its processes.
type tableSource int

const (
	// fromGroup: the run's cgroup (cgroup.procs, and the groups below it)
	// and the members seen before; the kernel keeps the list, and no other
	// process of the machine is read.
	fromGroup tableSource = iota
	// fromFamily: malarun's descendants (family.go), where orphans come
	// home to it; only the tree's processes (and malarun's other
	// children) are read.
	fromFamily
	// fromMachine: every process of the machine (no subreaper: darwin, a
	// kernel without child lists).
	fromMachine
)

// source is where this tree is read from now: its group while it holds
// the tree (beyondGroup: the check, at the end of a stop, for processes
// that left it), else malarun's descendants where they are the tree's
// whole family, else the machine.
func (p *Process) source() tableSource {
	switch {
	case p.cgroup != nil && !p.beyondGroup:
		return fromGroup
	case p.spawner.readsFamily:
		return fromFamily
	default:
		return fromMachine
	}
}

func (p *Process) membersIn(src tableSource) []procStat {
	var procs []procStat
	switch src {
	case fromGroup:
		procs = p.withSeen(rowsOf(p.cgroup.subtreePids()))
	case fromFamily:
		procs = p.withSeen(p.spawner.family())
	default:
		var err error
		if procs, err = p.spawner.walk(); err != nil {
			return nil
		}
	}
	unreaped := p.spawner.reapAdopted(procs)
	p.mu.Lock()
	defer p.mu.Unlock()
	q := treeQuery{
		root: Ref{Pid: p.Pid, StartTime: p.StartTime}, self: p.spawner.self, seen: p.seen,
		adopted: p.spawner.adopted, unreaped: unreaped,
	}
	if p.marker != "" {
		read := func(pid int) bool { return carries(pid, p.marker) }
		q.marked = func(s procStat) bool { return p.marks.carries(s, read) }
	}
	if p.cgroup != nil {
		q.contained = map[int]bool{}
		for _, pid := range p.cgroup.pids() {
			q.contained[pid] = true
		}
	}
	return liveMembers(procs, q)
}

// rowsOf reads the table rows of pids (those still there).
func rowsOf(pids []int) []procStat {
	rows := make([]procStat, 0, len(pids))
	for _, pid := range pids {
		if s, err := readStat(pid); err == nil {
			rows = append(rows, s)
		}
	}
	return rows
}

// withSeen adds to rows the members seen before that they do not list and
// that still live under the same start time: a zombie has left its group,
// one adopted by malarun is malarun's to reap, and a live one has left the
// group (only root can do that; the check at the end of a stop ends it).
func (p *Process) withSeen(rows []procStat) []procStat {
	listed := make(map[int]bool, len(rows))
	for _, r := range rows {
		listed[r.Pid] = true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for pid, st := range p.seen {
		if listed[pid] {
			continue
		}
		if s, err := readStat(pid); err == nil && s.StartTime == st {
			rows = append(rows, s)
		}
	}
	return rows
}

// pollEvery is how often a stop re-walks the tree after SIGKILL, and how
// soon after SIGTERM; it only runs while a tree is being ended, never
// while a child is merely running.
const pollEvery = 10 * time.Millisecond

// graceWalksAtMost is the longest wait between two walks of a tree in its
// grace (they back off from pollEvery): in a soak of sixteen runs on two
// cores a stop walked its tree up to 49 times every 10 ms, 7 % of
// malarun's CPU.
const graceWalksAtMost = 100 * time.Millisecond

// maxKillTime bounds the SIGKILL phase: a process stuck in uninterruptible
// sleep cannot be killed, and malarun must never hang on it.
const maxKillTime = 5 * time.Second

// Stop ends the whole tree: one SIGTERM (and SIGCONT, so a stopped process
// can act on it) to the group, one to each member outside it, up to grace
// for them to exit, then SIGKILL until nothing is left. Closing hurry skips
// the rest of the grace. Stop on a tree whose child has already exited ends
// what is left of it (tool processes that outlived the CLI). Safe to call
// more than once.
//
// SIGTERM goes to each process once, however often the tree is walked
// during the grace: many programs (Node ones included) take a second
// SIGTERM as "exit now" and cut their own cleanup short. A process found by
// a later walk (forked since, or a setsid tool process outside the group)
// gets its own, once; processes are told apart by pid and start time, so a
// pid reused by a new process is signalled again.
func (p *Process) Stop(grace time.Duration, hurry <-chan struct{}) StopReport {
	start := time.Now()
	var rep StopReport
	termed, killed := signalled{}, signalled{}
	if p.cgroup != nil {
		// A frozen group acts on no SIGTERM (a tool may freeze its own):
		// thawed, the tree can stop as it should.
		p.cgroup.thaw()
	}
	p.stopRound(grace, hurry, &rep, termed, killed)
	if p.cgroup != nil && !p.beyondGroup {
		// The group held the tree; one look beyond it (malarun's
		// descendants, or the machine's table) is the check for what left
		// it (root can move a process out): such a process, still the
		// run's by its parent or its marker, is ended too, and named.
		p.beyondGroup = true
		if members, done := p.gone(); !done {
			for _, m := range members {
				rep.Escaped = append(rep.Escaped, m.Pid)
			}
			p.stopRound(grace, hurry, &rep, termed, killed)
		}
	}
	rep.Termed, rep.Killed, rep.Duration = len(termed), len(killed), time.Since(start)
	return rep
}

// stopRound is one stop of the tree as members() finds it: SIGTERM, the
// grace, then SIGKILL (cgroup.kill for a group) until nothing is left.
func (p *Process) stopRound(grace time.Duration, hurry <-chan struct{}, rep *StopReport, termed, killed signalled) {
	members, done := p.gone()
	if done {
		return
	}

	if !p.exited() {
		// The child has not been waited for, so its pid still names its
		// group. One signal reaches every member at once, those being forked
		// included. Members seen in the group before it was sent, and right
		// after, count as signalled: a process forked between the signal and
		// the second walk (microseconds) is the one that gets no SIGTERM and
		// is killed after the grace, rather than any process getting two.
		_ = unix.Kill(-p.Pid, unix.SIGTERM)
		_ = unix.Kill(-p.Pid, unix.SIGCONT)
		termed.markGroup(members, p.Pid)
		members, done = p.gone()
		termed.markGroup(members, p.Pid)
	}
	term := func(members []procStat) {
		for _, m := range termed.newcomers(members) {
			// ESRCH is fine: it may have exited since the walk.
			_ = unix.Kill(m.Pid, unix.SIGTERM)
			_ = unix.Kill(m.Pid, unix.SIGCONT)
		}
	}
	if done {
		return
	}
	term(members)

	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	// The grace's walks back off, from pollEvery to graceWalksAtMost: a
	// tree that takes its time (claude saving its session, a tool ending
	// its work) is walked a few times, not every 10 ms; the child's own
	// exit wakes the walk at once.
	wait := pollEvery
	walk := time.NewTimer(wait)
	defer walk.Stop()
	childDone := p.done // set to nil once seen, so a closed channel cannot spin the loop
termWait:
	for {
		select {
		case <-childDone:
			childDone = nil
		case <-walk.C:
			wait = min(2*wait, graceWalksAtMost)
			walk.Reset(wait)
		case <-deadline.C:
			break termWait
		case <-hurry:
			break termWait
		}
		p.graceWalks.Add(1)
		if members, done = p.gone(); done {
			return
		}
		term(members) // newcomers only
	}

	// SIGKILL cannot be caught, so repeating it is harmless, and it goes to
	// the group again on every pass to catch what the group forks meanwhile.
	// A cgroup is ended by the kernel at once, forks included (cgroup.kill;
	// freeze, kill, thaw before Linux 5.14).
	killUntil := time.Now().Add(maxKillTime)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		if members, done = p.gone(); done {
			break
		}
		if time.Now().After(killUntil) {
			for _, m := range members {
				rep.Left = append(rep.Left, m.Pid)
			}
			break
		}
		if !p.exited() {
			_ = unix.Kill(-p.Pid, unix.SIGKILL)
		}
		if p.cgroup != nil && !p.beyondGroup {
			p.cgroup.killAll()
		}
		for _, m := range members {
			killed[refOf(m)] = true
			_ = unix.Kill(m.Pid, unix.SIGKILL)
		}
		<-tick.C
	}
}

// gone walks the tree: its live members, and whether nothing is left of it
// (the child waited for and no member alive).
func (p *Process) gone() ([]procStat, bool) {
	p.treeWalks.Add(1)
	src := p.source()
	m := p.membersIn(src)
	done := len(m) == 0 && p.exited()
	if done && src == fromFamily && !noChildren() {
		// The lists of children are read one at a time and can miss a
		// process that moved between them meanwhile. Nothing is left for
		// sure when malarun has no child at all (the kernel says so);
		// where it has others (its own plain children), one walk of the
		// machine decides.
		m = p.membersIn(fromMachine)
		done = len(m) == 0
	}
	if done {
		// Nothing of the tree is left for a guard to end.
		p.withdraw.Do(func() { p.spawner.tellGuard(guardNote{Op: "done", Pgid: p.Pid}) })
	}
	return m, done
}
