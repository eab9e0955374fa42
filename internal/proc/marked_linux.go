package proc

import (
	"bytes"
	"os"
	"strconv"
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
// init when their malarun died, which no parent-child walk can find.
func FindMarked(env string) []Ref {
	want := []byte(env + "\x00")
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []Ref
	for _, d := range entries {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/environ")
		if err != nil || !bytes.HasPrefix(b, want) && !bytes.Contains(b, append([]byte{0}, want...)) {
			continue
		}
		s, err := readStat(pid)
		if err != nil || s.zombie() {
			continue
		}
		out = append(out, Ref{Pid: pid, StartTime: s.StartTime})
	}
	return out
}

// EndMarked ends every process carrying env, looking again until none is
// left (a leftover can fork while it is being ended) or maxKillTime has
// passed, plus refs. It returns what it found in all.
func EndMarked(env string, refs []Ref, grace time.Duration) (found int, left []Ref) {
	until := time.Now().Add(grace + maxKillTime)
	for {
		var batch []Ref
		for _, r := range append(FindMarked(env), refs...) {
			if Alive(r.Pid, r.StartTime) {
				batch = append(batch, r)
			}
		}
		refs = nil
		found += len(batch)
		if len(batch) == 0 {
			return found, nil
		}
		left = EndRefs(batch, grace)
		if time.Now().After(until) {
			return found, left
		}
	}
}

// EndRefs ends processes that are not malarun's children (left by a
// malarun that died): SIGTERM and SIGCONT to each one still alive under its
// recorded start time, up to grace for them to exit, then SIGKILL. It
// returns the refs still alive at the end (stuck in the kernel).
func EndRefs(refs []Ref, grace time.Duration) []Ref {
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
