package testchild

import (
	"bufio"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Behaviours that do to their run's cgroup what a tool running as root
// can (issue 40): freeze it, or leave it.
const (
	// FreezesGroup prints init and a tool call, then writes 1 to its own
	// cgroup's cgroup.freeze: the whole group, itself included, freezes.
	FreezesGroup = "freezes-group"
	// LeavesGroup ignores SIGTERM, starts a setsid grandchild (LeftGroup)
	// that moves itself into the group above its own, prints init and
	// GrandchildLine, and blocks.
	LeavesGroup = "leaves-group"
	// LeftGroup is LeavesGroup's grandchild: it writes its pid to the
	// cgroup.procs of its group's parent, says "ready", and blocks.
	LeftGroup = "left-group"
)

// runGroupTrick runs behaviour if it is one of the above; ok is false
// otherwise.
func runGroupTrick(behaviour string, println func(string)) (code int, ok bool) {
	switch behaviour {
	case FreezesGroup:
		println(InitLine)
		println(ToolLine)
		dir, err := ownCgroupDir()
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "cgroup.freeze"), []byte("1"), 0)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "testchild: freeze:", err)
			return 95, true
		}
		block()
	case LeavesGroup:
		signal.Ignore(syscall.SIGTERM)
		pid := startSetsid(LeftGroup)
		println(InitLine)
		println(GrandchildLine(pid))
		println(ToolLine)
		block()
	case LeftGroup:
		signal.Ignore(syscall.SIGTERM)
		dir, err := ownCgroupDir()
		if err == nil {
			err = os.WriteFile(filepath.Join(filepath.Dir(dir), "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "testchild: leave the group:", err)
			os.Exit(95)
		}
		fmt.Println("ready")
		block()
	default:
		return 0, false
	}
	return 0, true
}

// ownCgroupDir is this process's cgroup v2 folder: its path in
// /proc/self/cgroup under the cgroup2 mount whose root is the hierarchy's.
func ownCgroupDir() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	var rel string
	for line := range strings.SplitSeq(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			rel = p
		}
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields := strings.Fields(pre)
		if ok && strings.HasPrefix(post, "cgroup2 ") && len(fields) >= 5 && fields[3] == "/" {
			return filepath.Join(fields[4], rel), nil
		}
	}
	return "", fmt.Errorf("no cgroup2 mount")
}
