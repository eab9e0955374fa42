package proc

import "os"

// Identity tells whether a pid recorded by some malarun names a process
// this one can see and judge. A pid means something only within the
// kernel boot and the PID namespace that gave it out: on another machine,
// after a reboot or in another container it names a stranger, or nothing.
// StartTime (in the kernel's unit, see procStat) then tells the recorded
// process from a later one that reuses its pid.
type Identity struct {
	Pid       int
	StartTime uint64
	// BootID names this boot of this kernel. Linux: the kernel's random
	// boot id (/proc/sys/kernel/random/boot_id), shared by every container
	// on the machine, new at every reboot. darwin: "darwin:" and
	// kern.bootsessionuuid. The two forms never equal each other, so a record
	// written on one kernel never lets another match a pid (or compare a
	// start time in the other's unit). "" when unreadable.
	BootID string
	// PidNS: Linux, the inode number of the PID namespace
	// (/proc/self/ns/pid), as pids of two namespaces cannot be compared;
	// darwin has no PID namespaces and says "darwin". "" when unreadable.
	PidNS string
}

// Self is this process's identity.
func Self() Identity {
	id := Identity{Pid: os.Getpid(), BootID: bootID(), PidNS: pidNamespace()}
	id.StartTime, _ = StartTime(id.Pid)
	return id
}

// SameView reports whether pids recorded under other can be checked here:
// the same boot of the same kernel, and the same PID namespace. Unknown
// parts (an older record, an unreadable /proc) never count as the same.
func (id Identity) SameView(other Identity) bool {
	return id.BootID != "" && id.PidNS != "" && id.BootID == other.BootID && id.PidNS == other.PidNS
}
