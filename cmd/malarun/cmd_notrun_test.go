package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// The fleet recipe passes the runs' own arguments to not-run: it takes
// every flag a run takes, so no flag a user gives the fleet breaks the
// note.
func TestNotRunTakesEveryRunFlag(t *testing.T) {
	root := newRootCmd(&app{deps: &deps{}})
	notRun, _, err := root.Find([]string{"not-run"})
	if err != nil || notRun.Name() != "not-run" {
		t.Fatalf("no not-run command: %v", err)
	}
	root.Flags().VisitAll(func(f *pflag.Flag) {
		if notRun.Flags().Lookup(f.Name) == nil {
			t.Errorf("not-run does not take the run's flag --%s", f.Name)
		}
	})
}

// A prompt file the recipe refused, and one malarun refused with exit 2,
// are noted in the state_dir the runs' arguments name (whatever else they
// hold, a broken key included), the summary names them first, and a
// fleet's start clears its folder's notes.
func TestNotRunNotesWhatTheSummaryNames(t *testing.T) {
	c := newCLI(t)
	state := t.TempDir()
	runArgs := []string{"--state-dir", state, "--json", "-q", "--events", "ev.jsonl", "--max-attempts", "2", "--", "--model", "sonnet"}
	if o := c.run(append([]string{"not-run", "--prompt", "prompts/bad name\x1b[31m.md", "--why", "not an issue id"}, runArgs...)...); o.code != 0 {
		t.Fatalf("not-run: exit %d\n%s", o.code, o.stderr)
	}
	broken := append([]string{"not-run", "--prompt", "prompts/x.md", "--why", `max_cost_usd "abc": not a number`, "--exit-code", "2",
		"--max-cost-usd", "abc"}, runArgs...)
	if o := c.run(broken...); o.code != 0 {
		t.Fatalf("not-run with a broken key beside state_dir: exit %d\n%s", o.code, o.stderr)
	}
	o := c.run("summary", "--state-dir", state, "--format", "json")
	var s struct {
		ActOn []struct {
			Kind   string
			Issues []string
			Files  []string
		} `json:"act_on"`
		NotRun []struct {
			File     string
			Issue    string
			ExitCode *int `json:"exit_code"`
		} `json:"not_run"`
	}
	if err := json.Unmarshal([]byte(o.stdout), &s); err != nil {
		t.Fatalf("%v\n%s%s", err, o.stdout, o.stderr)
	}
	if len(s.NotRun) != 2 || len(s.ActOn) != 2 || s.ActOn[0].Kind != "configuration" || s.ActOn[1].Kind != "not_run" ||
		!slices.Equal(s.ActOn[1].Files, []string{"prompts/bad name^[[31m.md"}) {
		t.Errorf("the summary: act on %+v, not run %+v", s.ActOn, s.NotRun)
	}
	for _, n := range s.NotRun {
		if n.File == "prompts/x.md" && (n.Issue != "x" || n.ExitCode == nil || *n.ExitCode != 2) {
			t.Errorf("the exit-2 note: %+v", n)
		}
	}
	if text := c.run("summary", "--state-dir", state).stdout; !strings.Contains(text, "Act on these first") ||
		strings.Index(text, "Act on these first") > strings.Index(text, "Status ") {
		t.Errorf("the text form does not begin with what to act on:\n%s", text)
	}
	if o := c.run(append([]string{"not-run", "--clear", "prompts/"}, runArgs...)...); o.code != 0 {
		t.Fatalf("not-run --clear: exit %d\n%s", o.code, o.stderr)
	}
	if left, _ := os.ReadDir(filepath.Join(state, "not-run")); len(left) != 0 {
		t.Errorf("after --clear, %d notes are left", len(left))
	}
	c.run("not-run", "--why", "x").wantUsage(t, "give --prompt FILE (with --why) or --clear PROMPTS_DIR")
	c.run("not-run", "stray", "--prompt", "p.md").wantUsage(t, `"stray" is not a flag`)
	c.run("not-run", "--prompt", "p.md", "--exit-code", "300", "--state-dir", state).wantUsage(t, "--exit-code 300")
}

// --since-summary and --page say what is wrong with their value.
func TestSummaryComparisonMistakes(t *testing.T) {
	c := newCLI(t)
	c.env["MALARUN_STATE_DIR"] = t.TempDir()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	c.run("summary", "--since-summary", filepath.Join(dir, "missing.json")).wantUsage(t, "--since-summary", "missing.json", "no such file")
	c.run("summary", "--since-summary", write("text.json", "malarun summary of /state")).wantUsage(t, "not a summary's JSON form")
	c.run("summary", "--since-summary", write("v2.json", `{"version": 2, "made_at": "2026-11-27T07:00:00Z"}`)).wantUsage(t, "a summary of version 2")
	c.run("summary", "--since-summary", write("old.json", `{"version": 1, "made_at": "1970-01-01T00:00:00Z"}`)).wantUsage(t, "is not a time a summary was made")
	c.run("summary", "--page", "2").wantUsage(t, "--page 2: a page of --format json's issues_list")
	c.run("summary", "--format", "json", "--page", "0").wantUsage(t, "--page 0")
	c.run("summary", "--format", "json", "--page", "2").wantUsage(t, "--page 2: the summary has 1")
	empty := c.run("summary", "--format", "json")
	if empty.code != 0 {
		t.Fatalf("exit %d\n%s", empty.code, empty.stderr)
	}
	if o := c.run("summary", "--since-summary", write("last.json", empty.stdout)); o.code != 0 || !strings.Contains(o.stdout, "Since the summary made") {
		t.Errorf("a comparison with an earlier summary: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
}
