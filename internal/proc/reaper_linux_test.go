package proc

import (
	"os"
	"os/exec"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/malarun/malarun/internal/testing/qemutest"
)

// reapAdopted must take only orphans' exit statuses: never one that
// cmd.Wait (a child the spawner started) or a plain os/exec Wait (a child
// in malarun's own process group) is waiting for. Each case holds a real
// zombie, so the outcome does not depend on who wins a race.
func TestReapAdoptedTakesOnlyOrphans(t *testing.T) {
	qemutest.SkipReexec(t)
	tests := []struct {
		name       string
		ownGroup   bool // started with Setpgid, as the spawner and setsid tools do
		live       bool // recorded as started by the spawner
		wantReaped bool
	}{
		{"a child of malarun it did not start, in a group of its own", true, false, true},
		{"a child the spawner started, awaiting cmd.Wait", true, true, false},
		{"a plain os/exec child in malarun's own group", false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Spawner{self: os.Getpid(), pgid: unix.Getpgrp(), live: map[int]*Process{}}
			// The test binary itself, running no tests: a child that exits at once.
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: tt.ownGroup}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pid := cmd.Process.Pid
			// Wait until it is a zombie, leaving it one (WNOWAIT).
			var info unix.Siginfo
			if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
				t.Fatalf("waitid(%d, WNOWAIT): %v", pid, err)
			}
			if tt.live {
				s.live[pid] = &Process{}
			}
			procs, err := snapshot()
			if err != nil {
				t.Fatal(err)
			}
			pending := s.reapAdopted(procs)
			_, statErr := readStat(pid)
			reaped := statErr != nil
			werr := cmd.Wait() // the owner's wait: it must still get the status unless reaped
			if reaped != tt.wantReaped || len(pending) != 0 {
				t.Errorf("reaped %v (pending %v), want %v", reaped, pending, tt.wantReaped)
			}
			if !tt.wantReaped && (werr != nil || cmd.ProcessState.ExitCode() != 0) {
				t.Errorf("the owner's Wait lost the exit status: %v", werr)
			}
		})
	}
}
