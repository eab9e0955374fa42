package testchild

import (
	"bytes"
	"os"
	"path/filepath"
	"time"
)

// WaitUntil checks cond every few milliseconds until it holds (true), limit
// has passed or done is closed (false). Tests wait with it for a handshake
// another process writes to a file (a line in a transcript, a record field):
// such a file has no channel to wait on. The test goes on the moment the
// handshake is there; no test passes by sleeping. done may be nil.
func WaitUntil(limit time.Duration, done <-chan struct{}, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if !time.Now().Before(deadline) {
			return false
		}
		select {
		case <-done:
			return cond()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return true
}

// FileHolds reports whether a file matching the glob pattern contains s.
func FileHolds(pattern, s string) bool {
	files, _ := filepath.Glob(pattern)
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}
