package supervisor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/journal"
)

// createRunDir makes <stateDir>/<issue>/runs/<run-id>/, a folder no earlier
// run used: created exclusively, with a fresh id on the rare collision.
func createRunDir(stateDir, issue string, now time.Time) (string, error) {
	runs := filepath.Join(stateDir, issue, "runs")
	if err := os.MkdirAll(runs, 0o700); err != nil {
		return "", fmt.Errorf("create state directory: %w", err)
	}
	for range 10 {
		dir := filepath.Join(runs, journal.NewRunID(now))
		err := os.Mkdir(dir, 0o700)
		if err == nil {
			return dir, nil
		}
		if !os.IsExist(err) {
			return "", fmt.Errorf("create run directory: %w", err)
		}
	}
	return "", fmt.Errorf("create run directory under %s: ten names in a row were taken", runs)
}

// writePrivate writes a new file readable by the owner only.
func writePrivate(path string, data []byte) error {
	f, err := createExclusive(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// newSessionID returns a random (version 4) UUID for --session-id, so that
// even a run that hangs before its first line has a session to resume.
func newSessionID() string { return journal.NewUUID() }

// stderrTailBytes is how much of the CLI's stderr goes into errors and logs.
const stderrTailBytes = 2048

// tailFile returns the last n bytes of a file, starting at a line boundary
// when it can, trimmed; "" when the file is empty or unreadable.
func tailFile(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(st.Size()-n, 0)
	b := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil {
		return ""
	}
	s := string(b)
	if off > 0 {
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
	}
	return strings.TrimSpace(s)
}
