package journal

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/testing/recordtest"
)

// TestReadsVersion1Record: a record written by the malarun before version
// 2 (testdata/record-v1.json, saved by that code) still reads, with the
// fields version 2 added left zero, and is saved back as version 2.
func TestReadsVersion1Record(t *testing.T) {
	r, err := ReadRecord("testdata/record-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != record.Version || r.Issue != "issue-1" || r.Status != record.Interrupted || r.SessionID != "5fcbbccf-06da-4fd6-8405-d704e7fbd2c7" ||
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
	if !strings.Contains(string(b), fmt.Sprintf(`"version": %d`, record.Version)) || strings.Contains(string(b), "retry_at") || strings.Contains(string(b), "limit_type") {
		t.Errorf("saved again as:\n%s", b)
	}
}

// TestReadsVersion2Record: testdata/record-v2.json is the record malarun
// 2 wrote (main of 2026-11-23) for a run it was asked to stop (SIGTERM)
// while the real CLI ran a Bash call. It still reads, in the issue folder
// it belongs to, with the fields version 3 added left zero.
func TestReadsVersion2Record(t *testing.T) {
	b, err := os.ReadFile("testdata/record-v2.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "issue-1")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, RecordFile), b, 0o600)
	r, err := readPlaced(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != record.Interrupted || r.SessionID != "05a62f4f-503f-4122-a79e-434d92ffda00" || len(r.Running) != 1 ||
		r.RunDir != filepath.Join(dir, "runs", "20261123T183013Z-2e7ee2") || r.Owner.Host != "vm" {
		t.Errorf("v2 record read as %+v", r)
	}
	if r.Owner.StartTime != 0 || r.Owner.BootID != "" || r.Owner.PidNS != "" || r.OutputFailures != nil {
		t.Errorf("fields added in v3 are not zero: %+v %v", r.Owner, r.OutputFailures)
	}
}

// TestReadsVersion3Record: testdata/record-v3.json is the record malarun
// 3 wrote (main of 2026-11-23, commit 80fc073) for a run stopped by SIGTERM
// while the real CLI (2.1.330) waited on the API after a Bash call. It
// still reads, with the fields version 4 added left zero; its attempts
// mean what they meant (finished attempts; an interrupted one finished).
func TestReadsVersion3Record(t *testing.T) {
	b, err := os.ReadFile("testdata/record-v3.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "issue-e2e")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, RecordFile), b, 0o600)
	r, err := readPlaced(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != record.Version || r.Status != record.Interrupted || r.SessionID != "613afaa3-f770-4776-9962-c5e7cffc4a38" || r.Attempts != 1 ||
		r.Owner.BootID != "24b9a76f-3095-458b-99ce-d9da3978254f" || r.SideEffects["Bash"] != 1 {
		t.Errorf("v3 record read as %+v", r)
	}
	if r.RunReclaims != 0 || r.PromptSHA256 != "" || r.PromptChanges != nil {
		t.Errorf("fields added in v4 are not zero: %d %q %v", r.RunReclaims, r.PromptSHA256, r.PromptChanges)
	}
	var raw map[string]any
	json.Unmarshal(b, &raw)
	added := map[string]any{"run_reclaims": 1, "killed_attempts": 1, "prompt_sha256": strings.Repeat("a", 64), "prompt_changes": []record.PromptChange{recordtest.PromptChange(record.PromptResume)}}
	for field, v := range added {
		raw[field] = v
		edited, _ := json.Marshal(raw)
		if _, err := record.Decode(edited); err == nil {
			t.Errorf("a version 3 record with %s was read", field)
		}
		delete(raw, field)
	}
}

func TestWaitingRecordRoundTrip(t *testing.T) {
	j, err := Acquire(t.TempDir(), "issue-1", "x")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Release()
	want := recordtest.Sample()
	want.Status, want.ExitCode = record.Waiting, 75
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
	want.Version = record.Version
	want.RunDir = filepath.Join(j.Dir(), "runs", recordtest.RunID)
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
		if _, err := record.Decode([]byte(data)); err == nil || !strings.Contains(err.Error(), "version 2 added") {
			t.Errorf("%s in a v1 record: err = %v", name, err)
		}
	}
}

// TestVersion2CannotHoldVersion3Fields, as above, one version on.
func TestVersion2CannotHoldVersion3Fields(t *testing.T) {
	v2, err := os.ReadFile("testdata/record-v2.json")
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string][2]string{
		"owner start_time": {`"host": "vm",`, `"host": "vm", "start_time": 5,`},
		"owner boot_id":    {`"host": "vm",`, `"host": "vm", "boot_id": "8d2f0c1e",`},
		"output_failures":  {`"exit_code": 143`, `"output_failures": [{"output": "stderr", "error": "broken pipe", "at": "2026-11-23T18:30:14Z"}], "exit_code": 143`},
	} {
		data := strings.Replace(string(v2), edit[0], edit[1], 1)
		if data == string(v2) {
			t.Fatalf("%s: the fixture has no %q", name, edit[0])
		}
		if _, err := record.Decode([]byte(data)); err == nil || !strings.Contains(err.Error(), "version 3 added") {
			t.Errorf("%s in a v2 record: err = %v", name, err)
		}
	}
}
