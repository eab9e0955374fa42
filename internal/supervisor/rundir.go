package supervisor

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
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

// ensureRunDir makes the run folder again if it was removed while the run
// went on (a tidied state directory), with the run's prompt and the
// attempt prompts this invocation wrote (a fresh session starts again from
// the one its session began with), which malarun holds: the session lives
// on in claude's own files, so the run can go on; only the earlier
// transcripts are lost.
func (r *runner) ensureRunDir() error {
	if _, err := os.Stat(r.base.RunDir); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := os.MkdirAll(r.base.RunDir, 0o700); err != nil {
		return fmt.Errorf("make the removed run folder again: %w", err)
	}
	r.timeline.Reopen() // its file went with the folder
	files := map[string][]byte{filepath.Join(r.base.RunDir, "prompt.md"): r.task}
	maps.Copy(files, r.prompts)
	for path, text := range files {
		if err := writePrivate(path, text); err != nil {
			return fmt.Errorf("save a prompt in the run folder made again: %w", err)
		}
	}
	r.log.Warn().Str("run_dir", r.base.RunDir).Msg("the run folder was removed while the run went on: made again with the run's prompt; the transcripts of earlier attempts are gone")
	return nil
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
