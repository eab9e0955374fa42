package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/stream"
)

// plantedRecords are records malarun never writes, each with one field an
// edited, restored or planted file could hold: each must be refused as
// damaged, never followed.
func plantedRecords() map[string]func(*Record) {
	return map[string]func(*Record){
		"session id is a flag": func(r *Record) { r.SessionID = "--dangerously-skip-permissions" },
		"trace id upper case": func(r *Record) {
			r.Trace = TraceRef{TraceID: "4BF92F3577B34DA6A3CE929D0E0E4736", SpanID: "00f067aa0ba902b7"}
		},
		"trace id all zero": func(r *Record) {
			r.Trace = TraceRef{TraceID: strings.Repeat("0", 32), SpanID: "00f067aa0ba902b7"}
		},
		"span id missing": func(r *Record) { r.Trace = TraceRef{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736"} },
		"trace id holds escapes": func(r *Record) {
			r.Trace = TraceRef{TraceID: "\x1b[31m4bf92f3577b34da6a3ce929d0e0", SpanID: "00f067aa0ba902b7"}
		},
		"session id upper case":   func(r *Record) { r.SessionID = strings.ToUpper(testSession) },
		"session list":            func(r *Record) { r.Sessions = []string{testSession, "../../etc"} },
		"run id a path":           func(r *Record) { r.RunID, r.Runs = "../../..", []string{"../../.."} },
		"runs holds a path":       func(r *Record) { r.Runs = []string{testRun, "/etc"} },
		"run dir alone":           func(r *Record) { r.RunID, r.Runs, r.Marker = "", nil, "" },
		"marker of another run":   func(r *Record) { r.Marker = "issue-1/20261122T120401Z-000000" },
		"marker prefix":           func(r *Record) { r.Marker = "issue" },
		"cwd relative":            func(r *Record) { r.Cwd = "work" },
		"cwd with NUL":            func(r *Record) { r.Cwd = "/work\x00x" },
		"home relative":           func(r *Record) { r.Home = "home" },
		"tree pid 1":              func(r *Record) { r.Tree = []ProcRef{{Pid: 1, StartTime: 5}} },
		"tree pid 0":              func(r *Record) { r.Tree = []ProcRef{{Pid: 0, StartTime: 5}} },
		"tree pid -1":             func(r *Record) { r.Tree = []ProcRef{{Pid: -1, StartTime: 5}} },
		"tree without start time": func(r *Record) { r.Tree = []ProcRef{{Pid: 4242, StartTime: 0}} },
		"owner pid negative":      func(r *Record) { r.Owner.Pid = -1 },
		"owner host escape":       func(r *Record) { r.Owner.Host = "h\x1b]0;pwned\x07" },
		"owner boot id":           func(r *Record) { r.Owner.BootID = "not a boot id" },
		"owner pid ns":            func(r *Record) { r.Owner.PidNS = "pid:[1]" },
		"owner boot id darwin+":   func(r *Record) { r.Owner.BootID = "darwin:darwin:1" },
		"owner pid ns darwin2":    func(r *Record) { r.Owner.PidNS = "darwin2" },
		"negative attempts":       func(r *Record) { r.Attempts = -1 },
		"reclaims near overflow":  func(r *Record) { r.Reclaims = math.MaxInt },
		"negative side effects":   func(r *Record) { r.SideEffects = map[string]int{"Bash": -3} },
		"cost 1e308":              func(r *Record) { r.TotalCostUSD = 1e308 },
		"cost negative":           func(r *Record) { r.CostUSD = -0.5 },
		"exit code 256":           func(r *Record) { r.ExitCode = 256 },
		"retry at year 9999":      func(r *Record) { r.RetryAt = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC) },
		"retry at 1970":           func(r *Record) { r.RetryAt = time.Unix(5, 0) },
		"unknown output":          func(r *Record) { r.OutputFailures = []OutputFailure{{Output: "/dev/tty", Error: "x"}} },
		"no issue":                func(r *Record) { r.Issue = "" },
		"run reclaims negative":   func(r *Record) { r.RunReclaims = -1 },
		"phase room huge":         func(r *Record) { r.PhaseRoom = map[string]int{"tool_input": 63} },
		"phase room negative":     func(r *Record) { r.PhaseRoom = map[string]int{"thinking": -1} },
		"phase room odd name":     func(r *Record) { r.PhaseRoom = map[string]int{"\x1b[2J": 1} },
		// Issue 47: text never grows (its deltas flow), so {"text":2} would
		// quadruple text_timeout; nor do tools, nor the phases without a
		// silence of their own.
		"phase room of text":        func(r *Record) { r.PhaseRoom = map[string]int{"text": 2} },
		"phase room of tools":       func(r *Record) { r.PhaseRoom = map[string]int{"tool": 1} },
		"phase room of replying":    func(r *Record) { r.PhaseRoom = map[string]int{"replying": 1} },
		"phase room of starting":    func(r *Record) { r.PhaseRoom = map[string]int{"starting": 1} },
		"phase room of a retry":     func(r *Record) { r.PhaseRoom = map[string]int{"retry": 1} },
		"phase room unknown phase":  func(r *Record) { r.PhaseRoom = map[string]int{"typing": 1} },
		"phase room unknown beside": func(r *Record) { r.PhaseRoom = map[string]int{"thinking": 1, "dreaming": 1} },
		"phase room over MaxRoom":   func(r *Record) { r.PhaseRoom = map[string]int{"thinking": attempt.MaxRoom + 1} },
		"phase room zero":           func(r *Record) { r.PhaseRoom = map[string]int{"waiting": 0} },
		"side effects zero":         func(r *Record) { r.SideEffects = map[string]int{"Bash": 0} },
		"side effect tool name 5k":  func(r *Record) { r.SideEffects = map[string]int{strings.Repeat("x", 5000): 1} },
		"running over the cap":      func(r *Record) { r.Running = calls(MaxInFlight + 1) },
		"running more, list short":  func(r *Record) { r.RunningMore = 5 },
		"running more negative":     func(r *Record) { r.Running, r.RunningMore = calls(MaxInFlight), -1 },
		"running input 600 bytes":   func(r *Record) { r.Running = []ToolCall{{Name: "Bash", Input: strings.Repeat("a", 600)}} },
		"running name 5k":           func(r *Record) { r.Running = []ToolCall{{Name: strings.Repeat("B", 5000)}} },
		"tasks over the cap": func(r *Record) {
			for i := range MaxInFlight + 1 {
				r.Tasks = append(r.Tasks, Task{ID: fmt.Sprint("b", i)})
			}
		},
		"tasks more, none named":  func(r *Record) { r.TasksMore = 1 },
		"task without id":         func(r *Record) { r.Tasks = []Task{{Description: "x"}} },
		"task description 600":    func(r *Record) { r.Tasks = []Task{{ID: "b1", Description: strings.Repeat("d", 600)}} },
		"mcp server connected":    func(r *Record) { r.MCPNotConnected = []MCPServer{{Name: "x", Status: "connected"}} },
		"mcp servers over a line": func(r *Record) { r.MCPNotConnected = make([]MCPServer, 257) },
		"output failures 17": func(r *Record) {
			for range MaxOutputFailures + 1 {
				r.OutputFailures = append(r.OutputFailures, OutputFailure{Output: "stderr", Error: "EPIPE"})
			}
		},
		"poisoned while processing": func(r *Record) { r.Poisoned = true },
		"tree of two":               func(r *Record) { r.Tree = append(r.Tree, ProcRef{Pid: 8, StartTime: 100}) },
		"issue a path":              func(r *Record) { r.Issue, r.Marker = "../x", "../x/"+testRun },
		"issue with an escape":      func(r *Record) { r.Issue, r.Marker = "i\x1b[2J", "i\x1b[2J/"+testRun },
		"runs twice":                func(r *Record) { r.Runs = []string{testRun, testRun} },
		"runs without the run":      func(r *Record) { r.Runs = []string{"20261122T120401Z-000000"} },
		"runs not ending with it":   func(r *Record) { r.Runs = []string{testRun, "20261122T120401Z-000000"} },
		"checkpoint over 1 MiB":     func(r *Record) { r.Checkpoint = strings.Repeat("c", stream.MaxResultBytes+1) },
		"issue a dot":               func(r *Record) { r.Issue, r.Marker = ".", "./"+testRun },
		"more killed than ran":      func(r *Record) { r.Attempts, r.KilledAttempts = 1, 2 },
		"prompt hash not hex":       func(r *Record) { r.PromptSHA256 = strings.Repeat("z", 64) },
		"prompt hash short":         func(r *Record) { r.PromptSHA256 = "abc" },
		"prompt change decision":    func(r *Record) { r.PromptChanges = []PromptChange{goodPromptChange("rm -rf")} },
		"prompt change run": func(r *Record) {
			c := goodPromptChange(PromptResume)
			c.RunID = "../x"
			r.PromptChanges = []PromptChange{c}
		},
		"prompt change hash": func(r *Record) {
			c := goodPromptChange(PromptStartOver)
			c.GivenSHA256 = "--flag"
			r.PromptChanges = []PromptChange{c}
		},
		"too many prompt changes": func(r *Record) {
			for range MaxPromptChanges + 1 {
				r.PromptChanges = append(r.PromptChanges, goodPromptChange(PromptResume))
			}
		},
	}
}

// calls are n tool calls in flight, as a record names them.
func calls(n int) []ToolCall {
	out := make([]ToolCall, n)
	for i := range out {
		out[i] = ToolCall{Name: "Bash", Input: fmt.Sprintf(`{"command":"sleep %d"}`, i)}
	}
	return out
}

func goodPromptChange(decision string) PromptChange {
	return PromptChange{At: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC), Decision: decision, RunID: testRun,
		RecordedSHA256: strings.Repeat("a", 64), GivenSHA256: strings.Repeat("b", 64)}
}

func TestPlantedRecordsAreDamaged(t *testing.T) {
	for name, edit := range plantedRecords() {
		r := sample()
		edit(&r)
		if _, err := Encode(r); err == nil {
			t.Errorf("%s: Encode wrote it", name)
		}
		if _, err := Decode(rawRecord(t, r)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := Decode(mustEncode(t, sample())); err != nil {
		t.Fatalf("the unedited sample is refused: %v", err)
	}
	// What a malarun on darwin writes (proc.Identity there) is a record too.
	mac := sample()
	mac.Owner.BootID, mac.Owner.PidNS = "darwin:6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b", "darwin"
	if _, err := Decode(mustEncode(t, mac)); err != nil {
		t.Fatalf("a record written on darwin is refused: %v", err)
	}
	full := sample()
	full.PromptSHA256, full.RunReclaims = strings.Repeat("0", 64), 2
	full.PromptChanges = []PromptChange{goodPromptChange(PromptResume), goodPromptChange(PromptStartOver)}
	if _, err := Decode(mustEncode(t, full)); err != nil {
		t.Fatalf("a sample with version 4's fields is refused: %v", err)
	}
	traced := sample()
	traced.Trace = TraceRef{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", SpanID: "00f067aa0ba902b7"}
	if r, err := Decode(mustEncode(t, traced)); err != nil || r.Trace != traced.Trace {
		t.Fatalf("a sample with version 5's trace reads as %+v, %v", r.Trace, err)
	}
	// A version 4 record cannot name a trace: version 5 added it.
	var m map[string]any
	if err := json.Unmarshal(mustEncode(t, traced), &m); err != nil {
		t.Fatal(err)
	}
	m["version"] = 4
	v4, _ := json.Marshal(m)
	if _, err := Decode(v4); err == nil || !strings.Contains(err.Error(), "version 5 added") {
		t.Errorf("a trace in a version 4 record: err = %v", err)
	}
	delete(m, "trace")
	v4, _ = json.Marshal(m)
	if r, err := Decode(v4); err != nil || !r.Trace.IsZero() || r.Version != recordVersion || r.ReadVersion != 4 {
		t.Errorf("a version 4 record without a trace reads as %+v, version %d read from %d, %v", r.Trace, r.Version, r.ReadVersion, err)
	}
	if r, err := Decode(mustEncode(t, traced)); err != nil || r.ReadVersion != recordVersion {
		t.Errorf("a record of this malarun reads as read from version %d, %v", r.ReadVersion, err)
	}
	// Version 6 added api_answered: a version 5 record cannot have it.
	answered := sample()
	answered.APIAnswered = true
	if r, err := Decode(mustEncode(t, answered)); err != nil || !r.APIAnswered {
		t.Fatalf("a sample with version 6's api_answered reads as %v, %v", r.APIAnswered, err)
	}
	m = nil
	if err := json.Unmarshal(mustEncode(t, answered), &m); err != nil {
		t.Fatal(err)
	}
	m["version"] = 5
	v5, _ := json.Marshal(m)
	if _, err := Decode(v5); err == nil || !strings.Contains(err.Error(), "version 6 added") {
		t.Errorf("api_answered in a version 5 record: err = %v", err)
	}
	delete(m, "api_answered")
	m["mcp_servers_not_connected"] = []map[string]string{{"name": "x", "status": "failed"}}
	v5, _ = json.Marshal(m)
	if _, err := Decode(v5); err == nil || !strings.Contains(err.Error(), "version 6 added") {
		t.Errorf("mcp_servers_not_connected in a version 5 record: err = %v", err)
	}
	// Version 8 added phase_room: a version 7 record cannot have it.
	roomy := sample()
	roomy.PhaseRoom = map[string]int{"tool_input": 2}
	if r, err := Decode(mustEncode(t, roomy)); err != nil || r.PhaseRoom["tool_input"] != 2 {
		t.Fatalf("a sample with phase_room reads as %v, %v", r.PhaseRoom, err)
	}
	m = nil
	if err := json.Unmarshal(mustEncode(t, roomy), &m); err != nil {
		t.Fatal(err)
	}
	m["version"] = 7
	v7, _ := json.Marshal(m)
	if _, err := Decode(v7); err == nil || !strings.Contains(err.Error(), "version 8 added") {
		t.Errorf("phase_room in a version 7 record: err = %v", err)
	}
}

func mustEncode(t *testing.T, r Record) []byte {
	t.Helper()
	b, err := Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rawRecord is r as a file, unchecked: what an editor or an attacker writes.
func rawRecord(t *testing.T, r Record) []byte {
	t.Helper()
	r.Version = recordVersion
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A record is followed only from the issue folder it belongs to, and its
// run folder is always that issue's runs/<run id>: never a path from the file.
func TestRecordIsCheckedAgainstItsFolder(t *testing.T) {
	state := t.TempDir()
	dir := filepath.Join(state, "issue-1")
	os.MkdirAll(dir, 0o700)
	write := func(r Record) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, RecordFile), rawRecord(t, r), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := sample()
	r.RunDir = filepath.Join(dir, "runs", testRun)
	write(r)
	if e, ok := Read(state, "issue-1"); !ok || e.Err != nil || e.Record.RunDir != r.RunDir {
		t.Fatalf("a record in place: %+v", e)
	}
	// A state directory restored at another path: the run folder is where
	// the record is now.
	r.RunDir = filepath.Join("/old/state/issue-1/runs", testRun)
	write(r)
	if e, _ := Read(state, "issue-1"); e.Err != nil || e.Record.RunDir != filepath.Join(dir, "runs", testRun) {
		t.Fatalf("a moved state dir: %+v", e)
	}
	for name, edit := range map[string]func(*Record){
		"run dir elsewhere":     func(r *Record) { r.RunDir = "/home/victim/project/" + testRun },
		"run dir of an issue":   func(r *Record) { r.RunDir = filepath.Join(state, "issue-2", "runs", testRun) },
		"run dir of a sibling":  func(r *Record) { r.RunDir = filepath.Join(dir, "runs", "20261122T120401Z-000000") },
		"run dir not in runs":   func(r *Record) { r.RunDir = filepath.Join(dir, "x", testRun) },
		"another issue's":       func(r *Record) { r.Issue, r.Marker = "issue-2", "issue-2/"+testRun },
		"run dir relative":      func(r *Record) { r.RunDir = filepath.Join("issue-1", "runs", testRun) },
		"run dir with dot-dots": func(r *Record) { r.RunDir = filepath.Join(dir, "runs") + "/../../issue-1/runs/" + testRun },
	} {
		r := sample()
		edit(&r)
		write(r)
		e, ok := Read(state, "issue-1")
		var de *DecodeError
		if !ok || !errors.As(e.Err, &de) || !strings.Contains(e.Err.Error(), "--reset") {
			t.Errorf("%s: read as %+v, %v", name, e.Record, e.Err)
		}
	}
}

func TestHugeRecordIsDamagedWithoutReadingIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), RecordFile)
	f, _ := os.Create(path)
	f.Truncate(MaxRecordBytes + 1) // sparse: costs no disk
	f.Close()
	_, err := ReadRecord(path)
	var de *DecodeError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "larger than any record") {
		t.Fatalf("err = %v", err)
	}
}

func TestRunAndSessionIDs(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 4, 1, 0, time.UTC)
	id := NewRunID(now)
	if !ValidRunID(id) || !strings.HasPrefix(id, "20261122T120401Z-") {
		t.Errorf("NewRunID = %q", id)
	}
	for _, bad := range []string{"", "r1", "20261122T120401Z", "20261122T120401Z-3F9A1C", "20261122T120401Z-3f9a1", "20261322T120401Z-3f9a1c",
		"20261122T120401Z-3f9a1c/..", "../20261122T120401Z-3f9a1c", "2026112T120401Z-3f9a1c0"} {
		if ValidRunID(bad) {
			t.Errorf("ValidRunID(%q)", bad)
		}
	}
	if !ValidSessionID(testSession) {
		t.Errorf("ValidSessionID(%q) is false", testSession)
	}
	for _, bad := range []string{"", "--dangerously-skip-permissions", "-r", strings.ToUpper(testSession), testSession + "0",
		"5fcbbccf-06da-4fd6-8405_d704e7fbd2c7", "5fcbbccf06da-4fd6-8405-d704e7fbd2c7-", "5fcbbccf-06da-4fd6-8405-d704e7fbd2cg"} {
		if ValidSessionID(bad) {
			t.Errorf("ValidSessionID(%q)", bad)
		}
	}
}

func TestValidUSD(t *testing.T) {
	for v, want := range map[float64]bool{0: true, 1.5: true, MaxUSD: true, math.Nextafter(MaxUSD, math.Inf(1)): false,
		-0.01: false, math.Inf(1): false, math.NaN(): false, 1e308: false} {
		if ValidUSD(v) != want {
			t.Errorf("ValidUSD(%g) = %v", v, !want)
		}
	}
}

// An earlier malarun recorded $PWD as spelled, "/work/" say: the same
// folder, read back clean.
func TestUncleanCwdReadsClean(t *testing.T) {
	r := sample()
	r.Cwd = "/work/"
	got, err := Decode(rawRecord(t, r))
	if err != nil || got.Cwd != "/work" {
		t.Errorf("cwd %q, err %v", got.Cwd, err)
	}
}
