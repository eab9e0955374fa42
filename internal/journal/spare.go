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

// spareFile is where the next record is written before it is swapped in.
const spareFile = ".record.json.spare"

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
// Only files this writer made (O_EXCL) are ever written into, and only
// while they have no other name (a hard-link snapshot of the folder
// shares them): a spare name, or a record, that is not one of them (a
// previous malarun's, or anything planted) is removed or swapped away by
// name, never opened for writing. Every swap is checked by inode: the
// record's name must be the file the save wrote, else what another
// process put at the spare's name is swapped straight back out and the
// save made a file of its own, with a warning (docs/design.md §D32,
// §D37). Where the swap is refused (a file system without it, another
// system than Linux), saves fall back to a new temporary file and a
// rename (writeAtomic); so does one save whose swap fails otherwise.
type recordWriter struct {
	mu  sync.Mutex // one save at a time: they share the two files
	dir string
	// spare is ours and not the record: the next save writes into it.
	// record is ours and is record.json, as far as this writer knows.
	// Either may be nil (not made yet, or lost to a change of the folder).
	spare, record *owned
	noExchange    bool // the swap was refused once: writeAtomic from now on
	// warn hears of a save that another process bent (a name changed
	// under it): the save was made a file of its own (nil: none told).
	warn func(error)
	// racer, when set, runs in a save after the spare is written
	// ("filled") and between the last check of the spare's name and the
	// swap ("checked"): where a test plays the process that renames
	// something onto that name.
	racer func(step string)
}

// bentError says that another process changed the folder in the
// middle of a save (a link renamed onto the spare's name, say): the save
// did not swap that in as the record, and was written as a file of its
// own instead.
type bentError struct {
	Path  string // the record's
	Found string // what the check found
}

func (e *bentError) Error() string {
	return fmt.Sprintf("saving %s, found %s; that save was written as a file of its own", e.Path, e.Found)
}

func (w *recordWriter) save(data []byte, durable bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.noExchange {
		return w.ownFile(data, durable, "")
	}
	spare, err := w.takeSpare()
	if err != nil {
		// The name is taken by something that cannot be removed (a
		// folder planted there): this save makes a file of its own.
		return w.ownFile(data, durable, "")
	}
	if err := fill(spare.File, data, durable); err != nil {
		w.drop(&w.spare)
		return fmt.Errorf("save %s: %w", filepath.Join(w.dir, RecordFile), err)
	}
	sparePath, recordPath := filepath.Join(w.dir, spareFile), filepath.Join(w.dir, RecordFile)
	w.race("filled")
	ours := w.record != nil && holds(recordPath, w.record)
	if !holds(sparePath, spare) {
		// The spare's name was changed since takeSpare: what it names now
		// is not what this save wrote. Nothing is swapped; the file of its
		// own replaces record.json, whose file is the writer's no more.
		w.drop(&w.record)
		return w.bent(data, durable, "the spare's name no longer names the file written")
	}
	w.race("checked")
	err = exchange(sparePath, recordPath)
	switch {
	case err == nil:
		if !holds(recordPath, spare) {
			// Another process put something else at the spare's name
			// between the check and the swap (a link renamed onto it):
			// that is record.json now, and this save's file is not. It is
			// swapped straight back out (the record before is record.json
			// again, the intruder at the spare's name, removed before the
			// next save), and the save written as a file of its own.
			_ = exchange(sparePath, recordPath)
			w.drop(&w.record)
			return w.bent(data, durable, "another file swapped in as the record (the spare's name was changed during the swap)")
		}
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
	case errors.Is(err, unix.ENOENT) && os.Rename(sparePath, recordPath) == nil:
		// No record yet (or the folder was made again): a plain rename.
		w.drop(&w.record)
		if !holds(recordPath, spare) {
			return w.bent(data, durable, "another file renamed in as the record (the spare's name was changed during the rename)")
		}
		w.record, w.spare = spare, nil
	case errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EXDEV):
		w.noExchange = true
		w.closeLocked()
		return w.ownFile(data, durable, "")
	default:
		// Something else changed the folder meanwhile (the spare's name
		// removed, say): this save makes a file of its own.
		w.drop(&w.spare)
		return w.ownFile(data, durable, "")
	}
	if durable {
		return syncDir(w.dir)
	}
	return nil
}

func (w *recordWriter) race(step string) {
	if w.racer != nil {
		w.racer(step)
	}
}

// bent makes a save whose names another process changed a file of its
// own (writeAtomic, which checks its own rename), and says so. The spare
// this save wrote is dropped, unless the caller kept another: whatever it
// became is not the writer's any more.
func (w *recordWriter) bent(data []byte, durable bool, found string) error {
	if w.spare != nil && !holds(filepath.Join(w.dir, spareFile), w.spare) {
		w.drop(&w.spare)
	}
	return w.ownFile(data, durable, found)
}

// ownFile makes a save a file of its own (writeAtomic). What bent it, if
// anything (found, or another file that writeAtomic found renamed in), is
// told to warn.
func (w *recordWriter) ownFile(data []byte, durable bool, found string) error {
	replaced, err := writeAtomic(w.dir, RecordFile, data, durable)
	if replaced && found == "" {
		found = "another file renamed in over the save's temporary file"
	}
	if err == nil && found != "" && w.warn != nil {
		w.warn(&bentError{Path: filepath.Join(w.dir, RecordFile), Found: found})
	}
	return err
}

// takeSpare is the spare to write into: the one kept, if its name still
// names it and it has no other name, else a new one made with O_EXCL
// after removing whatever has the name (a file of an earlier malarun, the
// record before a swap that was not this writer's, anything planted:
// removed by name, never opened). A file with another name is never
// written into: a hard-link snapshot of the folder (cp -al, as backup
// tools make) shares it, and would change with it; removing the spare's
// name leaves the snapshot's whole.
func (w *recordWriter) takeSpare() (*owned, error) {
	path := filepath.Join(w.dir, spareFile)
	if w.spare != nil && sole(path, w.spare) {
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
	o, err := own(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	w.spare = o
	return o, nil
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

// owned is a file this writer made, with its device and inode, read once
// when it was made: that a name is this file takes one lstat.
type owned struct {
	*os.File
	dev, ino uint64
}

func own(f *os.File) (*owned, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, err
	}
	return &owned{File: f, dev: uint64(st.Dev), ino: uint64(st.Ino)}, nil
}

// holds reports whether the name path is the file f itself (not a link
// to it, not another file).
func holds(path string, f *owned) bool {
	_, ok := lstatOf(path, f)
	return ok
}

// sole reports whether the name path is the file f itself and f has no
// other name.
func sole(path string, f *owned) bool {
	st, ok := lstatOf(path, f)
	return ok && st.Nlink == 1
}

// lstatOf is what the name path is (not followed), and whether it is f.
func lstatOf(path string, f *owned) (unix.Stat_t, bool) {
	var st unix.Stat_t
	ok := unix.Lstat(path, &st) == nil && uint64(st.Dev) == f.dev && uint64(st.Ino) == f.ino
	return st, ok
}

func (w *recordWriter) drop(f **owned) {
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
	if w.spare != nil && holds(filepath.Join(w.dir, spareFile), w.spare) {
		os.Remove(filepath.Join(w.dir, spareFile))
	}
	w.drop(&w.spare)
	w.drop(&w.record)
}
