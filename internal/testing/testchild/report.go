package testchild

import (
	"encoding/json"
	"os"

	"golang.org/x/sys/unix"
)

// EnvReport names the file where a measured behaviour (see measured.go)
// writes its Report just before it exits. Unset: no report.
const EnvReport = "MALARUN_FAKE_REPORT"

// Report is what a measured fake child tells whoever started malarun with
// it (the benchmark harness in tools/bench): how much CPU the child used,
// so that malarun's own share of a run can be told from its child's, and
// when things happened, on Monotonic's clock.
type Report struct {
	// CPUNs is user+system time of the child and of every descendant it
	// reaped, read just before it exits.
	CPUNs int64 `json:"cpu_ns"`
	// ExitNs is Monotonic just before the child exits.
	ExitNs int64 `json:"exit_ns"`
	// LastLineNs (TimedHang) is when the last line had been written;
	// TermNs when SIGTERM arrived.
	LastLineNs int64 `json:"last_line_ns,omitempty"`
	TermNs     int64 `json:"term_ns,omitempty"`
	ExitCode   int   `json:"exit_code"`
}

// Stamp records the CPU used so far by this process and the children it
// reaped, and the time. Call it just before exiting.
func (r *Report) Stamp() {
	r.CPUNs = cpuNs(unix.RUSAGE_SELF) + cpuNs(unix.RUSAGE_CHILDREN)
	r.ExitNs = Monotonic()
}

// Monotonic is CLOCK_MONOTONIC in nanoseconds: every process on the
// machine reads the same clock, unlike the monotonic reading inside a
// time.Time, so a child's timestamps compare with its parent's.
func Monotonic() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err) // cannot fail on Linux with a valid clock id
	}
	return ts.Nano()
}

func cpuNs(who int) int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(who, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// writeReport stamps r and writes it where EnvReport says, if it says.
// A report that cannot be written shows as a missing report to the reader.
func writeReport(r Report) {
	path := os.Getenv(EnvReport)
	if path == "" {
		return
	}
	r.Stamp()
	b, _ := json.Marshal(r)
	_ = os.WriteFile(path, b, 0o600)
}
