package supervisor_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"golang.org/x/sys/unix"

	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// A state_dir malarun cannot write is its own trouble (outcome error, exit
// 1), not the user's: the configuration is right. Tried as a user meets
// it: a read-only file system, a full one (no inode left for the issue's
// folder, its lock, the run's folder: journal.Acquire and createRunDir), and sysfs,
// which refuses every mkdir. Mounting needs CAP_SYS_ADMIN (CI runs as
// root); without it those cases skip. chmod would prove nothing: root
// writes through it.
func TestStateDirMalarunCannotWriteIsItsOwnTrouble(t *testing.T) {
	for _, c := range []struct {
		name string
		dir  func(t *testing.T) string
		says string
	}{
		{"read-only file system", func(t *testing.T) string { return mountTmpfs(t, "ro") }, "read-only file system"},
		// Inodes: the mount's root, state_dir, the folder, its lock, runs/.
		{"no inode for the issue's folder", func(t *testing.T) string { return mountTmpfs(t, "nr_inodes=2") }, "issue-1: no space left on device"},
		{"no inode for the issue's lock", func(t *testing.T) string { return mountTmpfs(t, "nr_inodes=3") }, "lock: no space left on device"},
		{"no inode for the runs folder", func(t *testing.T) string { return mountTmpfs(t, "nr_inodes=4") }, "runs: no space left on device"},
		{"sysfs", func(t *testing.T) string {
			var st unix.Statfs_t
			if err := unix.Statfs("/sys", &st); err != nil || st.Type != unix.SYSFS_MAGIC {
				t.Skip("/sys is not sysfs here")
			}
			return "/sys/malarun-state-test"
		}, "operation not permitted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, testchild.Replay)
				h.cfg.StateDir = c.dir(t)
				_, err, _ := h.run()
				if got := outcome.Of(err); got != outcome.Error {
					t.Fatalf("outcome %q (%v), want %q", got, err, outcome.Error)
				}
				for _, w := range []string{"cannot write its state directory " + h.cfg.StateDir, c.says} {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				if len(h.attempts()) != 0 {
					t.Error("claude was started")
				}
			})
		})
	}
}

// mountTmpfs mounts a small tmpfs with opts over a fresh folder until the
// test ends, or skips when this process may not mount.
func mountTmpfs(t *testing.T, opts string) string {
	t.Helper()
	dir := t.TempDir()
	err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=1m,"+opts)
	if errors.Is(err, unix.EPERM) {
		t.Skip("cannot mount a tmpfs here (needs CAP_SYS_ADMIN)")
	}
	if err != nil {
		t.Fatalf("mount tmpfs (%s): %v", opts, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	if opts == "ro" {
		return dir
	}
	return filepath.Join(dir, "state")
}
