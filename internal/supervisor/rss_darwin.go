package supervisor

import "golang.org/x/sys/unix"

// PeakRSSKB is malarun's own peak resident set, not its children's (see
// rss_linux.go). darwin's getrusage gives ru_maxrss in bytes (Linux's in
// kilobytes).
func PeakRSSKB() int64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Maxrss / 1024
}
