package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	testRun     = "20261122T120401Z-3f9a1c"
	testSession = "5fcbbccf-06da-4fd6-8405-d704e7fbd2c7"
)

// sample is a record as malarun writes it, for an issue folder under
// /state (Save does not care where; Load moves RunDir to the folder read).
func sample() Record {
	return Record{
		Issue: "issue-1", Status: Processing, Cwd: "/work", Home: "/home/u",
		RunID: testRun, RunDir: "/state/issue-1/runs/" + testRun, Runs: []string{testRun}, Sessions: []string{testSession},
		SessionID: testSession, SessionTalked: true, SideEffects: map[string]int{"Bash": 2},
		Running:  []ToolCall{{Name: "Bash", Input: `{"command":"make"}`}},
		Attempts: 2, Reclaims: 1, Checkpoint: "## Goal", CostUSD: 0.5, TotalCostUSD: 1.5,
		Owner:  Owner{Pid: 42, Host: "h", StartedAt: time.Unix(1, 0).UTC(), StartTime: 1234, BootID: "8d2f0c1e-7b7a-4a55-9f1e-2b3c4d5e6f70", PidNS: "4026531836"},
		Tree:   []ProcRef{{Pid: 7, StartTime: 99}},
		Marker: "issue-1/" + testRun,
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	j, err := Acquire(t.TempDir(), "issue-1", "pid 1")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Release()
	if _, ok, err := j.Load(); ok || err != nil {
		t.Fatalf("empty journal: ok %v, err %v", ok, err)
	}
	want := sample()
	if err := j.Save(want); err != nil {
		t.Fatal(err)
	}
	got, ok, err := j.Load()
	if !ok || err != nil {
		t.Fatalf("load: %v %v", ok, err)
	}
	want.Version = recordVersion
	want.RunDir = filepath.Join(j.Dir(), "runs", testRun) // where the run folder is, not where the file said
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
	j.Save(sample())
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
	good, _ := json.Marshal(func() Record { r := sample(); r.Version = recordVersion; return r }())
	cases := map[string]string{
		"truncated":      string(good[:len(good)/2]),
		"empty":          "",
		"not json":       "hello",
		"unknown field":  strings.Replace(string(good), `"issue":`, `"bogus":1,"issue":`, 1),
		"bad status":     strings.Replace(string(good), `"processing"`, `"running"`, 1),
		"future version": strings.Replace(string(good), fmt.Sprintf(`"version":%d`, recordVersion), fmt.Sprintf(`"version":%d`, recordVersion+1), 1),
		"version 0":      strings.Replace(string(good), fmt.Sprintf(`"version":%d`, recordVersion), `"version":0`, 1),
		"no version":     strings.Replace(string(good), fmt.Sprintf(`"version":%d,`, recordVersion), ``, 1),
		"trailing":       string(good) + "{}",
		"wrong type":     strings.Replace(string(good), `"attempts":2`, `"attempts":"two"`, 1),
	}
	for name, edit := range plantedRecords() {
		r := sample()
		edit(&r)
		cases["planted "+name] = string(rawRecord(t, r))
	}
	for name, data := range cases {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "issue-1"), 0o700)
		path := filepath.Join(dir, "issue-1", RecordFile)
		os.WriteFile(path, []byte(data), 0o600)
		_, err := ReadRecord(path)
		var de *DecodeError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "--reset") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestListSortsAndReportsDamage(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{"b", "a"} {
		j, _ := Acquire(dir, id, "x")
		r := sample()
		r.Issue, r.RunDir, r.Marker = id, filepath.Join("/state", id, "runs", testRun), id+"/"+testRun
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

func FuzzDecode(f *testing.F) {
	good, _ := json.Marshal(func() Record { r := sample(); r.Version = recordVersion; return r }())
	f.Add(good)
	f.Add([]byte(`{"version":1,"issue":"x","status":"failed"}`))
	f.Add([]byte(`{"version":2,"issue":"x","status":"waiting","retry_at":"2026-11-22T16:05:11Z","limit_type":"five_hour"}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Decode(data)
		if err != nil {
			return
		}
		// A record that decodes is complete: it has an issue, a known
		// status, and survives a round trip.
		if r.Issue == "" || r.Version != recordVersion {
			t.Fatalf("accepted an incomplete record: %+v", r)
		}
		b, _ := json.Marshal(r)
		if _, err := Decode(b); err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
	})
}
