package record_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/testing/recordtest"
)

func TestPlantedRecordsAreDamaged(t *testing.T) {
	for name, edit := range recordtest.Planted() {
		r := recordtest.Sample()
		edit(&r)
		if _, err := record.Encode(r); err == nil {
			t.Errorf("%s: Encode wrote it", name)
		}
		if _, err := record.Decode(recordtest.Raw(t, r)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := record.Decode(recordtest.Encoded(t, recordtest.Sample())); err != nil {
		t.Fatalf("the unedited sample is refused: %v", err)
	}
	// What a malarun on darwin writes (proc.Identity there) is a record too.
	mac := recordtest.Sample()
	mac.Owner.BootID, mac.Owner.PidNS = "darwin:6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b", "darwin"
	if _, err := record.Decode(recordtest.Encoded(t, mac)); err != nil {
		t.Fatalf("a record written on darwin is refused: %v", err)
	}
	full := recordtest.Sample()
	full.PromptSHA256, full.RunReclaims = strings.Repeat("0", 64), 2
	full.PromptChanges = []record.PromptChange{recordtest.PromptChange(record.PromptResume), recordtest.PromptChange(record.PromptStartOver)}
	if _, err := record.Decode(recordtest.Encoded(t, full)); err != nil {
		t.Fatalf("a sample with version 4's fields is refused: %v", err)
	}
	traced := recordtest.Sample()
	traced.Trace = record.TraceRef{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", SpanID: "00f067aa0ba902b7"}
	if r, err := record.Decode(recordtest.Encoded(t, traced)); err != nil || r.Trace != traced.Trace {
		t.Fatalf("a sample with version 5's trace reads as %+v, %v", r.Trace, err)
	}
	// A version 4 record cannot name a trace: version 5 added it.
	var m map[string]any
	if err := json.Unmarshal(recordtest.Encoded(t, traced), &m); err != nil {
		t.Fatal(err)
	}
	m["version"] = 4
	v4, _ := json.Marshal(m)
	if _, err := record.Decode(v4); err == nil || !strings.Contains(err.Error(), "version 5 added") {
		t.Errorf("a trace in a version 4 record: err = %v", err)
	}
	delete(m, "trace")
	v4, _ = json.Marshal(m)
	if r, err := record.Decode(v4); err != nil || !r.Trace.IsZero() || r.Version != record.Version || r.ReadVersion != 4 {
		t.Errorf("a version 4 record without a trace reads as %+v, version %d read from %d, %v", r.Trace, r.Version, r.ReadVersion, err)
	}
	if r, err := record.Decode(recordtest.Encoded(t, traced)); err != nil || r.ReadVersion != record.Version {
		t.Errorf("a record of this malarun reads as read from version %d, %v", r.ReadVersion, err)
	}
	// Version 6 added api_answered: a version 5 record cannot have it.
	answered := recordtest.Sample()
	answered.APIAnswered = true
	if r, err := record.Decode(recordtest.Encoded(t, answered)); err != nil || !r.APIAnswered {
		t.Fatalf("a sample with version 6's api_answered reads as %v, %v", r.APIAnswered, err)
	}
	m = nil
	if err := json.Unmarshal(recordtest.Encoded(t, answered), &m); err != nil {
		t.Fatal(err)
	}
	m["version"] = 5
	v5, _ := json.Marshal(m)
	if _, err := record.Decode(v5); err == nil || !strings.Contains(err.Error(), "version 6 added") {
		t.Errorf("api_answered in a version 5 record: err = %v", err)
	}
	delete(m, "api_answered")
	m["mcp_servers_not_connected"] = []map[string]string{{"name": "x", "status": "failed"}}
	v5, _ = json.Marshal(m)
	if _, err := record.Decode(v5); err == nil || !strings.Contains(err.Error(), "version 6 added") {
		t.Errorf("mcp_servers_not_connected in a version 5 record: err = %v", err)
	}
	// Version 8 added phase_room: a version 7 record cannot have it.
	roomy := recordtest.Sample()
	roomy.PhaseRoom = map[string]int{"tool_input": 2}
	if r, err := record.Decode(recordtest.Encoded(t, roomy)); err != nil || r.PhaseRoom["tool_input"] != 2 {
		t.Fatalf("a sample with phase_room reads as %v, %v", r.PhaseRoom, err)
	}
	m = nil
	if err := json.Unmarshal(recordtest.Encoded(t, roomy), &m); err != nil {
		t.Fatal(err)
	}
	m["version"] = 7
	v7, _ := json.Marshal(m)
	if _, err := record.Decode(v7); err == nil || !strings.Contains(err.Error(), "version 8 added") {
		t.Errorf("phase_room in a version 7 record: err = %v", err)
	}
}

func TestRunAndSessionIDs(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 4, 1, 0, time.UTC)
	if id := record.RunID(now, [3]byte{0x3f, 0x9a, 0x1c}); id != "20261122T120401Z-3f9a1c" || !record.ValidRunID(id) {
		t.Errorf("RunID = %q", id)
	}
	for _, bad := range []string{"", "r1", "20261122T120401Z", "20261122T120401Z-3F9A1C", "20261122T120401Z-3f9a1", "20261322T120401Z-3f9a1c",
		"20261122T120401Z-3f9a1c/..", "../20261122T120401Z-3f9a1c", "2026112T120401Z-3f9a1c0"} {
		if record.ValidRunID(bad) {
			t.Errorf("ValidRunID(%q)", bad)
		}
	}
	if !record.ValidSessionID(recordtest.SessionID) {
		t.Errorf("ValidSessionID(%q) is false", recordtest.SessionID)
	}
	for _, bad := range []string{"", "--dangerously-skip-permissions", "-r", strings.ToUpper(recordtest.SessionID), recordtest.SessionID + "0",
		"5fcbbccf-06da-4fd6-8405_d704e7fbd2c7", "5fcbbccf06da-4fd6-8405-d704e7fbd2c7-", "5fcbbccf-06da-4fd6-8405-d704e7fbd2cg"} {
		if record.ValidSessionID(bad) {
			t.Errorf("ValidSessionID(%q)", bad)
		}
	}
}

func TestValidUSD(t *testing.T) {
	for v, want := range map[float64]bool{0: true, 1.5: true, record.MaxUSD: true, math.Nextafter(record.MaxUSD, math.Inf(1)): false,
		-0.01: false, math.Inf(1): false, math.NaN(): false, 1e308: false} {
		if record.ValidUSD(v) != want {
			t.Errorf("ValidUSD(%g) = %v", v, !want)
		}
	}
}

// An earlier malarun recorded $PWD as spelled, "/work/" say: the same
// folder, read back clean.
func TestUncleanCwdReadsClean(t *testing.T) {
	r := recordtest.Sample()
	r.Cwd = "/work/"
	got, err := record.Decode(recordtest.Raw(t, r))
	if err != nil || got.Cwd != "/work" {
		t.Errorf("cwd %q, err %v", got.Cwd, err)
	}
}

func FuzzDecode(f *testing.F) {
	good, _ := json.Marshal(func() record.Record { r := recordtest.Sample(); r.Version = record.Version; return r }())
	f.Add(good)
	f.Add([]byte(`{"version":1,"issue":"x","status":"failed"}`))
	f.Add([]byte(`{"version":2,"issue":"x","status":"waiting","retry_at":"2026-11-22T16:05:11Z","limit_type":"five_hour"}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := record.Decode(data)
		if err != nil {
			return
		}
		// A record that decodes is complete: it has an issue, a known
		// status, and survives a round trip.
		if r.Issue == "" || r.Version != record.Version {
			t.Fatalf("accepted an incomplete record: %+v", r)
		}
		b, _ := json.Marshal(r)
		if _, err := record.Decode(b); err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
	})
}
