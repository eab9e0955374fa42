package supervisor_test

import (
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// A state_dir that names a file is a mistake of the configuration: exit 2.
func TestStateDirThatIsAFileIsAUsageError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.Replay)
		file := filepath.Join(t.TempDir(), "state")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		h.cfg.StateDir = file
		_, err, _ := h.run()
		wantKind(t, err, outcome.Usage, "state_dir "+file+" cannot be a directory")
		if len(h.attempts()) != 0 {
			t.Error("claude was started")
		}
	})
}
