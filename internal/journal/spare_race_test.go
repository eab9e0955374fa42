package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/testing/recordtest"
)

// saveN saves the sample record with Attempts n, quick or durable by n's
// parity, and checks that record.json is a regular file that reads back
// as that save.
func saveN(t *testing.T, j *Journal, n int) {
	t.Helper()
	r := recordtest.Sample()
	r.Attempts = n
	r.Checkpoint = strings.Repeat("c", 50*(n%4)) // longer and shorter than the file it goes into
	save := j.SaveQuick
	if n%2 == 0 {
		save = j.Save
	}
	if err := save(r); err != nil {
		t.Fatalf("save %d: %v", n, err)
	}
	path := filepath.Join(j.Dir(), RecordFile)
	if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() {
		t.Fatalf("after save %d record.json is %v (%v), not a regular file", n, st.Mode(), err)
	}
	got, err := ReadRecord(path)
	if err != nil || got.Attempts != n {
		t.Fatalf("save %d reads back as attempts %d, %v", n, got.Attempts, err)
	}
}

// snapshot links every file of dir into a new folder, as `cp -al` (a
// backup tool's snapshot) does, and returns each file's content then.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	snap := filepath.Join(t.TempDir(), "snap")
	if err := os.Mkdir(snap, 0o700); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]string{}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		to := filepath.Join(snap, e.Name())
		if err := os.Link(filepath.Join(dir, e.Name()), to); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(to)
		if err != nil {
			t.Fatal(err)
		}
		kept[to] = string(b)
	}
	return kept
}

func unchanged(t *testing.T, kept map[string]string) {
	t.Helper()
	for path, was := range kept {
		if b, err := os.ReadFile(path); err != nil || string(b) != was {
			t.Errorf("%s changed after the snapshot (%v):\nwas %.80q\nnow %.80q", filepath.Base(path), err, was, b)
		}
	}
}

// A hard-link snapshot of a live issue folder (cp -al) keeps its content:
// its record.json and spare share their files with the live folder's, and
// a file with more than one name is never written into (issue 47: the
// record became the next spare and was written in place). The saves go
// on, and stop making new files once the snapshot is gone.
func TestAHardLinkSnapshotKeepsItsContent(t *testing.T) {
	j, err := Acquire(t.TempDir(), "issue-1", "pid 1")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Release()
	for n := 1; n <= 3; n++ {
		saveN(t, j, n)
	}
	kept := snapshot(t, j.Dir())
	if _, ok := kept[filepath.Join(filepath.Dir(firstKey(kept)), spareFile)]; !ok {
		t.Fatalf("the snapshot has no spare: %v", kept)
	}
	for n := 4; n <= 10; n++ {
		saveN(t, j, n)
	}
	unchanged(t, kept)
	// A second snapshot, taken while the first is kept.
	again := snapshot(t, j.Dir())
	for n := 11; n <= 14; n++ {
		saveN(t, j, n)
	}
	unchanged(t, kept)
	unchanged(t, again)
}

func firstKey(m map[string]string) string {
	for k := range m {
		return k
	}
	return ""
}

// Snapshots taken while saves run (a goroutine that links record.json
// into a new name whenever it names another file): a snapshot's record is
// a whole record and never changes once taken.
func TestSnapshotsTakenDuringSavesKeepTheirContent(t *testing.T) {
	j, err := Acquire(t.TempDir(), "issue-1", "pid 1")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Release()
	saveN(t, j, 1)
	snaps := t.TempDir()
	stop, done := make(chan struct{}), make(chan map[string]string)
	go func() {
		kept := map[string]string{}
		var last uint64
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- kept
				return
			default:
			}
			if ino := inode(t, filepath.Join(j.Dir(), RecordFile)); ino == last {
				continue
			} else {
				last = ino
			}
			to := filepath.Join(snaps, fmt.Sprint(i))
			if os.Link(filepath.Join(j.Dir(), RecordFile), to) != nil {
				continue
			}
			if b, err := os.ReadFile(to); err == nil {
				kept[to] = string(b)
			}
		}
	}()
	for n := 2; n <= 200; n++ {
		saveN(t, j, n)
	}
	close(stop)
	kept := <-done
	if len(kept) == 0 {
		t.Fatal("no snapshot was taken: the test tests nothing")
	}
	unchanged(t, kept)
	for path, b := range kept {
		if _, err := record.Decode([]byte(b)); err != nil {
			t.Errorf("snapshot %s holds no whole record: %v", filepath.Base(path), err)
		}
	}
	t.Logf("%d snapshots", len(kept))
}

// planted is a file outside the issue folder that a link may point to,
// with what it holds.
func planted(t *testing.T) (path, content string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "precious")
	content = "a file of the user's\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, content
}

// A link renamed onto the spare's name in the middle of a save is never
// swapped in as record.json (issue 47: it was, and malarun said nothing):
// at each step of the save (after the spare is written, after the last
// check of its name, right before the swap) a symbolic link, or a hard
// link to a file elsewhere, takes the spare's name. The save is written
// as a file of its own, with a warning; the file linked to is untouched;
// the next saves take turns with a spare again.
func TestALinkRenamedOntoTheSpareIsNeverSwappedIn(t *testing.T) {
	for _, step := range []string{"filled", "checked"} {
		for _, kind := range []string{"symlink", "hard link"} {
			t.Run(step+"/"+kind, func(t *testing.T) {
				target, content := planted(t)
				j, err := Acquire(t.TempDir(), "issue-1", "pid 1")
				if err != nil {
					t.Fatal(err)
				}
				defer j.Release()
				var warned []error
				j.OnBentSave(func(err error) { warned = append(warned, err) })
				for n := 1; n <= 2; n++ {
					saveN(t, j, n)
				}
				raced := 0
				j.writer.racer = func(at string) {
					if at != step || raced > 0 {
						return
					}
					raced++
					link := filepath.Join(j.Dir(), ".planted")
					var err error
					if kind == "symlink" {
						err = os.Symlink(target, link)
					} else {
						err = os.Link(target, link)
					}
					if err == nil {
						err = os.Rename(link, filepath.Join(j.Dir(), spareFile))
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				saveN(t, j, 3)
				if raced != 1 {
					t.Fatalf("the save passed the step %q %d times", step, raced)
				}
				var bent *bentError
				if len(warned) != 1 || !errors.As(warned[0], &bent) || bent.Path != filepath.Join(j.Dir(), RecordFile) {
					t.Errorf("warnings %v, want one *BentError naming record.json", warned)
				}
				for n := 4; n <= 6; n++ {
					saveN(t, j, n)
				}
				if b, err := os.ReadFile(target); err != nil || string(b) != content {
					t.Errorf("the file linked to holds %q, %v", b, err)
				}
				if len(warned) != 1 {
					t.Errorf("%d warnings after saves the racer left alone", len(warned))
				}
				if j.writer.spare == nil || !sole(filepath.Join(j.Dir(), spareFile), j.writer.spare) {
					t.Error("the saves after it keep no spare of their own")
				}
			})
		}
	}
}

// A process that keeps renaming symbolic links onto the spare's name (and
// onto the temporary files of a save without the swap) while saves run:
// after every save record.json is a regular file holding that save, and
// the file linked to is never written.
func TestLinksRenamedOntoTheSpareDuringSaves(t *testing.T) {
	for _, swap := range []bool{true, false} {
		t.Run(fmt.Sprintf("exchange=%v", swap), func(t *testing.T) {
			target, content := planted(t)
			j, err := Acquire(t.TempDir(), "issue-1", "pid 1")
			if err != nil {
				t.Fatal(err)
			}
			defer j.Release()
			j.writer.noExchange = !swap
			var bent atomic.Int64
			j.OnBentSave(func(error) { bent.Add(1) })
			dir := j.Dir()
			stop, done := make(chan struct{}), make(chan int)
			go func() {
				renamed := 0
				for i := 0; ; i++ {
					select {
					case <-stop:
						done <- renamed
						return
					default:
					}
					onto := []string{spareFile}
					if !swap {
						entries, _ := os.ReadDir(dir)
						onto = onto[:0]
						for _, e := range entries {
							if strings.HasPrefix(e.Name(), "."+RecordFile+".tmp-") {
								onto = append(onto, e.Name())
							}
						}
					}
					for _, name := range onto {
						link := filepath.Join(dir, fmt.Sprint(".planted-", i))
						if os.Symlink(target, link) == nil && os.Rename(link, filepath.Join(dir, name)) == nil {
							renamed++
						}
					}
				}
			}()
			// A save may fail, saying so, when the racer wins every try of
			// a file of its own; record.json then still holds the save
			// before, never a link.
			saved, failed := 0, 0
			for n := 1; n <= 300; n++ {
				r := recordtest.Sample()
				r.Attempts = n
				if err := j.SaveQuick(r); err != nil {
					if !strings.Contains(err.Error(), "kept putting other files in its place") {
						t.Fatalf("save %d: %v", n, err)
					}
					failed++
				} else {
					saved = n
				}
				path := filepath.Join(dir, RecordFile)
				if st, err := os.Lstat(path); saved > 0 && (err != nil || !st.Mode().IsRegular()) {
					t.Fatalf("after save %d record.json is %v (%v), not a regular file", n, st.Mode(), err)
				}
				if got, err := ReadRecord(path); saved > 0 && (err != nil || got.Attempts != saved) {
					t.Fatalf("after save %d record.json reads as attempts %d (%v), want the last save that succeeded, %d", n, got.Attempts, err, saved)
				}
			}
			close(stop)
			renamed := <-done
			if b, err := os.ReadFile(target); err != nil || string(b) != content {
				t.Errorf("the file linked to holds %q, %v", b, err)
			}
			if saved == 0 {
				t.Error("no save succeeded")
			}
			t.Logf("%d links renamed in, %d saves bent, %d failed", renamed, bent.Load(), failed)
		})
	}
}
