package journal

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/malarun/malarun/internal/testing/recordtest"
)

// inode is the inode number path names (0 if none).
func inode(t *testing.T, path string) uint64 {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		return 0
	}
	return st.Sys().(*syscall.Stat_t).Ino
}

// From the second save on, a run's saves make no new file: the spare and
// the record take turns (two inodes in all), each save reads back whole,
// and the spare is gone once the journal is released.
func TestSavesTakeTurnsWithASpare(t *testing.T) {
	j, err := Acquire(t.TempDir(), "issue-1", "pid 1")
	if err != nil {
		t.Fatal(err)
	}
	record, spare := filepath.Join(j.Dir(), RecordFile), filepath.Join(j.Dir(), spareFile)
	seen := map[uint64]bool{}
	for i := 1; i <= 8; i++ {
		r := recordtest.Sample()
		r.Attempts = i
		r.Checkpoint = strings.Repeat("x", 100*(i%3)) // longer and shorter than the file it goes into
		save := j.SaveQuick
		if i%2 == 0 {
			save = j.Save
		}
		if err := save(r); err != nil {
			t.Fatalf("save %d: %v", i, err)
		}
		got, ok, err := j.Load()
		if !ok || err != nil || got.Attempts != i || got.Checkpoint != r.Checkpoint {
			t.Fatalf("save %d read back: ok %v, err %v, attempts %d", i, ok, err, got.Attempts)
		}
		if i >= 2 {
			seen[inode(t, record)] = true
			if inode(t, spare) == 0 {
				t.Fatalf("save %d: no spare beside the record", i)
			}
		}
	}
	if len(seen) != 2 {
		t.Errorf("record.json was %d files over saves 2-8, want 2 taking turns", len(seen))
	}
	j.Release()
	if _, err := os.Lstat(spare); !os.IsNotExist(err) {
		t.Errorf("the spare is left after release: %v", err)
	}
	if _, err := ReadRecord(record); err != nil {
		t.Errorf("the record after release: %v", err)
	}
}

// A spare name or a record that this journal did not make (an earlier
// malarun's, or anything planted) is never written into: a hard link or a
// symbolic link to a file elsewhere leaves that file as it was, before the
// first save and when it replaces the spare between two saves; a folder
// in the spare's place does not stop the saves.
func TestSavesNeverWriteIntoAFileTheyDidNotMake(t *testing.T) {
	state, outside := t.TempDir(), t.TempDir()
	const precious = "a file of the user's\n"
	files := map[string]string{}
	plant := func(name string) string {
		p := filepath.Join(outside, name)
		if err := os.WriteFile(p, []byte(precious), 0o600); err != nil {
			t.Fatal(err)
		}
		files[name] = p
		return p
	}
	dir := filepath.Join(state, "issue-1")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(plant("linked-record"), filepath.Join(dir, RecordFile)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(plant("symlinked-spare"), filepath.Join(dir, spareFile)); err != nil {
		t.Fatal(err)
	}
	j, err := Acquire(state, "issue-1", "pid 1")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Release()
	save := func(n int) {
		t.Helper()
		r := recordtest.Sample()
		r.Attempts = n
		if err := j.Save(r); err != nil {
			t.Fatalf("save %d: %v", n, err)
		}
		if got, ok, err := j.Load(); !ok || err != nil || got.Attempts != n {
			t.Fatalf("save %d read back: ok %v, err %v, attempts %d", n, ok, err, got.Attempts)
		}
	}
	for n := 1; n <= 3; n++ {
		save(n)
	}
	// Between two saves the spare is replaced by a hard link to a file
	// elsewhere.
	spare := filepath.Join(dir, spareFile)
	if err := os.Remove(spare); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(plant("linked-spare"), spare); err != nil {
		t.Fatal(err)
	}
	for n := 4; n <= 6; n++ {
		save(n)
	}
	// A folder that cannot be removed takes the spare's name: saves make
	// files of their own meanwhile.
	if err := os.Remove(spare); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(spare, "inside"), 0o700); err != nil {
		t.Fatal(err)
	}
	for n := 7; n <= 8; n++ {
		save(n)
	}
	for name, p := range files {
		if b, err := os.ReadFile(p); err != nil || string(b) != precious {
			t.Errorf("%s: %q, %v: written into", name, b, err)
		}
	}
}

// Where the swap is refused (a file system without it, a system other
// than Linux), saves make a new file and rename it, as before.
func TestSavesFallBackToRenameWithoutExchange(t *testing.T) {
	j, err := Acquire(t.TempDir(), "issue-1", "pid 1")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Release()
	j.writer.noExchange = true
	for n := 1; n <= 3; n++ {
		r := recordtest.Sample()
		r.Attempts = n
		if err := j.Save(r); err != nil {
			t.Fatal(err)
		}
		if got, _, err := j.Load(); err != nil || got.Attempts != n {
			t.Fatalf("save %d read back: %v, attempts %d", n, err, got.Attempts)
		}
	}
	if _, err := os.Lstat(filepath.Join(j.Dir(), spareFile)); !os.IsNotExist(err) {
		t.Errorf("a spare without exchange: %v", err)
	}
}

// A reader without the lock (status, summary, show) may read the file
// the run is writing into: the file it opened became the spare. It reads
// again while a read was not stable, or did not decode and differs from
// the one before; a record that reads the same and does not decode is
// damaged; three reads at most.
func TestReadRecordReadsAgainWhileASaveTearsIt(t *testing.T) {
	whole := recordtest.Encoded(t, recordtest.Sample())
	torn := whole[:len(whole)/2]
	other := append(append([]byte(nil), whole[:len(whole)/2]...), "garbage"...)
	type read struct {
		b      []byte
		stable bool
	}
	for _, c := range []struct {
		name    string
		reads   []read
		damaged bool
		want    int // reads made
	}{
		{"whole at once", []read{{whole, true}}, false, 1},
		{"changed under the read, then whole", []read{{torn, false}, {whole, true}}, false, 2},
		{"whole but changed under the read, then whole", []read{{whole, false}, {whole, true}}, false, 2},
		{"torn where the clock did not show it, then whole", []read{{torn, true}, {whole, true}}, false, 2},
		{"damaged: the same twice", []read{{torn, true}, {torn, true}, {whole, true}}, true, 2},
		{"torn twice, differently, then whole", []read{{torn, true}, {other, true}, {whole, true}}, false, 3},
		{"changing on every read: the third is taken", []read{{torn, false}, {other, false}, {torn, false}, {whole, true}}, true, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := 0
			r, err := readRecord("record.json", func() ([]byte, bool, error) {
				rd := c.reads[n]
				n++
				return rd.b, rd.stable, nil
			})
			if _, isDamaged := err.(*decodeError); isDamaged != c.damaged || (!c.damaged && (err != nil || r.Issue != "issue-1")) {
				t.Errorf("err %v (damaged: want %v), issue %q", err, c.damaged, r.Issue)
			}
			if n != c.want {
				t.Errorf("%d reads, want %d", n, c.want)
			}
		})
	}
}

// Saves from two goroutines at once (a run's progress and its signal
// handling, say) take turns on the two files: every one succeeds and the
// record reads back whole (under -race, the writer's state is checked too).
func TestSavesFromTwoGoroutinesTakeTurns(t *testing.T) {
	j, err := Acquire(t.TempDir(), "issue-1", "pid 1")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Release()
	errs := make(chan error, 2)
	for g := range 2 {
		go func() {
			r := recordtest.Sample()
			r.Attempts = g + 1
			var err error
			for range 50 {
				if err = j.SaveQuick(r); err != nil {
					break
				}
			}
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got, ok, err := j.Load(); !ok || err != nil || (got.Attempts != 1 && got.Attempts != 2) {
		t.Fatalf("read back: ok %v, err %v, attempts %d", ok, err, got.Attempts)
	}
}
