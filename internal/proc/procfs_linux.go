package proc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// procStat is what /proc/<pid>/stat tells about one process. StartTime
// (clock ticks since boot) tells a reused pid from the original.
type procStat struct {
	Pid, PPid, Pgid, Sid int
	State                byte
	StartTime            uint64
}

func (s procStat) zombie() bool { return s.State == 'Z' || s.State == 'X' }

// readStat parses /proc/<pid>/stat. The command name is in parentheses and
// may itself hold spaces and parentheses, so fields are counted from the last ')'.
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(pid, b)
}

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
	s := procStat{Pid: pid, State: f[0][0]}
	var errs [4]error
	s.PPid, errs[0] = strconv.Atoi(string(f[1]))
	s.Pgid, errs[1] = strconv.Atoi(string(f[2]))
	s.Sid, errs[2] = strconv.Atoi(string(f[3]))
	s.StartTime, errs[3] = strconv.ParseUint(string(f[19]), 10, 64)
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

// StartTime returns the start time of pid in clock ticks since boot.
func StartTime(pid int) (uint64, error) {
	s, err := readStat(pid)
	if err != nil {
		return 0, err
	}
	return s.StartTime, nil
}
