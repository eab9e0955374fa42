// Package journal keeps the state of each issue on disk, so that a run
// survives malarun's own death: the record of each issue (internal/record)
// written atomically and durably, read back checked, listed, and a lock
// that allows one malarun per issue.
package journal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/malarun/malarun/internal/record"
)

// File names inside <state_dir>/<issue>/.
const (
	RecordFile = "record.json"
	LockFile   = "lock"
)

// Journal is one issue's folder, locked by this malarun.
type Journal struct {
	dir    string
	lock   *lockHolder
	writer *recordWriter
}

// BusyError: another malarun holds the issue.
type BusyError struct {
	Issue  string
	Holder string // what the lock file says about its holder
}

func (e *BusyError) Error() string {
	if e.Holder == "" {
		return fmt.Sprintf("issue %s is being run by another malarun", e.Issue)
	}
	return fmt.Sprintf("issue %s is being run by another malarun (%s)", e.Issue, e.Holder)
}

// Acquire takes the issue's lock, held until Release or until this process
// dies (flock is released by the kernel then, which is how a later malarun
// knows a "processing" record was orphaned). holder is written into the
// lock file for the next malarun to show. While held, a lock file that is
// removed or replaced (a cleanup job, a tidied state directory) is made
// again and locked within keepEvery (see lockHolder).
func Acquire(stateDir, issue, holder string) (*Journal, error) {
	dir := filepath.Join(stateDir, issue)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	l, err := takeLock(filepath.Join(dir, LockFile), issue, holder)
	if err != nil {
		return nil, err
	}
	l.keep(keepEvery)
	return &Journal{dir: dir, lock: l, writer: &recordWriter{dir: dir}}, nil
}

// OnBentSave has warn told of each save that another process bent (a
// *bentError: a name in the folder changed under the save). Such a save
// still succeeds, as a file of its own; warn says it happened.
func (j *Journal) OnBentSave(warn func(error)) {
	j.writer.mu.Lock()
	defer j.writer.mu.Unlock()
	j.writer.warn = warn
}

// Release drops the lock.
func (j *Journal) Release() {
	j.writer.close()
	if j.lock != nil {
		j.lock.release()
		j.lock = nil
	}
}

// Lost is closed once another malarun has taken the issue over: possible
// only after the lock file was removed, and then only for a malarun that
// cannot see this one (another host or PID namespace). Every Save then
// fails with a *LostError; the run must stop.
func (j *Journal) Lost() <-chan struct{} { return j.lock.lostC }

// Dir is the issue's folder.
func (j *Journal) Dir() string { return j.dir }

// Load reads the record; ok is false when the issue has none yet.
func (j *Journal) Load() (r record.Record, ok bool, err error) {
	r, err = readPlaced(j.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return record.Record{}, false, nil
	}
	return r, err == nil, err
}

// readPlaced reads the record of the issue folder dir and checks that it
// belongs there (record.CheckPlace).
func readPlaced(dir string) (record.Record, error) {
	path := filepath.Join(dir, RecordFile)
	r, err := ReadRecord(path)
	if err != nil {
		return record.Record{}, err
	}
	if err := record.CheckPlace(&r, dir); err != nil {
		return record.Record{}, &decodeError{Path: path, Err: err}
	}
	return r, nil
}

// Save writes the record atomically and durably: the spare file, fsync,
// swapped with the old record, fsync of the folder (recordWriter). A
// reader sees the old record or the new one, never half of one, even
// after a crash.
func (j *Journal) Save(r record.Record) error { return j.save(r, true) }

// SaveQuick writes the record atomically but without fsync: it survives
// malarun's own death (the kernel has the data), not a machine crash. For
// frequent small updates (the tool calls in flight), where an fsync per
// tool call would cost more than the update is worth.
func (j *Journal) SaveQuick(r record.Record) error { return j.save(r, false) }

func (j *Journal) save(r record.Record, durable bool) error {
	// The lock first: a removed lock file (or folder) is made again before
	// the record is written into it, and a lock another malarun took means
	// the record is no longer this one's to write.
	j.lock.saving(r.Owner)
	if err := j.lock.check(); err != nil {
		return err
	}
	data, err := record.Encode(r)
	if err != nil {
		return err
	}
	return j.writer.save(data, durable)
}

// writeAtomic saves data as dir/name by a new file of its own and a
// rename, and checks that the name is that file once renamed: a process
// that renames something onto the temporary name in between (a link)
// would otherwise be renamed in. The check failing (replaced), the save is
// made again, maxRenames times at most.
func writeAtomic(dir, name string, data []byte, durable bool) (replaced bool, err error) {
	for try := range maxRenames {
		done, err := renameIn(dir, name, data, durable)
		if done || err != nil {
			return try > 0, err
		}
	}
	return true, fmt.Errorf("save %s: another process kept putting other files in its place", filepath.Join(dir, name))
}

// maxRenames bounds the tries of writeAtomic. A racer renaming links onto
// the temporary name wins a try now and then under load, and can win its
// undoing too (a second link renamed onto the temporary name between the
// swap and the swap back leaves that link as record.json): at three tries
// TestLinksRenamedOntoTheSpareDuringSaves saw that once in about 25 runs
// at a load of 9. Each try costs a file and a rename (and an fsync when
// durable): eight stay bounded and make the racer win eight in a row.
const maxRenames = 8

// renameIn is one try of writeAtomic; done is false when the name was
// found to be another file than the one renamed.
func renameIn(dir, name string, data []byte, durable bool) (done bool, err error) {
	f, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return false, fmt.Errorf("save %s: %w", name, err)
	}
	defer f.Close()
	clean := func(err error) error {
		os.Remove(f.Name())
		return fmt.Errorf("save %s: %w", filepath.Join(dir, name), err)
	}
	tmp, err := own(f)
	if err != nil {
		return false, clean(err)
	}
	if err := tmp.Chmod(0o600); err != nil {
		return false, clean(err)
	}
	if _, err := tmp.Write(data); err != nil {
		return false, clean(err)
	}
	if durable {
		if err := tmp.Sync(); err != nil {
			return false, clean(err)
		}
	}
	// Swapped in where the system can (the record before is then at the
	// temporary name, removed after), so that a file found in its place
	// is swapped straight back out and the record before stays; renamed
	// where it cannot, or where there is no record yet.
	path := filepath.Join(dir, name)
	swapped := exchange(tmp.Name(), path) == nil
	if !swapped {
		if err := os.Rename(tmp.Name(), path); err != nil {
			return false, clean(err)
		}
	}
	if !holds(path, tmp) {
		if swapped {
			_ = exchange(tmp.Name(), path)
			os.Remove(tmp.Name())
		}
		return false, nil
	}
	if swapped {
		os.Remove(tmp.Name())
	}
	if err := tmp.Close(); err != nil {
		return true, fmt.Errorf("save %s: %w", path, err)
	}
	if !durable {
		return true, nil
	}
	return true, syncDir(dir)
}

// Entry is one issue found in the state directory, for `malarun status`.
type Entry struct {
	Issue  string
	Record record.Record
	Err    error // the record could not be read
	Locked bool  // a malarun holds the issue now
}

// List reads every issue's record under stateDir (without locking), sorted by issue.
func List(stateDir string) ([]Entry, error) {
	dirs, err := os.ReadDir(stateDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		e, ok := Read(stateDir, d.Name())
		if ok {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, k int) bool { return out[i].Issue < out[k].Issue })
	return out, nil
}

// Read reads one issue's record without locking; ok is false when there is none.
func Read(stateDir, issue string) (Entry, bool) {
	dir := filepath.Join(stateDir, issue)
	r, err := readPlaced(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return Entry{}, false
	}
	return Entry{Issue: issue, Record: r, Err: err, Locked: locked(dir)}, true
}

// Holder describes this process for the lock file.
func Holder(pid int, host string, started string) string {
	return "pid " + strconv.Itoa(pid) + " on " + host + " since " + started
}
