package e2e_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// zombieTicks waits for pid to exit without reaping it and reads its CPU
// from /proc/pid/stat: its own ticks, and its reaped children's (malarun
// reaps claude's whole tree as the subreaper). Zero where it cannot tell.
func zombieTicks(pid int) (own, children int64) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			if err != nil {
				return 0, 0
			}
			break
		}
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0
	}
	// Fields after the command's closing parenthesis: state is field 3,
	// utime 14, stime 15, cutime 16, cstime 17.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	num := func(i int) int64 { v, _ := strconv.ParseInt(f[i-3], 10, 64); return v }
	if len(f) < 15 {
		return 0, 0
	}
	return num(14) + num(15), num(16) + num(17)
}
