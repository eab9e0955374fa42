package journal

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/testing/recordtest"
	"github.com/malarun/malarun/internal/testing/testchild"
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
	r := recordtest.Sample()
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
// that cannot see this one) and saved the record as its own, this one has
// lost the issue: saves fail with LostError, naming the other.
func TestLockTakenByAnotherIsLost(t *testing.T) {
	state := t.TempDir()
	j := savedThenUnlocked(t, state)
	other, err := Acquire(state, "issue-1", "pid 43 on elsewhere")
	if err != nil {
		t.Fatalf("the other malarun: %v", err)
	}
	defer other.Release()
	taken := recordtest.Sample()
	taken.Owner = record.Owner{Pid: 43, Host: "elsewhere"}
	if err := other.Save(taken); err != nil {
		t.Fatal(err)
	}
	err = j.Save(recordtest.Sample())
	var lost *LostError
	if !errors.As(err, &lost) || !strings.Contains(err.Error(), "pid 43 on elsewhere") {
		t.Fatalf("save after losing the lock: %v", err)
	}
	select {
	case <-j.Lost():
	default:
		t.Error("Lost() is not closed")
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

// A second malarun that only looks (it holds the new lock file while it
// finds the owner alive, then exits 7) does not take the issue from the
// owner: its saves go on, and the lock is taken again once the other lets go.
func TestLookingMalarunDoesNotTakeTheLock(t *testing.T) {
	state := t.TempDir()
	j := savedThenUnlocked(t, state)
	looking, err := Acquire(state, "issue-1", "pid 43")
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Save(recordtest.Sample()); err != nil {
		t.Fatalf("save while another only looks: %v", err)
	}
	looking.Release()
	if err := j.lock.check(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-j.Lost():
		t.Fatal("the lock counts as lost")
	default:
	}
	if _, err := Acquire(state, "issue-1", "pid 44"); err == nil {
		t.Error("the lock was not taken again")
	}
}

// A lock file replaced by a symlink is not followed: its target is never truncated.
func TestLockSymlinkIsNotFollowed(t *testing.T) {
	state := t.TempDir()
	target := filepath.Join(t.TempDir(), "precious")
	os.WriteFile(target, []byte("keep me"), 0o600)
	os.MkdirAll(filepath.Join(state, "issue-1"), 0o700)
	os.Symlink(target, filepath.Join(state, "issue-1", LockFile))
	if j, err := Acquire(state, "issue-1", "pid 42"); err == nil {
		j.Release()
		t.Error("a symlinked lock file was locked")
	}
	if b, _ := os.ReadFile(target); string(b) != "keep me" {
		t.Errorf("the symlink's target was changed: %q", b)
	}
}

// savedThenUnlocked is malarun "pid 42" holding issue-1 under state, its
// record saved, and then its lock file removed (released at the test's end).
func savedThenUnlocked(t *testing.T, state string) *Journal {
	t.Helper()
	j, err := Acquire(state, "issue-1", "pid 42")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(j.Release)
	if err := j.Save(recordtest.Sample()); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(j.Dir(), LockFile)); err != nil {
		t.Fatal(err)
	}
	return j
}
