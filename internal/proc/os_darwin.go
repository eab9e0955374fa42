package proc

import (
	"fmt"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// darwin's side of the seam (os_linux.go is the other). The process table
// comes from sysctl kern.proc, environments from kern.procargs2. There is
// no child subreaper (orphans go to launchd, pid 1, and are found by the
// run's marker: Spec.Marker) and no parent-death signal (a guard process
// ends the tree if malarun dies: guard.go).

// hasParentDeathSignal: darwin has none; the guard stands in.
const hasParentDeathSignal = false

// CanSubreap: darwin has no child subreaper; the marker stands in.
const CanSubreap = false

// szomb is p_stat of a zombie (xnu bsd/sys/proc.h SZOMB).
const szomb = 5

// childAttr puts the child in a new process group.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// intoCgroup: darwin has no cgroups (a Cgroup is never made there).
func intoCgroup(*syscall.SysProcAttr, int) {}

// becomeSubreaper: darwin cannot.
func becomeSubreaper() bool { return false }

// hasChildLists: darwin's orphans never come home (no subreaper), so a
// tree is never read from malarun's descendants there.
func hasChildLists() bool { return false }

func childPids(int) []int { return nil }

func noChildren() bool { return false }

// rowOf turns the kernel's kinfo_proc into a table row. The start time is
// p_starttime (a timeval) in microseconds since the epoch.
func rowOf(k *unix.KinfoProc) procStat {
	st := k.Proc.P_starttime
	return procStat{
		Pid: int(k.Proc.P_pid), PPid: int(k.Eproc.Ppid), Pgid: int(k.Eproc.Pgid),
		StartTime: uint64(st.Sec)*1_000_000 + uint64(st.Usec),
		Zombie:    k.Proc.P_stat == szomb,
	}
}

func readStat(pid int) (procStat, error) {
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return procStat{}, err
	}
	if int(k.Proc.P_pid) != pid { // (x/sys says EIO for a pid with no process; this is a second guard)
		return procStat{}, fmt.Errorf("kern.proc.pid.%d: no such process", pid)
	}
	return rowOf(k), nil
}

func snapshot() ([]procStat, error) {
	ks, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, err
	}
	out := make([]procStat, 0, len(ks))
	for i := range ks {
		if ks[i].Proc.P_pid > 0 { // pid 0 is the kernel
			out = append(out, rowOf(&ks[i]))
		}
	}
	return out, nil
}

// environOf reads pid's environment out of kern.procargs2, which the
// kernel gives for the caller's own user's processes (all, for root).
func environOf(pid int) ([]byte, error) {
	buf, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return nil, err
	}
	return procArgsEnv(buf), nil
}

// startTimeNow is the present in the unit of procStat.StartTime.
func startTimeNow() uint64 {
	var tv unix.Timeval
	if unix.Gettimeofday(&tv) != nil {
		return 0
	}
	return uint64(tv.Sec)*1_000_000 + uint64(tv.Usec)
}

// bootID names this boot by kern.bootsessionuuid, new at every boot.
// (kern.boottime is not stable: macOS recomputes it as now minus uptime
// when the clock is corrected.) Its "darwin:" form can never equal a
// Linux boot id (a bare UUID), so a record written on the other kernel
// never counts as the same view (Identity.SameView). The record checks
// this form (record.checkOwner).
func bootID() string {
	id, err := unix.Sysctl("kern.bootsessionuuid")
	if err != nil || id == "" {
		return ""
	}
	return "darwin:" + strings.ToLower(id)
}

// pidNamespace: darwin has one pid space per boot.
func pidNamespace() string { return "darwin" }
