package supervisor

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/malarun/malarun/internal/outcome"
)

// stateDirError says whose mistake it is when malarun cannot make its
// folders under state_dir (docs/design.md §D19). A path that can never be
// a directory (a file on the way, a name too long, a symbolic link loop)
// is the configuration's: exit 2, and the same line fails the same way.
// Anything else (permission denied, a read-only or full file system, an
// I/O error, a file system without locks) is malarun's own trouble, exit 1
// as docs/configuration.md says: the configuration is right, the machine is not.
func stateDirError(stateDir string, err error) error {
	if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ENAMETOOLONG) || errors.Is(err, syscall.ELOOP) {
		return &RunError{Kind: outcome.Usage, Detail: fmt.Sprintf("state_dir %s cannot be a directory: %v", stateDir, err)}
	}
	return fmt.Errorf("malarun cannot write its state directory %s (it makes folders, files and locks there): %w", stateDir, err)
}
