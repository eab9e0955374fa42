package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
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
func (j *Journal) Load() (r Record, ok bool, err error) {
	r, err = readPlaced(j.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return Record{}, false, nil
	}
	return r, err == nil, err
}

// readPlaced reads the record of the issue folder dir and checks that it
// belongs there (checkPlace).
func readPlaced(dir string) (Record, error) {
	path := filepath.Join(dir, RecordFile)
	r, err := ReadRecord(path)
	if err != nil {
		return Record{}, err
	}
	if err := checkPlace(&r, dir); err != nil {
		return Record{}, &DecodeError{Path: path, Err: err}
	}
	return r, nil
}

// Save writes the record atomically and durably: the spare file, fsync,
// swapped with the old record, fsync of the folder (recordWriter). A
// reader sees the old record or the new one, never half of one, even
// after a crash.
func (j *Journal) Save(r Record) error { return j.save(r, true) }

// SaveQuick writes the record atomically but without fsync: it survives
// malarun's own death (the kernel has the data), not a machine crash. For
// frequent small updates (the tool calls in flight), where an fsync per
// tool call would cost more than the update is worth.
func (j *Journal) SaveQuick(r Record) error { return j.save(r, false) }

func (j *Journal) save(r Record, durable bool) error {
	// The lock first: a removed lock file (or folder) is made again before
	// the record is written into it, and a lock another malarun took means
	// the record is no longer this one's to write.
	j.lock.saving(r.Owner)
	if err := j.lock.check(); err != nil {
		return err
	}
	data, err := Encode(r)
	if err != nil {
		return err
	}
	return j.writer.save(data, durable)
}

// Encode is the record as it is written to disk. It fails only for a
// record malarun should never build (one check refuses, a non-finite cost,
// a time outside years 0-9999): values from outside are checked where
// they enter, and FuzzRecordFromStream holds that no stream makes one.
func Encode(r Record) ([]byte, error) {
	r.Version = recordVersion
	if err := check(r); err != nil {
		// Written, it would be read back as damaged.
		return nil, fmt.Errorf("refusing to write a record malarun could not read back: %w", err)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode the record: %w", err)
	}
	return append(data, '\n'), nil
}

func writeAtomic(dir, name string, data []byte, durable bool) error {
	tmp, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return fmt.Errorf("save %s: %w", name, err)
	}
	clean := func(err error) error {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("save %s: %w", filepath.Join(dir, name), err)
	}
	if err := tmp.Chmod(0o600); err != nil {
		return clean(err)
	}
	if _, err := tmp.Write(data); err != nil {
		return clean(err)
	}
	if durable {
		if err := tmp.Sync(); err != nil {
			return clean(err)
		}
	}
	if err := tmp.Close(); err != nil {
		return clean(err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("save %s: %w", filepath.Join(dir, name), err)
	}
	if !durable {
		return nil
	}
	return syncDir(dir)
}

// Entry is one issue found in the state directory, for `malarun status`.
type Entry struct {
	Issue  string
	Record Record
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
