package e2e_test

import (
	"cmp"
	"encoding/json"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/testing/headless"
)

// summarizeSoak sums up the soak's state dir (issue 41) and checks the
// summary against the records themselves: a count per status, every
// issue listed; the rescues the faults call for; the Markdown fits the
// step summary; the HTML folder has a page per issue, and the summary in
// real Chromium links to every one of them, with no console error and no
// request beyond the folder.
func summarizeSoak(t *testing.T, stateDir string, fleet []*soakIssue) {
	t.Helper()
	entries, err := journal.List(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for _, e := range entries {
		want[e.Word()]++
	}
	summary := func(args ...string) []byte {
		t.Helper()
		started := time.Now()
		out, err := exec.Command(e2e.malarun, append([]string{"summary", "--state-dir", stateDir}, args...)...).Output()
		if err != nil {
			t.Fatalf("malarun summary %q: %v", args, err)
		}
		t.Logf("malarun summary %s of %d issues: %v, %d bytes", cmp.Or(strings.Join(args, " "), "--format text"), len(entries), time.Since(started).Round(time.Millisecond), len(out))
		return out
	}
	var s struct {
		Issues   int
		ByStatus []struct {
			Status string
			Count  int
		} `json:"by_status"`
		Rescues struct {
			Hangs, Crashes, Reclaims, Rescued int
			LimitWaits                        int `json:"limit_waits"`
		}
		Rows []struct{ Issue string } `json:"issues_list"`
	}
	if err := json.Unmarshal(summary("--format", "json"), &s); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, c := range s.ByStatus {
		got[c.Status] = c.Count
	}
	if s.Issues != len(fleet) || len(s.Rows) != len(fleet) || !maps.Equal(got, want) {
		t.Errorf("the summary counts %d issues (%d listed) by status %v; the records: %d, %v", s.Issues, len(s.Rows), got, len(entries), want)
	}
	faults := map[string]bool{}
	for _, is := range fleet {
		faults[is.fault] = true
	}
	r := s.Rescues
	for _, c := range []struct {
		fault string
		n     int
		what  string
	}{{"stall", r.Hangs, "hangs"}, {"usage-limit", r.LimitWaits, "usage-limit waits"}, {"malarun-kill", r.Reclaims, "reclaims"},
		{"cli-killed-midrun", r.Crashes, "crashes"}, {"stall", r.Rescued, "runs rescued"}} {
		if faults[c.fault] && c.n == 0 {
			t.Errorf("the fleet had %s issues, the summary counts no %s: %+v", c.fault, c.what, r)
		}
	}
	t.Logf("the summary:\n%s", summary())
	if md := summary("--format", "md"); len(md) > 1<<20 {
		t.Errorf("the Markdown is %d bytes: over the step summary's 1 MiB", len(md))
	}
	out := filepath.Join(t.TempDir(), "night")
	summary("--format", "html", "--out", out)
	for _, row := range s.Rows {
		if _, err := os.Stat(filepath.Join(out, "issues", row.Issue+".html")); err != nil {
			t.Errorf("no show page for %s: %v", row.Issue, err)
		}
	}
	openSummaryPage(t, filepath.Join(out, "index.html"), len(fleet))
}

// openSummaryPage opens the summary in Chromium: it links to a page per
// issue, each of which is there, and asks for nothing but itself.
func openSummaryPage(t *testing.T, index string, issues int) {
	t.Helper()
	ctx, p := headless.OpenFor(t, "file://"+index, 2*time.Minute)
	var links []string
	if err := p.Eval(ctx, `[...new Set([...document.querySelectorAll("a[href]")].map(a => new URL(a.getAttribute("href"), location.href).href))]`, &links); err != nil {
		t.Fatal(err)
	}
	if len(links) != issues {
		t.Errorf("the summary links %d pages, want one per issue (%d)", len(links), issues)
	}
	for _, l := range links {
		u, err := url.Parse(l)
		if err == nil {
			_, err = os.Stat(u.Path)
		}
		if err != nil || u.Scheme != "file" {
			t.Errorf("the link %s leads nowhere: %v", l, err)
		}
	}
	if errs := p.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
	if reqs := p.Requests(); !slices.Equal(reqs, []string{"file://" + index}) {
		t.Errorf("requests %q, want the page's own file only", reqs)
	}
}
