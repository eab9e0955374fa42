package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSummaryOfRealRuns: three real malaruns (the fake claude) leave a
// state dir (a success, a hang rescued by a resume, a hang with no retry
// left); the summary of it says so in each form, and --format html writes
// each issue's show page beside the summary, which links to them.
func TestSummaryOfRealRuns(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	for _, r := range []struct {
		issue string
		s     scenario
		code  int
	}{{"ok-1", scenarioSuccess(t), 0}, {"rescued-1", scenarioHangResumed(t), 0}, {"hung-1", scenarioFailure(t), 3}} {
		p := r.s.proc(t, r.issue, "--state-dir", state)
		if code := p.run(); code != r.code {
			t.Fatalf("%s: exit %d, want %d\n%s", r.issue, code, r.code, p.stderr.String())
		}
	}
	summary := func(args ...string) string {
		t.Helper()
		cmd := newProc(t, "unused", "", nil).cmd
		cmd.Args = append([]string{os.Args[0], "summary", "--state-dir", state}, args...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("summary %q: %v\n%s", args, err, out)
		}
		return string(out)
	}
	var s struct {
		ByStatus []struct {
			Status string
			Count  int
		} `json:"by_status"`
		Ended []struct {
			Outcome   string
			ExitCodes []int `json:"exit_codes"`
			Issues    []string
		} `json:"ended_unsuccessfully"`
		Rescues struct {
			Hangs        int
			HangsByPhase map[string]int `json:"hangs_by_phase"`
			Rescued      int
		}
		Rows []struct{ Issue string } `json:"issues_list"`
	}
	if err := json.Unmarshal([]byte(summary("--format", "json")), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.ByStatus) != 2 || s.ByStatus[0].Status != "succeeded" || s.ByStatus[0].Count != 2 || s.ByStatus[1].Status != "stopped" || s.ByStatus[1].Count != 1 {
		t.Errorf("by status %+v, want succeeded 2, stopped 1", s.ByStatus)
	}
	if len(s.Ended) != 1 || s.Ended[0].Outcome != "retries_exhausted" || !slices.Equal(s.Ended[0].ExitCodes, []int{3}) || !slices.Equal(s.Ended[0].Issues, []string{"hung-1"}) {
		t.Errorf("ended %+v, want hung-1 retries_exhausted exit 3", s.Ended)
	}
	if s.Rescues.Hangs != 2 || s.Rescues.HangsByPhase["tool"] != 1 || s.Rescues.Rescued != 1 {
		t.Errorf("rescues %+v, want 2 hangs (one in a tool: rescued-1's), 1 run rescued", s.Rescues)
	}
	text := summary()
	for _, want := range []string{"3 issues", "succeeded 2 · stopped 1", "1 run succeeded after malarun stepped in: 2 hangs", "retries_exhausted, exit 3 (1 issue)", "    hung-1"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text form does not say %q:\n%s", want, text)
		}
	}
	if md := summary("--format", "md", "--since", "1h"); !strings.Contains(md, "- **Status**: succeeded 2 · stopped 1\n") {
		t.Errorf("the Markdown form:\n%s", md)
	}
	if old := summary("--since", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)); !strings.Contains(old, "0 issues") {
		t.Errorf("since an hour from now, the summary is not empty:\n%s", old)
	}
	out := filepath.Join(t.TempDir(), "night")
	if got := strings.TrimSpace(summary("--format", "html", "--out", out)); got != filepath.Join(out, "index.html") {
		t.Errorf("--format html printed %q, want the page's path", got)
	}
	index, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, issue := range []string{"ok-1", "rescued-1", "hung-1"} {
		page, err := os.ReadFile(filepath.Join(out, "issues", issue+".html"))
		if err != nil || !strings.Contains(string(page), "<html") {
			t.Errorf("%s's show page: %v", issue, err)
		}
		if !strings.Contains(string(index), `href="issues/`+issue+`.html"`) {
			t.Errorf("the summary does not link %s's page", issue)
		}
	}
	if st, err := os.Stat(filepath.Join(out, "index.html")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("index.html: %v, mode %v; want 0600 as malarun's state", err, st.Mode())
	}
}

func TestSummaryMistakes(t *testing.T) {
	c := newCLI(t)
	c.env["MALARUN_STATE_DIR"] = t.TempDir()
	c.run("summary", "issue-1").wantUsage(t, `unknown command "issue-1"`)
	c.run("summary", "--format", "pdf").wantUsage(t, `--format "pdf": one of text, md, json, html`)
	c.run("summary", "--format", "html").wantUsage(t, "--format html writes a folder")
	c.run("summary", "--out", "x").wantUsage(t, "--out is for --format html")
	c.run("summary", "--since", "yesterday").wantUsage(t, `--since "yesterday": give a duration back from now`)
	c.run("summary", "--since", "-5h").wantUsage(t, `--since "-5h": a duration back from now must be positive`)
	if o := c.run("summary"); o.code != 0 || !regexp.MustCompile(`: 0 issues, made `).MatchString(o.stdout) || o.stderr != "" {
		t.Errorf("an empty state dir: exit %d\n%s%s", o.code, o.stdout, o.stderr)
	}
	missing := filepath.Join(t.TempDir(), "typo")
	if o := c.run("summary", "--state-dir", missing); o.code != 0 || !strings.Contains(o.stderr, "state_dir "+missing+" does not exist") {
		t.Errorf("a state dir that does not exist: exit %d, stderr %q", o.code, o.stderr)
	}
}
