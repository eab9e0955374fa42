package proc

// signalled records the processes a signal was sent to, by pid and start
// time, so that each one is sent it once: a pid the kernel has given to a
// new process since names a process that has not been sent it yet.
type signalled map[Ref]bool

func refOf(s procStat) Ref { return Ref{Pid: s.Pid, StartTime: s.StartTime} }

// markGroup records the members in process group pgid as sent the signal:
// a signal to the group reached them.
func (sent signalled) markGroup(members []procStat, pgid int) {
	for _, m := range members {
		if m.Pgid == pgid {
			sent[refOf(m)] = true
		}
	}
}

// newcomers returns the members not sent the signal yet and records them
// as sent.
func (sent signalled) newcomers(members []procStat) []procStat {
	var out []procStat
	for _, m := range members {
		if r := refOf(m); !sent[r] {
			sent[r] = true
			out = append(out, m)
		}
	}
	return out
}
