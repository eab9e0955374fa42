package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/malarun/malarun/internal/event"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/supervisor"
)

// The reference pages in docs/ hold the tables a user comes back for. A
// config key, an exit code or an event kind added to the code without its
// row there fails here, naming the page.

// tableRows returns the lines of text that are rows of a Markdown table
// (separator lines included; they name nothing).
func tableRows(text string) []string {
	var rows []string
	for line := range strings.SplitSeq(text, "\n") {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "|") {
			rows = append(rows, line)
		}
	}
	return rows
}

// missingRows returns each want whose every needle appears in no single row.
func missingRows(rows []string, want map[string][]string) []string {
	var missing []string
	for name, needles := range want {
		found := false
		for _, row := range rows {
			all := true
			for _, n := range needles {
				if !strings.Contains(row, n) {
					all = false
					break
				}
			}
			if all {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, name)
		}
	}
	return missing
}

func readPage(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(repoPath(rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Every key has a row in docs/configuration.md naming it and its
// environment variable.
func TestDocsConfigurationListsEveryKey(t *testing.T) {
	rows := tableRows(readPage(t, "docs/configuration.md"))
	want := map[string][]string{}
	for _, k := range configKeys() {
		want[k.name] = []string{"| `" + k.name + "` |", "`" + k.envName() + "`"}
	}
	for _, name := range missingRows(rows, want) {
		t.Errorf("docs/configuration.md has no table row for the key `%s` with `%s`", name, "MALARUN_"+strings.ToUpper(name))
	}
}

// Every exit code, with its outcome, is a row of docs/exit-codes.md's table.
func TestDocsExitCodesListsEveryCode(t *testing.T) {
	table, err := readmeExitCodes([]byte(readPage(t, "docs/exit-codes.md")))
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, row := range table {
		have[fmt.Sprintf("%d %s", row.code, row.cells["outcome"])] = true
	}
	for _, r := range exitCodes() {
		if !have[fmt.Sprintf("%d %s", r.code, string(r.outcome))] {
			t.Errorf("docs/exit-codes.md has no row for exit code %d, outcome `%s`", r.code, string(r.outcome))
		}
	}
}

// eventKinds reads the Kind constants of internal/event/event.go:
// their Go names and their values.
func eventKinds(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), repoPath("internal/event/event.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Kind" {
				continue
			}
			for i, n := range v.Names {
				lit, ok := v.Values[i].(*ast.BasicLit)
				if !ok {
					t.Fatalf("event.go: %s is not a string literal", n.Name)
				}
				val, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				kinds[n.Name] = val
			}
		}
	}
	if len(kinds) == 0 {
		t.Fatal("found no Kind constants in internal/event/event.go")
	}
	return kinds
}

// Every event written to --events (all but progress, the status line's
// feed) is a row of docs/json-report.md's events table.
func TestDocsJSONReportListsEveryEvent(t *testing.T) {
	kinds := eventKinds(t)
	if kinds["Progress"] != string(event.Progress) || kinds["RunFinished"] != string(event.RunFinished) {
		t.Fatalf("event.go was read wrong: %v", kinds)
	}
	rows := tableRows(readPage(t, "docs/json-report.md"))
	want := map[string][]string{}
	for name, v := range kinds {
		if name == "Progress" {
			continue // not written to --events
		}
		want[v] = []string{"`" + v + "`"}
	}
	for _, v := range missingRows(rows, want) {
		t.Errorf("docs/json-report.md has no table row for the event `%s`", v)
	}
}

// Every phase of the stream has its row in docs/configuration.md's phase
// table, and every variable malarun sets for claude has its row, with
// the value malarun gives it (docs/design.md §D30).
func TestPhasesAndCLIVarsHaveRows(t *testing.T) {
	rows := tableRows(readPage(t, "docs/configuration.md"))
	want := map[string][]string{}
	for _, p := range attempt.Phases() {
		want["phase "+p.String()] = []string{"| `" + p.String() + "` |"}
	}
	for _, v := range attempt.CLIVars(attempt.Limits{Subagent: supervisor.DefaultSubagentTimeout}) {
		want["variable "+v.Name] = []string{"| `" + v.Name + "` | " + v.Doc + " |"}
		if !strings.Contains(v.Doc, "`"+v.Value+"`") {
			t.Errorf("%s's documented value %s is not the default's %s", v.Name, v.Doc, v.Value)
		}
	}
	if missing := missingRows(rows, want); len(missing) > 0 {
		t.Errorf("docs/configuration.md has no row for %v", missing)
	}
}
