package journal

import (
	"bytes"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/statefile"
)

// maxRecordBytes bounds what is read of a record: malarun's own records
// are a few kilobytes (a checkpoint of at most 64 KiB is the largest
// part), so anything near this was not written by malarun.
const maxRecordBytes = 16 << 20

// decodeError says a record cannot be read, naming the file.
type decodeError struct {
	Path string
	Err  error
}

func (e *decodeError) Error() string {
	return fmt.Sprintf("issue record %s is damaged (%v); move it away or run with --reset to start the issue over", e.Path, e.Err)
}

func (e *decodeError) Unwrap() error { return e.Err }

// ReadRecord reads and decodes the record at path.
func ReadRecord(path string) (record.Record, error) {
	return readRecord(path, func() ([]byte, bool, error) { return readOnce(path, maxRecordBytes) })
}

// maxReads bounds the reads of one record: saves are a millisecond and
// more apart and a read of a record takes microseconds.
const maxReads = 3

// readRecord decodes the record that read gives, reading again while a
// save may have torn it: the file changed under the read (not stable: the
// run swapped it out and wrote into it, recordWriter), or it does not
// decode and says something else than the read before (a change the
// file's clock was too coarse to show). A record that reads the same
// twice and does not decode is damaged; the last read is taken as it is.
func readRecord(path string, read func() (b []byte, stable bool, err error)) (record.Record, error) {
	var before []byte
	for try := 1; ; try++ {
		b, stable, err := read()
		if err != nil {
			return record.Record{}, refusal(path, err)
		}
		r, err := record.Decode(b)
		if try == maxReads || stable && (err == nil || bytes.Equal(b, before)) {
			if err != nil {
				return record.Record{}, &decodeError{Path: path, Err: err}
			}
			return r, nil
		}
		before = b
	}
}

// refusal is a read's error, where a record file is unfit to read (a
// FIFO, a link, a planted huge file: statefile refuses them at once) a
// damaged record.
func refusal(path string, err error) error {
	var tooLarge *statefile.TooLargeError
	var notRegular *statefile.NotRegularError
	switch {
	case errors.As(err, &tooLarge):
		return &decodeError{Path: path, Err: fmt.Errorf("it is over %d MiB, far larger than any record malarun writes", maxRecordBytes>>20)}
	case errors.As(err, &notRegular):
		return &decodeError{Path: path, Err: notRegular}
	}
	return err
}

// readOnce reads the record file at path the safe way (statefile: no
// link, FIFO or device, at most limit bytes); stable says the file did
// not change while it was read (its change time and size) and path still
// names it.
func readOnce(path string, limit int64) (b []byte, stable bool, err error) {
	f, err := statefile.OpenAtMost(path, limit)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	var before, after unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &before); err != nil {
		return nil, false, err
	}
	if b, err = statefile.ReadOpened(f, path, limit); err != nil {
		return nil, false, err
	}
	var named unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &after); err != nil {
		return nil, false, err
	}
	stillNamed := unix.Lstat(path, &named) == nil && named.Dev == after.Dev && named.Ino == after.Ino
	return b, before.Ctim == after.Ctim && before.Size == after.Size && stillNamed, nil
}
