package testchild

import (
	"bytes"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
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

// UnignoreSignals makes the signals the test process was started with
// ignored (a CI job under nohup ignores SIGHUP, a background job SIGINT)
// reach the processes it starts with their default disposition: a signal
// this process catches is reset to the default by exec, an ignored one
// would stay ignored, and malarun keeps an ignored signal ignored on
// purpose. Tests that send those signals to malarun need them live. Call it
// in a TestMain, in the test role only.
func UnignoreSignals() {
	for _, s := range []os.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGPIPE} {
		if signal.Ignored(s) {
			signal.Notify(make(chan os.Signal, 1), s)
		}
	}
}
