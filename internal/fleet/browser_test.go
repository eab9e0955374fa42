package fleet

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/testing/headless"
)

// The summary page in a real browser (Debian's chromium): it renders with
// no console error (a blocked planted script or style would be one) and
// no request but its own file; the hostile reason's <script> does nothing;
// the status legend says the counts; every issue but the damaged one
// links to its page, and a click on one opens it.
func TestHTMLInABrowser(t *testing.T) {
	dir := t.TempDir()
	s := scanNight(t, nightStateDir(t))
	if err := os.MkdirAll(filepath.Join(dir, "issues"), 0o700); err != nil {
		t.Fatal(err)
	}
	link := func(issue string) string {
		if issue == "bad-1" {
			return ""
		}
		return "issues/" + issue + ".html"
	}
	for _, r := range s.Rows {
		if href := link(r.Issue); href != "" {
			page := "<!doctype html><title>" + r.Issue + "</title><h1>" + r.Issue + "</h1>"
			if err := os.WriteFile(filepath.Join(dir, href), []byte(page), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	var out bytes.Buffer
	if err := WriteHTML(&out, &s, link); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, "index.html")
	if err := os.WriteFile(index, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, p := headless.OpenFor(t, "file://"+index, time.Minute)
	var facts struct {
		Pwned   string
		Legend  string
		Charts  int
		Links   []string
		Unlinks []string
		Styled  string
	}
	if err := p.Eval(ctx, `({pwned: typeof window.pwned,
		legend: document.querySelector("p.legend").innerText.replace(/\s+/g, " "),
		charts: document.querySelectorAll("svg").length,
		links: [...new Set([...document.querySelectorAll("a[href]")].map(a => a.getAttribute("href")))].sort(),
		unlinks: [...document.querySelectorAll("table td:first-child")].filter(td => !td.querySelector("a")).map(td => td.innerText),
		styled: getComputedStyle(document.querySelector("td.s-succeeded")).color})`, &facts); err != nil {
		t.Fatal(err)
	}
	if facts.Pwned != "undefined" {
		t.Errorf("the hostile reason's script ran: window.pwned is %s", facts.Pwned)
	}
	for _, want := range []string{"succeeded 3", "failed 2", "stopped 2", "damaged 1", "waiting 1", "processing 1", "orphaned 1"} {
		if !strings.Contains(facts.Legend, want) {
			t.Errorf("the legend %q does not say %q", facts.Legend, want)
		}
	}
	if facts.Charts != 3 {
		t.Errorf("%d charts, want 3 (statuses, durations, the time line)", facts.Charts)
	}
	var want []string
	for _, r := range s.Rows {
		if r.Issue != "bad-1" {
			want = append(want, "issues/"+r.Issue+".html")
		}
	}
	if !slices.Equal(facts.Links, want) {
		t.Errorf("links %q, want a page per issue but the damaged one: %q", facts.Links, want)
	}
	if !slices.Contains(facts.Unlinks, "bad-1") {
		t.Errorf("the damaged issue is linked (cells without a link: %q)", facts.Unlinks)
	}
	if facts.Styled == "" || facts.Styled == "rgb(0, 0, 0)" {
		t.Errorf("a succeeded status is %q: the page's style did not apply (its hash in the policy?)", facts.Styled)
	}
	if errs := p.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
	if reqs := p.Requests(); !slices.Equal(reqs, []string{"file://" + index}) {
		t.Errorf("requests %q, want the page's own file only", reqs)
	}
	href, err := p.Follow(ctx, `a[href="issues/ok-3.html"]`)
	if err != nil {
		t.Fatal(err)
	}
	if want := "file://" + filepath.Join(dir, "issues", "ok-3.html"); href != want {
		t.Errorf("the link of ok-3 opened %s, want %s", href, want)
	}
}
