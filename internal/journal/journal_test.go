package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/testing/recordtest"
)

func TestSaveLoadRoundTrip(t *testing.T) {
	j, err := Acquire(t.TempDir(), "issue-1", "pid 1")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Release()
	if _, ok, err := j.Load(); ok || err != nil {
		t.Fatalf("empty journal: ok %v, err %v", ok, err)
	}
	want := recordtest.Sample()
	if err := j.Save(want); err != nil {
		t.Fatal(err)
	}
	got, ok, err := j.Load()
	if !ok || err != nil {
		t.Fatalf("load: %v %v", ok, err)
	}
	want.Version = record.Version
	want.RunDir = filepath.Join(j.Dir(), "runs", recordtest.RunID) // where the run folder is, not where the file said
	a, _ := json.Marshal(want)
	b, _ := json.Marshal(got)
	if string(a) != string(b) {
		t.Errorf("round trip:\n%s\n%s", a, b)
	}
	st, _ := os.Stat(filepath.Join(j.Dir(), RecordFile))
	dir, _ := os.Stat(j.Dir())
	if st.Mode().Perm() != 0o600 || dir.Mode().Perm() != 0o700 {
		t.Errorf("modes: record %v, folder %v", st.Mode().Perm(), dir.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(j.Dir(), ".*tmp*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestSecondAcquireIsBusyAndNamesTheHolder(t *testing.T) {
	dir := t.TempDir()
	j, err := Acquire(dir, "issue-1", "pid 42 on box since noon")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(dir, "issue-1", "pid 43")
	var busy *BusyError
	if !errors.As(err, &busy) || !strings.Contains(err.Error(), "pid 42 on box since noon") {
		t.Fatalf("second acquire: %v", err)
	}
	if e, _ := Read(dir, "issue-1"); e.Locked {
		t.Errorf("no record yet, but Read reported one") // Read needs a record
	}
	j.Save(recordtest.Sample())
	if e, ok := Read(dir, "issue-1"); !ok || !e.Locked {
		t.Errorf("Read while held: ok %v locked %v", ok, e.Locked)
	}
	j.Release()
	if e, _ := Read(dir, "issue-1"); e.Locked {
		t.Errorf("still locked after release")
	}
	j2, err := Acquire(dir, "issue-1", "pid 43")
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	j2.Release()
}

func TestDamagedRecordsAreClearErrors(t *testing.T) {
	good, _ := json.Marshal(func() record.Record { r := recordtest.Sample(); r.Version = record.Version; return r }())
	cases := map[string]string{
		"truncated":      string(good[:len(good)/2]),
		"empty":          "",
		"not json":       "hello",
		"unknown field":  strings.Replace(string(good), `"issue":`, `"bogus":1,"issue":`, 1),
		"bad status":     strings.Replace(string(good), `"processing"`, `"running"`, 1),
		"future version": strings.Replace(string(good), fmt.Sprintf(`"version":%d`, record.Version), fmt.Sprintf(`"version":%d`, record.Version+1), 1),
		"version 0":      strings.Replace(string(good), fmt.Sprintf(`"version":%d`, record.Version), `"version":0`, 1),
		"no version":     strings.Replace(string(good), fmt.Sprintf(`"version":%d,`, record.Version), ``, 1),
		"trailing":       string(good) + "{}",
		"wrong type":     strings.Replace(string(good), `"attempts":2`, `"attempts":"two"`, 1),
	}
	for name, edit := range recordtest.Planted() {
		r := recordtest.Sample()
		edit(&r)
		cases["planted "+name] = string(recordtest.Raw(t, r))
	}
	for name, data := range cases {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "issue-1"), 0o700)
		path := filepath.Join(dir, "issue-1", RecordFile)
		os.WriteFile(path, []byte(data), 0o600)
		_, err := ReadRecord(path)
		var de *decodeError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "--reset") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestListSortsAndReportsDamage(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{"b", "a"} {
		j, _ := Acquire(dir, id, "x")
		r := recordtest.Sample()
		r.Issue, r.RunDir, r.Marker = id, filepath.Join("/state", id, "runs", recordtest.RunID), id+"/"+recordtest.RunID
		j.Save(r)
		j.Release()
	}
	os.MkdirAll(filepath.Join(dir, "c"), 0o700)
	os.WriteFile(filepath.Join(dir, "c", RecordFile), []byte("{"), 0o600)
	os.MkdirAll(filepath.Join(dir, "no-record"), 0o700)
	got, err := List(dir)
	if err != nil || len(got) != 3 || got[0].Issue != "a" || got[1].Issue != "b" || got[2].Err == nil {
		t.Errorf("list: %+v, %v", got, err)
	}
}
