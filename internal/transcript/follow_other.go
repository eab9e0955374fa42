//go:build !linux

package transcript

import (
	"errors"
	"os"
)

// watchFile has no notification mechanism to offer here: followers poll.
func watchFile(string) (*os.File, error) {
	return nil, errors.ErrUnsupported
}
