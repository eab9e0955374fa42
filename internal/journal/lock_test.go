package journal

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/testchild"
)

// A lock file removed while its malarun holds the issue (a cleanup job, a
// tidied state directory) is made again and locked: a second malarun
// finds it busy, not free.
func TestRemovedLockFileIsTakenAgain(t *testing.T) {
	state := t.TempDir()
	j, err := Acquire(state, "issue-1", "pid 42 on box since noon")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Release()
	lock := filepath.Join(j.Dir(), LockFile)
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if err := j.lock.check(); err != nil {
		t.Fatalf("check: %v", err)
	}
	_, err = Acquire(state, "issue-1", "pid 43")
	var busy *BusyError
	if !errors.As(err, &busy) || !strings.Contains(err.Error(), "pid 42 on box since noon") {
		t.Fatalf("second acquire after the lock file was removed: %v", err)
	}
	// Replaced by another file (a restored cache) rather than removed.
	os.Rename(lock, lock+".old")
	os.WriteFile(lock, []byte("stale\n"), 0o600)
	if err := j.lock.check(); err != nil {
		t.Fatalf("check after replacement: %v", err)
	}
	if _, err := Acquire(state, "issue-1", "pid 43"); !errors.As(err, &busy) {
		t.Fatalf("second acquire after the lock file was replaced: %v", err)
	}
}

// The whole issue folder removed: the next save makes it again, with the
// lock and the record (which malarun holds in memory).
func TestRemovedIssueFolderIsMadeAgainBySave(t *testing.T) {
	state := t.TempDir()
	j, err := Acquire(state, "issue-1", "pid 42")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Release()
	if err := os.RemoveAll(j.Dir()); err != nil {
		t.Fatal(err)
	}
	r := sample()
	if err := j.Save(r); err != nil {
		t.Fatalf("save into a removed folder: %v", err)
	}
	if _, ok, err := j.Load(); !ok || err != nil {
		t.Fatalf("load: %v %v", ok, err)
	}
	if _, err := Acquire(state, "issue-1", "pid 43"); err == nil {
		t.Fatal("the lock was not taken again with the folder")
	}
}

// When another malarun got the new lock file first (possible only for one
// that cannot see this one), this one has lost the issue: saves fail with
// LostError, naming the other.
func TestLockTakenByAnotherIsLost(t *testing.T) {
	state := t.TempDir()
	j, err := Acquire(state, "issue-1", "pid 42")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Release()
	os.Remove(filepath.Join(j.Dir(), LockFile))
	other, err := Acquire(state, "issue-1", "pid 43 on elsewhere")
	if err != nil {
		t.Fatalf("the other malarun: %v", err)
	}
	defer other.Release()
	err = j.Save(sample())
	var lost *LostError
	if !errors.As(err, &lost) || !strings.Contains(err.Error(), "pid 43 on elsewhere") {
		t.Fatalf("save after losing the lock: %v", err)
	}
	if j.Lost() == nil {
		t.Error("Lost() is nil")
	}
	j.Release()
	if _, err := Acquire(state, "issue-1", "pid 44"); err == nil {
		t.Error("releasing a lost lock freed the other malarun's")
	}
}

// The keeper checks on its own, without a save.
func TestKeeperTakesARemovedLockAgain(t *testing.T) {
	l, err := takeLock(filepath.Join(t.TempDir(), LockFile), "issue-1", "pid 42")
	if err != nil {
		t.Fatal(err)
	}
	l.keep(time.Millisecond)
	defer l.release()
	os.Remove(l.path)
	if !testchild.WaitUntil(10*time.Second, nil, func() bool {
		b, err := os.ReadFile(l.path)
		return err == nil && string(b) == "pid 42\n"
	}) {
		t.Fatal("the keeper did not make the lock file again")
	}
}
