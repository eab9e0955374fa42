package proc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Linux's side of the seam (os_darwin.go is the other): the process table
// from /proc, a child subreaper for orphans, and a parent-death signal, so
// no guard process is needed (guard.go).

// hasParentDeathSignal: Pdeathsig kills the CLI if malarun dies.
const hasParentDeathSignal = true

// CanSubreap: the kernel has child subreapers (prctl), so NewSpawner not
// becoming one is worth a warning.
const CanSubreap = true

// childAttr puts the child in a new process group and has the kernel kill
// it if malarun dies. Pdeathsig fires when the spawning OS thread exits
// (golang/go#27505): Spawner.Start keeps that thread locked.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// intoCgroup has clone3 start the child inside the cgroup whose folder fd
// names (-1: none), so it is in it before it runs anything.
func intoCgroup(attr *syscall.SysProcAttr, fd int) {
	if fd >= 0 {
		attr.UseCgroupFD, attr.CgroupFD = true, fd
	}
}

// becomeSubreaper makes malarun the parent that orphans of its trees
// re-parent to, instead of init, so they can still be found and reaped.
func becomeSubreaper() bool {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == nil
}

// readStat parses /proc/<pid>/stat.
func readStat(pid int) (procStat, error) {
	b, err := readSmall("/proc/"+strconv.Itoa(pid)+"/stat", 4096)
	if err != nil {
		return procStat{}, err
	}
	return parseStat(pid, b)
}

// parseStat reads one /proc/<pid>/stat. The command name is in parentheses
// and may itself hold spaces and parentheses, so fields are counted from
// the last ')'. StartTime is field 22, clock ticks since boot.
func parseStat(pid int, b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 > len(b) {
		return procStat{}, fmt.Errorf("/proc/%d/stat: no command field", pid)
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state); starttime is field 22.
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	s := procStat{Pid: pid, Zombie: f[0][0] == 'Z' || f[0][0] == 'X'}
	var errs [3]error
	s.PPid, errs[0] = strconv.Atoi(string(f[1]))
	s.Pgid, errs[1] = strconv.Atoi(string(f[2]))
	s.StartTime, errs[2] = strconv.ParseUint(string(f[19]), 10, 64)
	for _, e := range errs {
		if e != nil {
			return procStat{}, fmt.Errorf("/proc/%d/stat: %w", pid, e)
		}
	}
	return s, nil
}

// snapshot reads every process in /proc. Processes that vanish while it
// reads are skipped: they are gone, which is what callers want to know.
func snapshot() ([]procStat, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	out := make([]procStat, 0, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		s, err := readStat(pid)
		if err != nil {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// environOf is pid's environment as the kernel keeps it: NAME=value
// entries, each ended by a NUL.
func environOf(pid int) ([]byte, error) {
	return os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
}

// startTimeNow is the present in the unit of procStat.StartTime (clock
// ticks since boot): USER_HZ is 100 on every Linux architecture's ABI, and
// /proc/uptime counts from the same boot clock the start times do.
func startTimeNow() uint64 {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0
	}
	up, _, _ := strings.Cut(string(b), " ")
	return ticksOf(up)
}

// ticksOf reads /proc/uptime's "12345.67" as 1234567 hundredths, exactly
// (a float would make "0.29" 28); 0 when it is not that.
func ticksOf(up string) uint64 {
	whole, frac, ok := strings.Cut(up, ".")
	secs, err1 := strconv.ParseUint(whole, 10, 64)
	hundredths, err2 := strconv.ParseUint(frac, 10, 64)
	if !ok || len(frac) != 2 || err1 != nil || err2 != nil || secs > 1<<50 {
		return 0
	}
	return secs*100 + hundredths
}

// bootID is the kernel's random id of this boot
// (/proc/sys/kernel/random/boot_id): shared by every container on the
// machine, new at every reboot. "" when unreadable.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// pidNamespace is the inode number of malarun's PID namespace: pids of two
// namespaces cannot be compared. The link reads "pid:[4026531836]". ""
// when unreadable.
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

// hasChildLists reports whether the kernel keeps each thread's children in
// /proc (CONFIG_PROC_CHILDREN, on in the kernels of every major
// distribution): then a tree whose orphans come home to malarun is read
// from those lists, not from every process of the machine (family.go).
func hasChildLists() bool {
	_, err := os.Stat("/proc/thread-self/children")
	return err == nil
}

// childPids lists pid's children as the kernel keeps them: each thread's
// /proc/<pid>/task/<tid>/children (a child belongs to the thread that
// forked it, or that it re-parented to). A pid that is gone, or a thread
// that ended meanwhile, has none. The lists are read one at a time, so a
// child that moves between them meanwhile (its thread ended, its parent
// died) can be missed: callers read again (a stop polls) or ask the
// kernel (noChildren) before they conclude that nothing is left.
func childPids(pid int) []int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	fd, err := openRetry(func() (int, error) {
		return unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil
	}
	tasks, _ := readDirFD(fd)
	unix.Close(fd)
	var out []int
	for _, t := range tasks {
		b, err := readSmall(dir+t.name+"/children", 1<<20)
		if err != nil {
			continue // the thread ended meanwhile
		}
		for _, f := range bytes.Fields(b) {
			if c, err := strconv.Atoi(string(f)); err == nil && c > 0 {
				out = append(out, c)
			}
		}
	}
	return out
}

// noChildren reports whether malarun has no child at all, live or dead,
// of any thread and whatever its exit signal: the kernel's own answer
// (ECHILD), which no race between reading and reaping can get wrong.
func noChildren() bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT|unix.WALL, nil)
		if err != unix.EINTR {
			return err == unix.ECHILD
		}
	}
}
