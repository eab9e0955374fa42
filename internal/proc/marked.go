package proc

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Ref names a process by pid and start time, so a reused pid is never
// mistaken for the process that was recorded.
type Ref struct {
	Pid       int
	StartTime uint64
}

// FindMarked lists the live processes whose environment holds env (such as
// "MALARUN_RUN=issue-1/2026..."). Every process a run starts inherits the
// marker, including tool processes that called setsid and re-parented to
// init (or launchd) when their malarun died, which no parent-child walk can find.
func FindMarked(env string) []Ref {
	procs, err := snapshot()
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []Ref
	for _, s := range procs {
		if s.Pid == self || s.zombie() || !carries(s.Pid, env) {
			continue
		}
		out = append(out, Ref{Pid: s.Pid, StartTime: s.StartTime})
	}
	return out
}

// carries reports whether pid's environment holds the entry env. A process
// whose environment cannot be read (another user's, or gone) does not.
func carries(pid int, env string) bool {
	b, err := environOf(pid)
	return err == nil && hasEntry(b, env)
}

// markMemo remembers, per process (pid and start time), whether it carries
// a marker: walks during a stop, or the guard's passes, look at every
// process again and again (launchd has hundreds of children), and a
// process's environment is read once.
type markMemo map[Ref]bool

func (m markMemo) carries(s procStat, read func(pid int) bool) bool {
	r := refOf(s)
	v, ok := m[r]
	if !ok {
		v = read(s.Pid)
		m[r] = v
	}
	return v
}

// EndMarked ends every process carrying env, looking again until none is
// left (a leftover can fork while it is being ended) or maxKillTime has
// passed, plus refs. It returns what it found in all.
func EndMarked(env string, refs []Ref, grace time.Duration) (found int, left []Ref) {
	until := time.Now().Add(grace + maxKillTime)
	for {
		batch := FindMarked(env)
		for _, r := range refs {
			if Alive(r.Pid, r.StartTime) {
				batch = append(batch, r)
			}
		}
		refs = nil
		found += len(batch)
		if len(batch) == 0 {
			return found, nil
		}
		left = endRefs(batch, grace)
		if time.Now().After(until) {
			return found, left
		}
	}
}

// endRefs ends processes that are not malarun's children (left by a
// malarun that died): SIGTERM and SIGCONT to each one still alive under its
// recorded start time, up to grace for them to exit, then SIGKILL. It
// returns the refs still alive at the end (stuck in the kernel).
func endRefs(refs []Ref, grace time.Duration) []Ref {
	alive := func() []Ref {
		var out []Ref
		for _, r := range refs {
			if Alive(r.Pid, r.StartTime) {
				out = append(out, r)
			}
		}
		return out
	}
	left := alive()
	for _, r := range left {
		_ = unix.Kill(r.Pid, unix.SIGTERM)
		_ = unix.Kill(r.Pid, unix.SIGCONT)
	}
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	deadline := time.Now().Add(grace)
	for len(left) > 0 && time.Now().Before(deadline) {
		<-tick.C
		left = alive()
	}
	killUntil := time.Now().Add(maxKillTime)
	for len(left) > 0 && time.Now().Before(killUntil) {
		for _, r := range left {
			_ = unix.Kill(r.Pid, unix.SIGKILL)
		}
		<-tick.C
		left = alive()
	}
	return left
}
