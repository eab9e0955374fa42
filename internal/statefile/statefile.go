// Package statefile opens the files malarun reads back from its state
// directory (records, locks, usage-limit files, run prompts, timelines,
// transcripts) one safe way. The directory can be written by others (a
// restored CI cache, a shared volume, another job on the runner): a FIFO
// there would block open(2) for good, a device or socket is no file of
// malarun's, a symbolic link can lead anywhere, and a sparse file of
// gigabytes would be read whole. So a file is opened without blocking and
// without following a final symbolic link, must be regular, and is read
// up to a cap its caller names (issue 32).
package statefile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// NotRegularError is a path that names something other than a regular
// file: a FIFO, socket, device, directory or symbolic link.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	what := "not a regular file"
	switch {
	case e.Mode&fs.ModeNamedPipe != 0:
		what = "a FIFO, not a regular file"
	case e.Mode&fs.ModeSymlink != 0:
		what = "a symbolic link, which malarun does not follow there"
	case e.Mode&fs.ModeSocket != 0:
		what = "a socket, not a regular file"
	case e.Mode&fs.ModeDevice != 0:
		what = "a device, not a regular file"
	case e.Mode.IsDir():
		what = "a directory, not a regular file"
	}
	return e.Path + " is " + what
}

// TooLargeError is a file over the cap its reader allows.
type TooLargeError struct {
	Path  string
	Size  int64 // as fstat said, or more than Limit
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is %d bytes, over the %d malarun reads of it", e.Path, e.Size, e.Limit)
}

// Open opens path for reading: never blocking (O_NONBLOCK: a FIFO's open
// returns at once, and is then refused), never through a symbolic link at
// the end of the path (ELOOP is reported as a NotRegularError), and only a
// regular file. A missing file is an error satisfying errors.Is(err,
// fs.ErrNotExist), as os.Open's.
func Open(path string) (*os.File, error) { return open(path, safe) }

// Read reads a whole file opened as Open does, refusing one over limit
// bytes before reading any of it (a TooLargeError).
func Read(path string, limit int64) ([]byte, error) { return read(path, limit, safe) }

// OpenAtMost is Open that also refuses a file over limit bytes (a
// TooLargeError), for a caller that only needs to know the file is fit to
// read, or reads it its own way.
func OpenAtMost(path string, limit int64) (*os.File, error) { return openAtMost(path, limit, safe) }

// ReadFollowing is Read for a file the user names (a CA bundle, claude's
// settings): a symbolic link there is the user's own choice and is
// followed; the rest holds (no blocking open, a regular file, the cap).
func ReadFollowing(path string, limit int64) ([]byte, error) { return read(path, limit, noBlock) }

// OpenFile opens path as Open does (never blocking, no final symbolic
// link, only a regular file) for a writer: flag adds the access mode and
// O_CREATE, O_APPEND, ...; perm is for a file it creates. The lock and the
// timeline, which malarun writes, are opened so.
func OpenFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	return openFile(path, flag|safe, perm)
}

func open(path string, flags int) (*os.File, error) { return openFile(path, os.O_RDONLY|flags, 0) }

func openFile(path string, flags int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flags|syscall.O_CLOEXEC, perm)
	if err != nil {
		if pe, ok := err.(*fs.PathError); ok && pe.Err == syscall.ELOOP {
			return nil, &NotRegularError{Path: path, Mode: fs.ModeSymlink}
		}
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Path: path, Mode: st.Mode()}
	}
	return f, nil
}

func openAtMost(path string, limit int64, flags int) (*os.File, error) {
	f, err := open(path, flags)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.Size() > limit {
		f.Close()
		return nil, &TooLargeError{Path: path, Size: st.Size(), Limit: limit}
	}
	return f, nil
}

func read(path string, limit int64, flags int) ([]byte, error) {
	f, err := openAtMost(path, limit, flags)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadOpened(f, path, limit)
}

// ReadOpened reads the rest of f, opened from path by OpenAtMost, and
// refuses it if it grew past limit since the open (a TooLargeError).
func ReadOpened(f *os.File, path string, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit { // it grew since the fstat
		return nil, &TooLargeError{Path: path, Size: int64(len(b)), Limit: limit}
	}
	return b, nil
}
