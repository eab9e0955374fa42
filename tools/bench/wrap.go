package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/malarun/malarun/internal/testing/testchild"
)

// envWrap, set by the harness, makes this binary the wrapper around the
// real CLI it names (see wrap). Without it, and without testchild's
// behaviour variable, the binary is the harness.
const envWrap = "MALARUN_BENCH_WRAP"

// childReport is what malarun's child reported: the fake child
// (internal/testing/testchild) or the wrapper.
type childReport struct {
	testchild.Report
	// Leftover (wrapper) counts descendants still running when the CLI exited.
	Leftover int `json:"leftover,omitempty"`
}

// wrap runs the real CLI with this process's arguments and standard
// streams, so that the CPU of the CLI's whole tree can be reported: this
// process is a child subreaper, so whatever the CLI leaves behind
// re-parents here, and it reaps every descendant it can before it
// reports. The report is what malarun's rusage counts for its children;
// malarun's own CPU is the rest. The wrapper's own start (a few ms) is
// reported too, so it does not count against malarun.
func wrap(cli string) int {
	unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	// The CLI handles SIGTERM and SIGINT itself; the wrapper lives on to
	// report (malarun signals the whole group). Caught, not ignored: an
	// ignored signal would stay ignored in the CLI across exec.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM, syscall.SIGINT)
	var rep childReport
	cmd := exec.Command(cli, os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = withoutBenchEnv(os.Environ())
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "bench wrap:", err)
		return 127
	}
	err := cmd.Wait()
	rep.ExitCode = cmd.ProcessState.ExitCode()
	if err != nil && rep.ExitCode < 0 {
		rep.ExitCode = 1
	}
	// Reap what re-parented here; give stragglers a short while.
	deadline := time.Now().Add(2 * time.Second)
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if err != nil { // ECHILD: nothing left
			break
		}
		if pid == 0 {
			if time.Now().After(deadline) {
				rep.Leftover++
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if path := os.Getenv(testchild.EnvReport); path != "" {
		rep.Stamp()
		b, _ := json.Marshal(rep)
		os.WriteFile(path, b, 0o600)
	}
	return rep.ExitCode
}

// withoutBenchEnv drops the variables that steer the wrapper and the fake
// child, so that the processes they start do not act on them.
func withoutBenchEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "MALARUN_BENCH_") && !strings.HasPrefix(kv, "MALARUN_FAKE_") {
			out = append(out, kv)
		}
	}
	return out
}
