package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/stream"
)

// status finds state_dir through --config like a run does; an issue with
// no record is a plain failure (exit 1), not a usage error.
func TestStatusReadsConfigFile(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	config := c.file("c.yaml", "state_dir: "+dir+"\n")
	if o := c.run("status", "--config", config); o.code != 0 || o.stdout != "no issues recorded\n" {
		t.Errorf("code %d, stdout %q; want 0 and no issues; stderr:\n%s", o.code, o.stdout, o.stderr)
	}
	o := c.run("status", "issue-9", "--config", config)
	if want := "malarun: issue issue-9 has no record in " + dir + "\n"; o.code != exitFailure || o.stderr != want {
		t.Errorf("code %d, stderr %q; want 1 and %q", o.code, o.stderr, want)
	}
	missing := filepath.Join(c.home, "missing.yaml")
	c.run("status", "--config", missing).wantUsage(t, "config file "+missing+" (from --config) does not exist")
	c.run("status", "--config", c.file("c.yaml", "colour: blue\n")).wantUsage(t, `unknown key "colour"`)
	if o := c.run("status", "--config", config, "--json"); o.code != 0 || strings.TrimSpace(o.stdout) != "[]" {
		t.Errorf("--json: code %d, stdout %q; want 0 and []", o.code, o.stdout)
	}
}

// docs/record.md lists every field of record.json (and so of `status --json`),
// the owner's included: a field added to the record is added there too.
func TestReadmeListsEveryRecordField(t *testing.T) {
	readme, err := os.ReadFile(repoPath("docs/record.md"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var walk func(reflect.Type)
	walk = func(typ reflect.Type) {
		for f := range typ.Fields() {
			if f.Anonymous && f.Tag.Get("json") == "" {
				walk(f.Type) // encoding/json writes its fields as the record's own
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			names = append(names, name)
			if f.Type.Kind() == reflect.Struct && f.Type.PkgPath() == typ.PkgPath() {
				walk(f.Type)
			}
		}
	}
	walk(reflect.TypeFor[statusEntry]())
	walk(reflect.TypeFor[record.Record]())
	for _, n := range names {
		if !strings.Contains(string(readme), "`"+n+"`") {
			t.Errorf("docs/record.md does not list the record field `%s`", n)
		}
	}
}

func TestStatusNamesThePromptAndItsLatestChange(t *testing.T) {
	old, given := strings.Repeat("a", 64), strings.Repeat("b", 64)
	r := record.Record{PromptSHA256: given, PromptChanges: []record.PromptChange{{
		At: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC), Decision: record.PromptStartOver,
		RunID: "20261123T120000Z-3f9a1c", RecordedSHA256: old, GivenSHA256: given}}}
	got := promptText(r)
	for _, want := range []string{"sha256 " + given[:12], "run 20261123T120000Z-3f9a1c began with sha256 " + old[:12], "start_over"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if got := promptText(record.Record{}); !strings.Contains(got, "unknown") {
		t.Errorf("a record without a hash: %q", got)
	}
}

// The MCP servers the last attempt started without are a line of the
// detail, cleaned; a record without any has none.
func TestStatusNamesMCPServersNotConnected(t *testing.T) {
	e := journal.Entry{Issue: "i", Record: record.Record{Issue: "i", Status: record.Succeeded,
		MCPNotConnected: []stream.MCPServer{{Name: "broken\x1b[2J", Status: "failed"}, {Name: "slow", Status: "pending"}}}}
	var b strings.Builder
	if err := printStatusDetail(&b, e); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "mcp servers not connected:") || !strings.Contains(b.String(), "(failed), slow (pending)") || strings.Contains(b.String(), "\x1b") {
		t.Errorf("detail:\n%q", b.String())
	}
	e.Record.MCPNotConnected = nil
	b.Reset()
	printStatusDetail(&b, e)
	if strings.Contains(b.String(), "mcp") {
		t.Errorf("a record without MCP trouble has the line:\n%s", b.String())
	}
}

// A run in its first attempt says it is running, which attempt and since
// when, not "attempts: 0" with an exit code it does not have yet (issue 34).
func TestStatusOfARunningRun(t *testing.T) {
	t.Parallel()
	p, open := gatedRun(t, "issue-running")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p.start(nil, w)
	w.Close()
	readUntil(r, `attempt started`)
	go io.Copy(io.Discard, r)
	st := exec.Command(os.Args[0], "status", "issue-running", "--state-dir", p.stateDir)
	st.Env = append(os.Environ(), envAsMalarun+"=1")
	out, err := st.Output()
	open()
	p.wait()
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	s := string(out)
	if !regexp.MustCompile(`(?m)^running: +attempt 1 since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`).MatchString(s) || strings.Contains(s, "exit code:") {
		t.Errorf("status of a run in its first attempt:\n%s", s)
	}
}

// Between attempts (a backoff, a reclaim before its first attempt) no
// claude runs, and status says so rather than name an attempt.
func TestRunningText(t *testing.T) {
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.Local)
	for _, tc := range []struct {
		rec    record.Record
		locked bool
		want   string
	}{
		{record.Record{Status: record.Processing, Attempts: 0, AttemptStartedAt: at}, true, "attempt 1 since 2026-11-26 10:00:00"},
		{record.Record{Status: record.Processing, Attempts: 2}, true, "between attempts (2 so far)"},
		{record.Record{Status: record.Processing, Attempts: 1, AttemptStartedAt: at}, false, "attempt 2 since 2026-11-26 10:00:00 (its malarun is gone)"},
		{record.Record{Status: record.Succeeded, Attempts: 1}, false, ""},
	} {
		if got := runningText(journal.Entry{Record: tc.rec, Locked: tc.locked}); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.rec, got, tc.want)
		}
	}
}

// status --json prints costs rounded (internal/usd), as the report does.
func TestStatusJSONRoundsCosts(t *testing.T) {
	sum := 0.0001 + 0.0005
	e := journal.Entry{Issue: "i", Record: record.Record{Issue: "i", Status: record.Succeeded, CostUSD: sum, TotalCostUSD: sum + sum}}
	var b strings.Builder
	if err := printStatusJSON(&b, []journal.Entry{e}, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"cost_usd": 0.0006,`) || !strings.Contains(b.String(), `"total_cost_usd": 0.0012,`) {
		t.Errorf("status --json:\n%s", b.String())
	}
}
