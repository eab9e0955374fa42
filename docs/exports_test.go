package docs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The rule CONTRIBUTING.md states under "Exported names": a name of a
// package under internal/ is exported because another package uses it.
// The few exported for another reason are kept here, each with its reason
// on one line; the test fails when a name is exported that no other folder
// uses, and when an entry below is no longer true. A folder uses a name
// when it writes pkg.Name (in any Go file of any module of the repository,
// tests included), or uses a name whose exported API names it: the type of
// an exported field, of a parameter or result of an exported function or
// method, of an exported variable (exports_api_test.go). And an exported
// name must not name an unexported type of its package in its API.

// keptExports are the exported names of internal/ no other package uses,
// and why each stays exported.
var keptExports = map[string]string{
	// Members of a typed set whose siblings other packages use: one set,
	// one spelling, whichever of its values a caller happens to need.
	"internal/replay.BeganNew":                  "a value of Attempt.Began; replay.BeganResume is used outside",
	"internal/replay.BeganFresh":                "a value of Attempt.Began; replay.BeganResume is used outside",
	"internal/replay.BeganCheckpoint":           "a value of Attempt.Began; replay.BeganResume is used outside",
	"internal/replay.BeganContinuation":         "a value of Attempt.Began; replay.BeganResume is used outside",
	"internal/replay.BeganFallback":             "a value of Attempt.Began; replay.BeganResume is used outside",
	"internal/replay.BeganReclaim":              "a value of Attempt.Began; replay.BeganResume is used outside",
	"internal/replay.BeganUnknown":              "a value of Attempt.Began; replay.BeganResume is used outside",
	"internal/replay.KindText":                  "an item kind of the replay; KindNote, KindPrompt, KindToolCall... are used outside",
	"internal/replay.KindToolRunning":           "an item kind of the replay; KindNote, KindPrompt, KindToolCall... are used outside",
	"internal/replay.KindHook":                  "an item kind of the replay; KindNote, KindPrompt, KindToolCall... are used outside",
	"internal/run.Done":                         "a DecisionKind; run.DecidedNone, run.Fail, run.Checkpoint... are used outside",
	"internal/run.Resume":                       "a DecisionKind; run.DecidedNone, run.Fail, run.Checkpoint... are used outside",
	"internal/run.Fresh":                        "a DecisionKind; run.DecidedNone, run.Fail, run.Checkpoint... are used outside",
	"internal/run.OpenContinue":                 "an OpenKind; run.OpenNew, run.OpenReclaim, run.OpenRefused are used outside",
	"internal/run.SleepNone":                    "a SleepKind; run.SleepBackoff and run.SleepLimit are used outside",
	"internal/session.Seen":                     "a Verdict; session.NotSeen is used outside",
	"internal/session.Unknown":                  "a Verdict; session.NotSeen is used outside",
	"internal/usagelimit.Continue":              "an Action; usagelimit.Wait and usagelimit.Stop are used outside",
	"internal/telemetry.MetricReclaims":         "a metric name; the other telemetry.Metric* are used outside",
	"internal/telemetry.MetricLimitWaits":       "a metric name; the other telemetry.Metric* are used outside",
	"internal/telemetry.MetricRunSeconds":       "a metric name; the other telemetry.Metric* are used outside",
	"internal/telemetry.MetricLimitWaitSeconds": "a metric name; the other telemetry.Metric* are used outside",
	"internal/endpoint.Unknown":                 "a Cause; endpoint.Scheme is used outside",
	"internal/endpoint.NotFound":                "a Cause; endpoint.Scheme is used outside",
	"internal/endpoint.Refused":                 "a Cause; endpoint.Scheme is used outside",
	"internal/endpoint.NoRoute":                 "a Cause; endpoint.Scheme is used outside",
	"internal/endpoint.Certificate":             "a Cause; endpoint.Scheme is used outside",
	"internal/manpage.Pre":                      "a Block constructor beside Para, Item, Lines and Sub, which cmd/malarun uses",

	// Used outside, but not as pkg.Name.
	"internal/proc.FindMarked": "used by proc's external tests (package proc_test: they import testchild, which imports proc)",

	// Kept by the branch i48-runner (issue 48), which unexported the rest
	// of internal/supervisor's and internal/attempt's.
	"internal/attempt.APIError":           "an Ending; attempt.Ending's other values are used outside",
	"internal/attempt.StopSessionTimeout": "a StopReason; attempt.StopNone, StopHang, StopAuth... are used outside",
	"internal/attempt.KillGrace":          "a Grace; attempt.ShutdownGrace is used outside",
	"internal/attempt.PhaseCompacting":    "a Phase; attempt.PhaseStarting, PhaseTool, PhaseWaiting... are used outside",
	"internal/attempt.PhaseSubagent":      "a Phase; attempt.PhaseStarting, PhaseTool, PhaseWaiting... are used outside",
}

func TestInternalExportsAreUsedOutside(t *testing.T) {
	s, err := scanExports(moduleRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.declared) == 0 || len(s.usedOutside) == 0 {
		t.Fatalf("found %d exported names and %d uses: the scan read nothing", len(s.declared), len(s.usedOutside))
	}
	checkExports(t, s, keptExports)
}

// TestExportCheckCatchesUnusedNames runs the check on a small repository
// of its own, so the test above cannot pass by checking nothing: an unused
// name, a stale kept entry, a dot import, a use through an alias, from a
// test, from another module, and a local that only looks like a package;
// uses through an API (a result, a field, a method's func parameter, a
// variable's type; not an unexported field, not the API of an unused name;
// a kept entry so used), and an exported API that names an unexported type
// (a result, a field, a method's parameter; not a method or field of an
// unexported type, not an embedded unexported type, not a type parameter
// spelled like one).
func TestExportCheckCatchesUnusedNames(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n")
	write("internal/a/a.go", "package a\n\nconst (\n\tUsed = 1\n\tByAlias = 2\n\tByTest = 3\n\tByModule = 4\n"+
		"\tUnused = 5\n\tKept = 6\n\tKeptButUsed = 7\n\tShadowed = 8\n)\n\nfunc (T) Method() {}\n\ntype T int\n")
	write("internal/a/api.go", "package a\n\ntype Result struct {\n\tParts  []Part\n\tInner  inner\n\thidden Hidden\n\tbase\n}\n\ntype base struct{}\n\n"+
		"type Part struct{}\n\nfunc (Part) Each(func(map[string]*Leaf) error) {}\n\nfunc (Part) Take(p *piece) {}\n\n"+
		"type Leaf struct{}\n\ntype Hidden struct{}\n\ntype Orphan struct{}\n\ntype Config struct{}\n\n"+
		"type inner struct{ Exposed opened }\n\ntype piece struct{}\n\ntype opened struct{}\n\n"+
		"func (opened) Name() opened { return opened{} }\n\nfunc Make() *Result { return nil }\n\n"+
		"func Unreached() Orphan { return Orphan{} }\n\nfunc Open() opened { return opened{} }\n\nvar Default Config\n\n"+
		"func First[elem any](xs []elem) elem { return xs[0] }\n")
	write("internal/a/elem.go", "package a\n\ntype elem struct{}\n")
	write("internal/a/a_test.go", "package a_test\n\nimport \"example.com/m/internal/a\"\n\nvar _ = a.Unused\n")
	write("internal/a/exported_test.go", "package a\n\nconst InTestOnly = 9\n")
	write("cmd/c/c.go", "package main\n\nimport (\n\t\"example.com/m/internal/a\"\n\tb \"example.com/m/internal/a\"\n)\n\n"+
		"func main() {\n\t_ = a.Used + b.ByAlias + a.KeptButUsed\n\t_, _, _ = a.Make(), a.Default, a.First([]int{1})\n\tvar x struct{ Shadowed int }\n\t{\n\t\ta := x\n\t\t_ = a.Shadowed\n\t}\n}\n")
	write("cmd/c/c_test.go", "package main\n\nimport \"example.com/m/internal/a\"\n\nvar _ = a.ByTest\n")
	write("tools/x/go.mod", "module example.com/m/tools/x\n")
	write("tools/x/x.go", "package x\n\nimport (\n\t\"example.com/m/internal/a\"\n\t. \"example.com/m/internal/a\"\n)\n\nvar _ = a.ByModule + Used\n")

	s, err := scanExports(root)
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]string{"internal/a.Kept": "a reason", "internal/a.KeptButUsed": "a reason", "internal/a.Gone": "a reason",
		"internal/a.Leaf": "a reason"}
	problems, unused, throughAPI := exportProblems(s, kept)
	want := []string{
		"internal/a.Gone is in the kept list but is no longer",
		"internal/a.Hidden is exported and no other package uses it",
		"internal/a.KeptButUsed is in the kept list but another package uses it now",
		"internal/a.Leaf is in the kept list but internal/a.Part.Each names it, which another package uses",
		"internal/a.Open is exported and no other package uses it",
		"internal/a.Open names opened, an unexported type of its package",
		"internal/a.Orphan is exported and no other package uses it",
		"internal/a.Part.Take names piece, an unexported type of its package",
		"internal/a.Result.Inner names inner, an unexported type of its package",
		"internal/a.Shadowed is exported and no other package uses it",
		"internal/a.T is exported and no other package uses it",
		"internal/a.Unreached is exported and no other package uses it",
		"internal/a.Unused is exported and no other package uses it",
		"tools/x/x.go: a dot import of example.com/m/internal/a",
	}
	if len(problems) != len(want) {
		t.Fatalf("problems:\n%s\nwant %d", strings.Join(problems, "\n"), len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(problems[i], w) {
			t.Errorf("problem %d = %q, want it to begin %q", i, problems[i], w)
		}
	}
	if unused != 8 || len(s.declared) != 20 || s.declared["internal/a.InTestOnly"] {
		t.Errorf("unused = %d, declared = %d (%v): want 8 (Kept, Shadowed, T, Unused, Hidden, Orphan, Unreached, Open) of 20, none from a _test.go file",
			unused, len(s.declared), s.declared)
	}
	if throughAPI != 4 {
		t.Errorf("used through an API: %d names, want 4 (Result, Part, Leaf, Config)", throughAPI)
	}
}
