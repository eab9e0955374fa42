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

	"github.com/malarun/malarun/internal/testing/testchild"
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

// TestTwoNightsOfRealRuns: a fleet of real malaruns (the fake claude) run
// twice with different faults, a and b trading a hang for a success, c
// meeting a request never answered (the CLI 2.1.332's recorded api_retry,
// 12 s waited) and a prompt file the recipe could not run the second
// night; the second night's summary, compared with the first's JSON form,
// says in each form what newly failed, what passes again, what to act on,
// and the failures' cost and time, the time requests never answered took
// beside the hangs'; compared with a first night that did not say that
// time, it says it is unknown. (The same in fixed goldens: internal/fleet's
// TestTwoNightsApart.)
func TestTwoNightsOfRealRuns(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	night := func(runs map[string]scenario) {
		t.Helper()
		for issue, s := range runs {
			p := s.proc(t, issue, "--state-dir", state)
			p.run()
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
	night(map[string]scenario{"a": scenarioSuccess(t), "b": scenarioFailure(t), "c": scenarioSuccess(t)})
	first := filepath.Join(t.TempDir(), "first.json")
	if err := os.WriteFile(first, []byte(summary("--format", "json")), 0o600); err != nil {
		t.Fatal(err)
	}
	noResponse := scenario{testchild.Replay, []string{testchild.EnvTranscript + "=TRANSCRIPTS/2.1.332/no-response.jsonl"}, nil}
	night(map[string]scenario{"a": scenarioFailure(t), "b": scenarioSuccess(t), "c": noResponse})
	note := newProc(t, "unused", "", nil).cmd
	note.Args = []string{os.Args[0], "not-run", "--prompt", "prompts/bad name.md", "--why", "not an issue id", "--state-dir", state}
	if out, err := note.CombinedOutput(); err != nil {
		t.Fatalf("not-run: %v\n%s", err, out)
	}
	var s struct {
		ActOn []struct{ Kind string } `json:"act_on"`
		Since struct {
			NewlyFailed []struct{ Issue, Was string } `json:"newly_failed"`
			PassesAgain []struct{ Issue, Was string } `json:"passes_again"`
			Previous    struct{ Runs int }            `json:"previous_failures"`
		} `json:"since_summary"`
		Failures struct {
			Runs             int
			HangLostMS       int64  `json:"hang_lost_ms"`
			NoResponseLostMS *int64 `json:"no_response_lost_ms"`
		}
	}
	if err := json.Unmarshal([]byte(summary("--format", "json", "--since-summary", first)), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Since.NewlyFailed) != 1 || s.Since.NewlyFailed[0] != (struct{ Issue, Was string }{"a", "succeeded"}) ||
		len(s.Since.PassesAgain) != 1 || s.Since.PassesAgain[0] != (struct{ Issue, Was string }{"b", "stopped"}) || s.Since.Previous.Runs != 1 {
		t.Errorf("since the first night: %+v", s.Since)
	}
	if len(s.ActOn) != 1 || s.ActOn[0].Kind != "not_run" || s.Failures.Runs != 1 || s.Failures.HangLostMS < 1000 {
		t.Errorf("act on %+v, failures %+v: want the prompt not run, and a's hang (its 1 s limit at least)", s.ActOn, s.Failures)
	}
	if n := s.Failures.NoResponseLostMS; n == nil || *n < 12000 {
		t.Errorf("the time requests never answered took: %v, want c's (claude waited 12 s) at least", n)
	}
	out := filepath.Join(t.TempDir(), "night")
	summary("--format", "html", "--out", out, "--since-summary", first)
	index, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for form, text := range map[string]string{"text": summary("--since-summary", first), "md": summary("--format", "md", "--since-summary", first),
		"html": string(index)} {
		for _, want := range []string{"Act on these first", "bad name.md", "Newly failed", "was succeeded", "Passes again", "was stopped",
			"1 run ended without success", "the earlier summary: 1 run ended without success"} {
			if !strings.Contains(text, want) {
				t.Errorf("the %s form lacks %q:\n%s", form, want, text)
			}
		}
		// 12 s waited, and the moment to the answer's line.
		if !regexp.MustCompile(`hangs took \d+s, requests never answered took 1\ds; the earlier summary`).MatchString(text) {
			t.Errorf("the %s form does not give the time requests never answered took beside the hangs':\n%s", form, text)
		}
	}
	// A first night's summary made before the time was counted: unknown.
	var doc map[string]any
	data, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc["failures"].(map[string]any), "no_response_lost_ms")
	delete(doc["rescues"].(map[string]any), "no_response_ms")
	older := filepath.Join(t.TempDir(), "older.json")
	if data, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(older, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if text := summary("--since-summary", older); !strings.Contains(text, "the time requests never answered took unknown (that summary does not say it)") {
		t.Errorf("compared with a summary that does not say the time requests never answered took:\n%s", text)
	}
}
