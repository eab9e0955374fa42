package supervisor

import (
	"github.com/malarun/malarun/internal/proc"
)

// The run's own cgroup (docs/design.md §D28), kept by the record keeper
// with the facts that name it: made when the run opens, named in the
// record before any process starts in it, ended and removed when the run
// closes, or by the malarun that reclaims the run (endLeftovers).

// contain makes the run's cgroup, where malarun may. Where it may not
// (not root and not delegated; a container's read-only /sys/fs/cgroup;
// darwin), the subreaper and the run's marker find the run's processes,
// as the table in docs/platforms.md says. newCgroup is Deps.Contain.
func (k *recordKeeper) contain(newCgroup func(name string) (*proc.Cgroup, error)) {
	if newCgroup == nil {
		return
	}
	cg, err := newCgroup(proc.CgroupName(k.base.Marker))
	if err != nil {
		if proc.CanContain {
			k.log.Info().Err(err).Msg("no cgroup of the run's own: its processes are found by the subreaper and the run's marker (a tool process that clears its environment and leaves the tree can outlive a malarun killed outright)")
		}
		return
	}
	k.facts.cgroup = cg
	k.log.Debug().Str("cgroup", cg.Path).Msg("the run's processes are held in its cgroup")
}

// noteCgroupRefused gives up the cgroup once the kernel would not start
// the CLI in it (the CLI then started outside it): said once, and the
// record no longer names it.
func (k *recordKeeper) noteCgroupRefused() {
	cg := k.facts.cgroupInUse()
	if cg == nil || cg.Refused() == nil {
		return
	}
	k.log.Info().Err(cg.Refused()).Str("cgroup", cg.Path).Msg("the kernel would not start claude in the run's cgroup: its processes are found by the subreaper and the run's marker")
	k.releaseCgroup()
}

// releaseCgroup ends what is left in the run's cgroup (nothing, once every
// tree was stopped) and removes it. A group that could not be removed (a
// process stuck in the kernel) stays named in the record, for the next
// malarun of the issue; this one is done with it either way.
func (k *recordKeeper) releaseCgroup() {
	cg := k.facts.cgroupInUse()
	if cg == nil {
		return
	}
	if err := cg.Remove(); err != nil {
		k.facts.cgroupLeft = true
		k.log.Warn().Err(err).Msg("the run's cgroup stays for the next malarun of this issue to end")
		return
	}
	k.facts.cgroup = nil
}
