package proc

import (
	"os"
	"strings"
)

// Identity tells whether a pid recorded by some malarun names a process
// this one can see and judge. A pid means something only within the
// kernel boot and the PID namespace that gave it out: on another machine,
// after a reboot or in another container it names a stranger, or nothing.
// StartTime (clock ticks since boot) then tells the recorded process from
// a later one that reuses its pid.
type Identity struct {
	Pid       int
	StartTime uint64
	// BootID is the kernel's random id of this boot
	// (/proc/sys/kernel/random/boot_id): shared by every container on the
	// machine, new at every reboot. "" when unreadable.
	BootID string
	// PidNS is the inode number of the PID namespace (/proc/self/ns/pid):
	// pids of two namespaces cannot be compared. "" when unreadable.
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

func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// pidNamespace reads the namespace link, "pid:[4026531836]", down to its number.
func pidNamespace() string {
	link, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	inode, ok := strings.CutPrefix(link, "pid:[")
	if !ok {
		return ""
	}
	inode, ok = strings.CutSuffix(inode, "]")
	if !ok {
		return ""
	}
	return inode
}
