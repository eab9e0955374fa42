package fleet

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/testing/headless"
	"github.com/malarun/malarun/internal/timeline"
)

// pageFacts is what a real browser measures of a summary page: every
// label of every chart, where it is drawn and whether it fits.
type pageFacts struct {
	Charts []struct {
		Label   string
		Texts   int
		Clipped []string // labels that cross the chart's edge
		Overlap []string // pairs of labels drawn over each other
		Ticks   []string
		Rows    []string
	}
	Buckets  []string
	Overflow int // how far the page is wider than the window
}

// measure asks the browser, for each chart of the page, which labels are
// clipped by its edges or overlap another, and the tick, row and bucket
// labels; and whether the page is wider than the window.
func measure(t *testing.T, index string, shot string) pageFacts {
	t.Helper()
	ctx, p := headless.OpenFor(t, "file://"+index, 2*time.Minute)
	headless.SaveScreenshot(ctx, t, p, 1200, 0, shot)
	headless.SaveScreenshot(ctx, t, p, 1200, 1500, shot+"-top")
	var f pageFacts
	if err := p.Eval(ctx, `(() => {
		const charts = [...document.querySelectorAll("svg")].map(svg => {
			const vb = svg.viewBox.baseVal;
			const texts = [...svg.querySelectorAll("text")];
			const boxes = texts.map(el => ({el, b: el.getBBox()}));
			const clipped = boxes.filter(({b}) => b.x < vb.x - 0.5 || b.y < vb.y - 0.5 ||
				b.x + b.width > vb.x + vb.width + 0.5 || b.y + b.height > vb.y + vb.height + 0.5).map(({el}) => el.textContent);
			const overlap = [];
			for (let i = 0; i < boxes.length; i++) for (let k = i + 1; k < boxes.length; k++) {
				const a = boxes[i].b, c = boxes[k].b;
				if (a.x < c.x + c.width - 0.5 && c.x < a.x + a.width - 0.5 && a.y < c.y + c.height - 0.5 && c.y < a.y + a.height - 0.5)
					overlap.push(boxes[i].el.textContent + " / " + boxes[k].el.textContent);
			}
			return {label: svg.getAttribute("aria-label"), texts: texts.length, clipped, overlap,
				ticks: texts.filter(el => el.classList.contains("tick")).map(el => el.textContent),
				rows: texts.filter(el => el.classList.contains("row")).map(el => el.textContent)};
		});
		const buckets = [...document.querySelectorAll('svg[aria-label^="wall time"] rect.bar title')].map(el => el.textContent);
		return {charts, buckets, overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth};
	})()`, &f); err != nil {
		t.Fatal(err)
	}
	if errs := p.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
	return f
}

// checkLegible fails on a clipped or overlapping label, a page wider than
// its window, or ticks that repeat.
func checkLegible(t *testing.T, f pageFacts) {
	t.Helper()
	if f.Overflow > 0 {
		t.Errorf("the page is %d px wider than the window", f.Overflow)
	}
	for _, c := range f.Charts {
		if len(c.Clipped) > 0 {
			t.Errorf("%s: labels cut by the chart's edge: %q", c.Label, c.Clipped)
		}
		if len(c.Overlap) > 0 {
			t.Errorf("%s: labels drawn over each other: %q", c.Label, c.Overlap)
		}
		seen := map[string]bool{}
		for _, tk := range c.Ticks {
			if seen[tk] {
				t.Errorf("%s: the tick %q twice: %q", c.Label, tk, c.Ticks)
			}
			seen[tk] = true
		}
	}
}

// chart is the chart of f whose label begins with prefix.
func (f pageFacts) chart(t *testing.T, prefix string) (int, []string, []string) {
	t.Helper()
	for _, c := range f.Charts {
		if strings.HasPrefix(c.Label, prefix) {
			return c.Texts, c.Ticks, c.Rows
		}
	}
	t.Fatalf("no chart %q among %d", prefix, len(f.Charts))
	return 0, nil, nil
}

// writeIndex writes s's index (and its list pages) into a fresh folder,
// with no per-issue pages, and returns the index's path.
func writeIndex(t *testing.T, s *Summary) string {
	t.Helper()
	dir := t.TempDir()
	link := func(issue string) string { return "issues/" + issue + ".html" }
	var out bytes.Buffer
	if err := WriteHTML(&out, s, link); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, "index.html")
	if err := os.WriteFile(index, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return index
}

// sixIssueFleet is `make demo-fleet`'s night: six issues, three at a time,
// each a few seconds long, one hang rescued, one out of retries.
func sixIssueFleet(t *testing.T) string {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 27, 6, 58, 3, 0, time.UTC)
	for i := range 6 {
		start := t0.Add(time.Duration(i/3)*14*time.Second + time.Duration(i%3)*700*time.Millisecond)
		took := time.Duration(6+3*i) * time.Second
		is := issueSpec{id: fmt.Sprintf("issue-%d", i+1), status: record.Succeeded, cost: 0.0006 * float64(i+1), started: start, attempts: 1}
		end := finishedLine(start.Add(took), "success", 0, is.cost, stream.Tokens{InputTokens: 900, OutputTokens: 40})
		is.timeline = []timeline.Entry{ev("run_started", start), ev("attempt_started", start)}
		switch i {
		case 2:
			is.attempts = 2
			is.timeline = append(is.timeline,
				ev("hang_detected", start.Add(10*time.Second), func(e *timeline.Entry) { e.Phase, e.LimitMS = "text", 8000 }),
				ev("attempt_started", start.Add(11*time.Second)))
		case 4:
			is.status, is.reason, is.exit, is.attempts = record.Stopped, "no output for 8s (3 attempts)", 3, 3
			end = finishedLine(start.Add(took), "retries_exhausted", 3, is.cost, stream.Tokens{InputTokens: 300})
		}
		is.timeline = append(is.timeline, end)
		writeIssue(t, dir, is)
	}
	return dir
}

// The summary page of a six-issue fleet of seconds: ticks in seconds, each
// different; a row per issue, its id beside it; buckets of seconds, not
// "< 1m"; no label cut or drawn over another.
func TestSixIssueFleetPageReads(t *testing.T) {
	sc, err := Scan(sixIssueFleet(t), Options{ValidID: validID, Now: nightNow})
	if err != nil {
		t.Fatal(err)
	}
	s := Summarize("demo", sc, time.Time{}, nightNow)
	f := measure(t, writeIndex(t, &s), "six-issues")
	checkLegible(t, f)
	_, ticks, rows := f.chart(t, "the runs on a time line")
	if len(ticks) < 3 || !slices.ContainsFunc(ticks, func(tk string) bool { return strings.Count(tk, ":") == 2 }) {
		t.Errorf("ticks %q: want at least 3, to the second", ticks)
	}
	if want := []string{"issue-1", "issue-2", "issue-3", "issue-4", "issue-5", "issue-6"}; !slices.Equal(rows, want) {
		t.Errorf("row labels %q, want %q", rows, want)
	}
	if len(f.Buckets) < 3 || strings.Contains(strings.Join(f.Buckets, " "), "1m") {
		t.Errorf("buckets %q: want seconds, spread over several", f.Buckets)
	}
}

// The summary page of a 1,000-issue night: the time line as runs in
// flight (a row each would not read), its ticks distinct; no label cut or
// drawn over another; every issue listed and linked.
func TestThousandIssuePageReads(t *testing.T) {
	if testing.Short() {
		t.Skip("!!! SKIPPING TestThousandIssuePageReads under -short (make check): 1,000 issues' pages in Chromium, 10 s; make test runs it !!!")
	}
	dir := t.TempDir()
	for i := range 1000 {
		is := nightIssues()[i%6]
		is.id = fmt.Sprintf("issue-%04d", i)
		shift := time.Duration(i%250) * 25 * time.Second
		is.started = is.started.Add(shift)
		for k := range is.timeline {
			is.timeline[k].Time = is.timeline[k].Time.Add(shift)
		}
		is.transcript = nil
		writeIssue(t, dir, is)
	}
	sc, err := Scan(dir, Options{ValidID: validID, Now: nightNow})
	if err != nil {
		t.Fatal(err)
	}
	s := Summarize("soak", sc, time.Time{}, nightNow)
	index := writeIndex(t, &s)
	f := measure(t, index, "thousand-issues")
	checkLegible(t, f)
	if _, ticks, _ := f.chart(t, "runs in flight"); len(ticks) < 3 {
		t.Errorf("ticks %q: want at least 3", ticks)
	}
	page, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	for _, is := range []string{"issue-0000", "issue-0999"} {
		if !bytes.Contains(page, []byte(`<a href="issues/`+is+`.html">`+is+`</a>`)) {
			t.Errorf("the index does not link %s", is)
		}
	}
}

// The second of two nights, compared with the first: what to act on and
// what changed come first, and read as the rest does.
func TestNightOverNightPageReads(t *testing.T) {
	_, s := twoNights(t)
	f := measure(t, writeIndex(t, &s), "night-over-night")
	checkLegible(t, f)
	if _, _, rows := f.chart(t, "the runs on a time line"); len(rows) != 6 {
		t.Errorf("row labels %q, want the 6 issues", rows)
	}
}
