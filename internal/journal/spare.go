package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// SpareFile is where the next record is written before it is swapped in.
const SpareFile = ".record.json.spare"

// recordWriter saves record.json without making a new file for every save
// (docs/design.md §D32). Two files of this malarun's own take turns: the
// next record is written into the spare, the spare and record.json are
// swapped in one step (renameat2 RENAME_EXCHANGE), and what was the record
// is the next spare. A save by temporary file and rename made and deleted
// a file each time: on ext4 that is most of a save's CPU (the inode
// allocator skips recently freed inodes), and a run saves its record a
// handful of times.
//
// What a save by rename promised still holds: record.json names one whole
// record at every instant, the old or the new (the swap is atomic), and a
// durable save has the new one on disk before the swap (fsync of the file)
// and the swap on disk before it returns (fsync of the folder). What
// changes is for a reader: the file it opened may become the spare and be
// written again while it reads. ReadRecord notices (readRecord: the file
// changed under it, or the record does not decode and reads differently)
// and reads again.
//
// Only files this writer made (O_EXCL) are ever written into: a spare
// name, or a record, that is not one of them (a previous malarun's, or
// anything planted) is removed or swapped away by name, never opened for
// writing. Where the swap is refused (a file system without it, another
// system than Linux), saves fall back to a new temporary file and a
// rename (writeAtomic); so does one save whose swap fails otherwise.
type recordWriter struct {
	mu  sync.Mutex // one save at a time: they share the two files
	dir string
	// spare is ours and not the record: the next save writes into it.
	// record is ours and is record.json, as far as this writer knows.
	// Either may be nil (not made yet, or lost to a change of the folder).
	spare, record *os.File
	noExchange    bool // the swap was refused once: writeAtomic from now on
}

func (w *recordWriter) save(data []byte, durable bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.noExchange {
		return writeAtomic(w.dir, RecordFile, data, durable)
	}
	spare, err := w.takeSpare()
	if err != nil {
		// The name is taken by something that cannot be removed (a
		// folder planted there): this save makes a file of its own.
		return writeAtomic(w.dir, RecordFile, data, durable)
	}
	if err := fill(spare, data, durable); err != nil {
		w.drop(&w.spare)
		return fmt.Errorf("save %s: %w", filepath.Join(w.dir, RecordFile), err)
	}
	recordPath := filepath.Join(w.dir, RecordFile)
	ours := w.record != nil && holds(recordPath, w.record)
	err = exchange(filepath.Join(w.dir, SpareFile), recordPath)
	switch {
	case err == nil:
		// The spare is the record now; the record before, if it was ours,
		// is the next spare. One that was not is left at the spare's name,
		// to be removed before the next save.
		old := w.record
		w.record, w.spare = spare, nil
		if ours {
			w.spare = old
		} else if old != nil {
			old.Close()
		}
	case errors.Is(err, unix.ENOENT) && os.Rename(filepath.Join(w.dir, SpareFile), recordPath) == nil:
		// No record yet (or the folder was made again): a plain rename.
		w.drop(&w.record)
		w.record, w.spare = spare, nil
	case errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EXDEV):
		w.noExchange = true
		w.closeLocked()
		return writeAtomic(w.dir, RecordFile, data, durable)
	default:
		// Something else changed the folder meanwhile (the spare's name
		// removed, say): this save makes a file of its own.
		w.drop(&w.spare)
		return writeAtomic(w.dir, RecordFile, data, durable)
	}
	if durable {
		return syncDir(w.dir)
	}
	return nil
}

// takeSpare is the spare to write into: the one kept, if its name still
// names it, else a new one made with O_EXCL after removing whatever has
// the name (a file of an earlier malarun, the record before a swap that
// was not this writer's, anything planted: removed by name, never opened).
func (w *recordWriter) takeSpare() (*os.File, error) {
	path := filepath.Join(w.dir, SpareFile)
	if w.spare != nil && holds(path, w.spare) {
		return w.spare, nil
	}
	w.drop(&w.spare)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	w.spare = f
	return f, nil
}

// fill makes f hold data and nothing else: written from the start, then
// cut to its length (the spare held a longer record before, maybe).
func fill(f *os.File, data []byte, durable bool) error {
	if _, err := f.WriteAt(data, 0); err != nil {
		return err
	}
	if err := f.Truncate(int64(len(data))); err != nil {
		return err
	}
	if durable {
		return f.Sync()
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// holds reports whether the name path is the file f itself (not a link
// to it, not another file).
func holds(path string, f *os.File) bool { return sameFile(path, f, os.Lstat) }

func (w *recordWriter) drop(f **os.File) {
	if *f != nil {
		(*f).Close()
		*f = nil
	}
}

// close closes the files and removes the spare, if its name still names
// it: a folder left by a malarun that ended holds the record alone.
func (w *recordWriter) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closeLocked()
}

func (w *recordWriter) closeLocked() {
	if w.spare != nil && holds(filepath.Join(w.dir, SpareFile), w.spare) {
		os.Remove(filepath.Join(w.dir, SpareFile))
	}
	w.drop(&w.spare)
	w.drop(&w.record)
}
