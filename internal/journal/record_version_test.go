package journal

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadsVersion1Record: a record written by the malarun before version
// 2 (testdata/record-v1.json, saved by that code) still reads, with the
// fields version 2 added left zero, and is saved back as version 2.
func TestReadsVersion1Record(t *testing.T) {
	r, err := ReadRecord("testdata/record-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != recordVersion || r.Issue != "issue-1" || r.Status != Interrupted || r.SessionID != "s1" ||
		r.Attempts != 2 || r.ExitCode != 143 || len(r.Running) != 1 || r.Running[0].Name != "Bash" {
		t.Errorf("v1 record read as %+v", r)
	}
	if !r.RetryAt.IsZero() || r.LimitType != "" {
		t.Errorf("fields added in v2 are not zero: %v %q", r.RetryAt, r.LimitType)
	}

	j, err := Acquire(t.TempDir(), "issue-1", "x")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Release()
	if err := j.Save(r); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(j.Dir(), RecordFile))
	if !strings.Contains(string(b), `"version": 2`) || strings.Contains(string(b), "retry_at") || strings.Contains(string(b), "limit_type") {
		t.Errorf("saved again as:\n%s", b)
	}
}

func TestWaitingRecordRoundTrip(t *testing.T) {
	j, err := Acquire(t.TempDir(), "issue-1", "x")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Release()
	want := sample()
	want.Status, want.ExitCode = Waiting, 75
	want.RetryAt = time.Date(2026, 11, 22, 16, 5, 11, 0, time.UTC)
	want.LimitType = "five_hour"
	if err := j.Save(want); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(j.Dir(), RecordFile))
	if !strings.Contains(string(b), `"retry_at": "2026-11-22T16:05:11Z"`) || !strings.Contains(string(b), `"limit_type": "five_hour"`) {
		t.Errorf("record on disk:\n%s", b)
	}
	got, ok, err := j.Load()
	if !ok || err != nil {
		t.Fatalf("load: %v %v", ok, err)
	}
	want.Version = recordVersion
	a, _ := json.Marshal(want)
	g, _ := json.Marshal(got)
	if string(a) != string(g) {
		t.Errorf("round trip:\n%s\n%s", a, g)
	}
}

// TestVersion1CannotHoldVersion2Fields: a "version 1" record with what
// only version 2 writes was not written by malarun; refuse it.
func TestVersion1CannotHoldVersion2Fields(t *testing.T) {
	v1, err := os.ReadFile("testdata/record-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string][2]string{
		"waiting":    {`"status": "interrupted"`, `"status": "waiting"`},
		"retry_at":   {`"exit_code": 143`, `"retry_at": "2026-11-22T16:05:11Z", "exit_code": 143`},
		"limit_type": {`"exit_code": 143`, `"limit_type": "five_hour", "exit_code": 143`},
	} {
		data := strings.Replace(string(v1), edit[0], edit[1], 1)
		if data == string(v1) {
			t.Fatalf("%s: the fixture has no %q", name, edit[0])
		}
		if _, err := Decode([]byte(data)); err == nil || !strings.Contains(err.Error(), "version 2 added") {
			t.Errorf("%s in a v1 record: err = %v", name, err)
		}
	}
}
