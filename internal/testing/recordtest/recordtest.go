// Package recordtest holds the records the tests of internal/record and
// internal/journal share: one as malarun writes it (Sample), and records
// malarun never writes (Planted), each of which must be refused as
// damaged. Tests only.
package recordtest

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/stream"
)

// A run id and a session id as malarun makes them.
const (
	RunID     = "20261122T120401Z-3f9a1c"
	SessionID = "5fcbbccf-06da-4fd6-8405-d704e7fbd2c7"
)

// Sample is a record as malarun writes it, for an issue folder under
// /state (Save does not care where; Load moves RunDir to the folder read).
func Sample() record.Record {
	return record.Record{
		Issue: "issue-1", Status: record.Processing, Cwd: "/work", Home: "/home/u",
		RunID: RunID, RunDir: "/state/issue-1/runs/" + RunID, Runs: []string{RunID}, Sessions: []string{SessionID},
		SessionID: SessionID, SessionTalked: true, SideEffects: map[string]int{"Bash": 2},
		InFlight: record.InFlight{Running: []stream.ToolUse{{Name: "Bash", Input: `{"command":"make"}`}}},
		Attempts: 2, Reclaims: 1, Checkpoint: "## Goal", CostUSD: 0.5, TotalCostUSD: 1.5,
		Owner:  record.Owner{Pid: 42, Host: "h", StartedAt: time.Unix(1, 0).UTC(), StartTime: 1234, BootID: "8d2f0c1e-7b7a-4a55-9f1e-2b3c4d5e6f70", PidNS: "4026531836"},
		Tree:   []record.ProcRef{{Pid: 7, StartTime: 99}},
		Marker: "issue-1/" + RunID,
	}
}

// Planted are records malarun never writes, each with one field an
// edited, restored or planted file could hold: each must be refused as
// damaged, never followed.
func Planted() map[string]func(*record.Record) {
	planted := plantedNames()
	maps.Copy(planted, plantedAmounts())
	return planted
}

// plantedNames are planted records whose ids, trace, paths, owner or
// process tree malarun never writes.
func plantedNames() map[string]func(*record.Record) {
	return map[string]func(*record.Record){
		"session id is a flag": func(r *record.Record) { r.SessionID = "--dangerously-skip-permissions" },
		"trace id upper case": func(r *record.Record) {
			r.Trace = record.TraceRef{TraceID: "4BF92F3577B34DA6A3CE929D0E0E4736", SpanID: "00f067aa0ba902b7"}
		},
		"trace id all zero": func(r *record.Record) {
			r.Trace = record.TraceRef{TraceID: strings.Repeat("0", 32), SpanID: "00f067aa0ba902b7"}
		},
		"span id missing": func(r *record.Record) { r.Trace = record.TraceRef{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736"} },
		"trace id holds escapes": func(r *record.Record) {
			r.Trace = record.TraceRef{TraceID: "\x1b[31m4bf92f3577b34da6a3ce929d0e0", SpanID: "00f067aa0ba902b7"}
		},
		"session id upper case":   func(r *record.Record) { r.SessionID = strings.ToUpper(SessionID) },
		"session list":            func(r *record.Record) { r.Sessions = []string{SessionID, "../../etc"} },
		"run id a path":           func(r *record.Record) { r.RunID, r.Runs = "../../..", []string{"../../.."} },
		"runs holds a path":       func(r *record.Record) { r.Runs = []string{RunID, "/etc"} },
		"run dir alone":           func(r *record.Record) { r.RunID, r.Runs, r.Marker = "", nil, "" },
		"marker of another run":   func(r *record.Record) { r.Marker = "issue-1/20261122T120401Z-000000" },
		"marker prefix":           func(r *record.Record) { r.Marker = "issue" },
		"cwd relative":            func(r *record.Record) { r.Cwd = "work" },
		"cwd with NUL":            func(r *record.Record) { r.Cwd = "/work\x00x" },
		"home relative":           func(r *record.Record) { r.Home = "home" },
		"tree pid 1":              func(r *record.Record) { r.Tree = []record.ProcRef{{Pid: 1, StartTime: 5}} },
		"tree pid 0":              func(r *record.Record) { r.Tree = []record.ProcRef{{Pid: 0, StartTime: 5}} },
		"tree pid -1":             func(r *record.Record) { r.Tree = []record.ProcRef{{Pid: -1, StartTime: 5}} },
		"tree without start time": func(r *record.Record) { r.Tree = []record.ProcRef{{Pid: 4242, StartTime: 0}} },
		"owner pid negative":      func(r *record.Record) { r.Owner.Pid = -1 },
		"owner host escape":       func(r *record.Record) { r.Owner.Host = "h\x1b]0;pwned\x07" },
		"owner boot id":           func(r *record.Record) { r.Owner.BootID = "not a boot id" },
		"owner pid ns":            func(r *record.Record) { r.Owner.PidNS = "pid:[1]" },
		"owner boot id darwin+":   func(r *record.Record) { r.Owner.BootID = "darwin:darwin:1" },
		"owner pid ns darwin2":    func(r *record.Record) { r.Owner.PidNS = "darwin2" },
		"issue a path":            func(r *record.Record) { r.Issue, r.Marker = "../x", "../x/"+RunID },
		"issue with an escape":    func(r *record.Record) { r.Issue, r.Marker = "i\x1b[2J", "i\x1b[2J/"+RunID },
		"issue a dot":             func(r *record.Record) { r.Issue, r.Marker = ".", "./"+RunID },
		"runs twice":              func(r *record.Record) { r.Runs = []string{RunID, RunID} },
		"runs without the run":    func(r *record.Record) { r.Runs = []string{"20261122T120401Z-000000"} },
		"runs not ending with it": func(r *record.Record) { r.Runs = []string{RunID, "20261122T120401Z-000000"} },
		"tree of two":             func(r *record.Record) { r.Tree = append(r.Tree, record.ProcRef{Pid: 8, StartTime: 100}) },
	}
}

// plantedAmounts are planted records whose counts, amounts, times, lists
// or prompt changes malarun never writes.
func plantedAmounts() map[string]func(*record.Record) {
	return map[string]func(*record.Record){
		"negative attempts":      func(r *record.Record) { r.Attempts = -1 },
		"reclaims near overflow": func(r *record.Record) { r.Reclaims = math.MaxInt },
		"negative side effects":  func(r *record.Record) { r.SideEffects = map[string]int{"Bash": -3} },
		"cost 1e308":             func(r *record.Record) { r.TotalCostUSD = 1e308 },
		"cost negative":          func(r *record.Record) { r.CostUSD = -0.5 },
		"exit code 256":          func(r *record.Record) { r.ExitCode = 256 },
		"retry at year 9999":     func(r *record.Record) { r.RetryAt = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC) },
		"retry at 1970":          func(r *record.Record) { r.RetryAt = time.Unix(5, 0) },
		"unknown output":         func(r *record.Record) { r.OutputFailures = []record.OutputFailure{{Output: "/dev/tty", Error: "x"}} },
		"no issue":               func(r *record.Record) { r.Issue = "" },
		"run reclaims negative":  func(r *record.Record) { r.RunReclaims = -1 },
		"phase room huge":        func(r *record.Record) { r.PhaseRoom = map[string]int{"tool_input": 63} },
		"phase room negative":    func(r *record.Record) { r.PhaseRoom = map[string]int{"thinking": -1} },
		"phase room odd name":    func(r *record.Record) { r.PhaseRoom = map[string]int{"\x1b[2J": 1} },
		// Issue 47: text never grows (its deltas flow), so {"text":2} would
		// quadruple text_timeout; nor do tools, nor the phases without a
		// silence of their own.
		"phase room of text":        func(r *record.Record) { r.PhaseRoom = map[string]int{"text": 2} },
		"phase room of tools":       func(r *record.Record) { r.PhaseRoom = map[string]int{"tool": 1} },
		"phase room of replying":    func(r *record.Record) { r.PhaseRoom = map[string]int{"replying": 1} },
		"phase room of starting":    func(r *record.Record) { r.PhaseRoom = map[string]int{"starting": 1} },
		"phase room of a retry":     func(r *record.Record) { r.PhaseRoom = map[string]int{"retry": 1} },
		"phase room unknown phase":  func(r *record.Record) { r.PhaseRoom = map[string]int{"typing": 1} },
		"phase room unknown beside": func(r *record.Record) { r.PhaseRoom = map[string]int{"thinking": 1, "dreaming": 1} },
		"phase room over MaxRoom":   func(r *record.Record) { r.PhaseRoom = map[string]int{"thinking": attempt.MaxRoom + 1} },
		"phase room zero":           func(r *record.Record) { r.PhaseRoom = map[string]int{"waiting": 0} },
		"side effects zero":         func(r *record.Record) { r.SideEffects = map[string]int{"Bash": 0} },
		"side effect tool name 5k":  func(r *record.Record) { r.SideEffects = map[string]int{strings.Repeat("x", 5000): 1} },
		"running over the cap":      func(r *record.Record) { r.Running = Calls(record.MaxInFlight + 1) },
		"running more, list short":  func(r *record.Record) { r.RunningMore = 5 },
		"running more negative":     func(r *record.Record) { r.Running, r.RunningMore = Calls(record.MaxInFlight), -1 },
		"running input 600 bytes":   func(r *record.Record) { r.Running = []stream.ToolUse{{Name: "Bash", Input: strings.Repeat("a", 600)}} },
		"running name 5k":           func(r *record.Record) { r.Running = []stream.ToolUse{{Name: strings.Repeat("B", 5000)}} },
		"tasks over the cap": func(r *record.Record) {
			for i := range record.MaxInFlight + 1 {
				r.Tasks = append(r.Tasks, stream.Task{ID: fmt.Sprint("b", i)})
			}
		},
		"tasks more, none named":  func(r *record.Record) { r.TasksMore = 1 },
		"task without id":         func(r *record.Record) { r.Tasks = []stream.Task{{Description: "x"}} },
		"task description 600":    func(r *record.Record) { r.Tasks = []stream.Task{{ID: "b1", Description: strings.Repeat("d", 600)}} },
		"mcp server connected":    func(r *record.Record) { r.MCPNotConnected = []stream.MCPServer{{Name: "x", Status: "connected"}} },
		"mcp servers over a line": func(r *record.Record) { r.MCPNotConnected = make([]stream.MCPServer, 257) },
		"output failures 17": func(r *record.Record) {
			for range record.MaxOutputFailures + 1 {
				r.OutputFailures = append(r.OutputFailures, record.OutputFailure{Output: "stderr", Error: "EPIPE"})
			}
		},
		"poisoned while processing": func(r *record.Record) { r.Poisoned = true },
		"checkpoint over 1 MiB":     func(r *record.Record) { r.Checkpoint = strings.Repeat("c", stream.MaxResultBytes+1) },
		"more killed than ran":      func(r *record.Record) { r.Attempts, r.KilledAttempts = 1, 2 },
		"prompt hash not hex":       func(r *record.Record) { r.PromptSHA256 = strings.Repeat("z", 64) },
		"prompt hash short":         func(r *record.Record) { r.PromptSHA256 = "abc" },
		"prompt change decision":    func(r *record.Record) { r.PromptChanges = []record.PromptChange{PromptChange("rm -rf")} },
		"prompt change run": func(r *record.Record) {
			c := PromptChange(record.PromptResume)
			c.RunID = "../x"
			r.PromptChanges = []record.PromptChange{c}
		},
		"prompt change hash": func(r *record.Record) {
			c := PromptChange(record.PromptStartOver)
			c.GivenSHA256 = "--flag"
			r.PromptChanges = []record.PromptChange{c}
		},
		"too many prompt changes": func(r *record.Record) {
			for range record.MaxPromptChanges + 1 {
				r.PromptChanges = append(r.PromptChanges, PromptChange(record.PromptResume))
			}
		},
	}
}

// Calls are n tool calls in flight, as a record names them.
func Calls(n int) []stream.ToolUse {
	out := make([]stream.ToolUse, n)
	for i := range out {
		out[i] = stream.ToolUse{Name: "Bash", Input: fmt.Sprintf(`{"command":"sleep %d"}`, i)}
	}
	return out
}

// PromptChange is a prompt change malarun records, with decision.
func PromptChange(decision string) record.PromptChange {
	return record.PromptChange{At: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC), Decision: decision, RunID: RunID,
		RecordedSHA256: strings.Repeat("a", 64), GivenSHA256: strings.Repeat("b", 64)}
}

// Raw is r as a file holds it, unchecked: what an editor or an attacker
// writes (record.Encode refuses what Decode would).
func Raw(t testing.TB, r record.Record) []byte {
	t.Helper()
	r.Version = record.Version
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Encoded is r as malarun writes it (record.Encode), which must not fail.
func Encoded(t testing.TB, r record.Record) []byte {
	t.Helper()
	b, err := record.Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
