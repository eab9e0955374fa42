package fleet

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/notrun"
)

// The documented bounds of each form (docs/many-issues.md, "Bounds").
const (
	textBound = 1 << 20
	mdBound   = 1 << 20 // a GitHub step summary
	jsonBound = 64 << 20
	htmlBound = 16 << 20 // the index, and each list page
)

// worst is s with every list at its bound or past it and every string at
// its cut, made of the characters each form escapes longest (a quote and
// a backslash in JSON, an ampersand and a quote in HTML), issue ids at
// their longest: no state directory can make a summary longer. The
// strings are the same ones many times over: the test measures output.
// statuses holds the first n issues only (the test adds the others'
// lines, each as long as the first's: encoding 100,000 under -race took
// seconds).
func worst(n int) Summary {
	hostile := func(n int) string { return strings.Repeat(`&"\<`, n/4+1)[:n] }
	reason, word, doing, name := hostile(reasonMax), hostile(wordMax), hostile(doingMax), hostile(nameMax)
	id := func(i int) string { return fmt.Sprintf("%s-%06d", strings.Repeat("x", 120), i) } // 127 bytes, an issue id's most is 128
	code := 3
	t := time.Date(2026, 11, 27, 7, 0, 0, 0, time.UTC)
	row := func(i int) Row {
		return Row{Issue: id(i), Status: "interrupted", Outcome: word, ExitCode: &code, Reason: reason, Started: t, Ended: t,
			WallMS: 1 << 50, CostUSD: 123456.123456, Attempts: 1 << 30, Hangs: 1 << 30, RetryAt: t, LimitType: word,
			Attempt: 1 << 30, RunningSince: t, Phase: word, Doing: doing, LastLine: t}
	}
	s := Summary{Version: version, StateDir: hostile(4096), MadeAt: t, Since: t, Issues: maxIssues, NotRead: 1 << 40,
		Statuses: map[string]string{}, Rescues: RescueTotals{HangsByPhase: map[string]int{}}}
	for i := range maxIssues {
		s.Rows = append(s.Rows, row(i))
		if i < n {
			s.Statuses[id(i)] = "interrupted"
		}
	}
	for i := range phasesMax {
		s.Rescues.HangsByPhase[fmt.Sprintf("%s%02d", word[:wordMax-2], i)] = 1 << 40
	}
	var issues []string
	for i := range jsonGroupIssues + 1 {
		issues = append(issues, id(i))
	}
	for range jsonGroups + 1 {
		s.Ended = append(s.Ended, Group{Outcome: word, ExitCodes: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, Reason: reason, Issues: issues, CostUSD: 1e12})
	}
	for i := range jsonRows + 1 {
		s.Waiting = append(s.Waiting, row(i))
		s.Running = append(s.Running, row(i))
		s.Damaged = append(s.Damaged, Damaged{Issue: id(i), Error: reason})
	}
	for range jsonRows {
		s.Skipped = append(s.Skipped, name)
		s.Linked = append(s.Linked, name)
	}
	for range notrun.MaxNotes {
		s.NotRun = append(s.NotRun, NotRun{File: name, Issue: id(0), Reason: reason, ExitCode: &code, At: t})
	}
	for _, k := range actKinds() {
		a := ActOn{Kind: k.kind, What: k.what, Count: 1 << 40, Reason: reason}
		for i := range jsonRows {
			if k.kind == "not_run" || k.kind == "configuration" {
				a.Files = append(a.Files, name)
			} else {
				a.Issues = append(a.Issues, id(i))
			}
		}
		s.ActOn = append(s.ActOn, a)
	}
	c := &Changes{PreviousMadeAt: t, PreviousIssues: maxIssues, NewlyFailedCount: maxIssues, PassesAgainCount: maxIssues}
	for i := range jsonRows {
		r := row(i)
		ch := Change{Issue: r.Issue, Was: "interrupted", Status: r.Status, Outcome: word, ExitCode: &code, Reason: reason, WallMS: r.WallMS, CostUSD: r.CostUSD}
		c.NewlyFailed, c.PassesAgain = append(c.NewlyFailed, ch), append(c.PassesAgain, ch)
	}
	// The longest failures line: every time the most a summary adds up to
	// (or an earlier one could say), and runs of an older malarun.
	long := float64(1 << 50)
	s.Failures = Failures{Runs: maxIssues, CostUSD: 1e12, ToFailure: Spread{N: maxIssues, P50: long, P90: long, P99: long, Max: long},
		HangLostMS: 1<<63 - 1, NoResponseLostMS: ptr(int64(1<<63 - 1)), NoResponseUncounted: maxIssues}
	c.PreviousFailures = s.Failures
	s.Changes = c
	s.Slowest, s.Costliest = s.Rows[:10], s.Rows[:10]
	s.Page = Page{Number: 1, Pages: maxIssues / pageRows, Size: pageRows, Rows: maxIssues}
	return s
}

// countingWriter counts what is written to it.
type countingWriter struct{ n int }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += len(p); return len(p), nil }

// TestWorstCaseFitsItsBound: the longest summary any state directory can
// make fits each form's bound. It holds the bounds (bounds.go) to the
// documented sizes: a bound raised past them fails here.
func TestWorstCaseFitsItsBound(t *testing.T) {
	if testing.Short() {
		t.Skip("!!! SKIPPING TestWorstCaseFitsItsBound under -short (make check): 16 s of the largest summary under -race; make test runs it !!!")
	}
	s := worst(1)
	link := func(issue string) string { return "issues/" + issue + ".html" }
	// One more status, one more line of the same length: the JSON form's
	// size with all of them is its size with one and the others' lines,
	// measured on a summary of one and of two.
	var one, two countingWriter
	small := func(n int) *Summary {
		w := Summary{Statuses: map[string]string{}, Page: Page{Pages: 1}}
		for i := range n {
			w.Statuses[fmt.Sprintf("%s-%06d", strings.Repeat("x", 120), i)] = "interrupted"
		}
		return &w
	}
	if err := WriteJSON(&one, small(1), 1); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&two, small(2), 1); err != nil {
		t.Fatal(err)
	}
	statusLine := two.n - one.n
	if statusLine < 127+len(`"": "interrupted",`) {
		t.Fatalf("a status's line is %d bytes: the measure is wrong", statusLine)
	}
	for _, form := range []struct {
		name  string
		bound int
		write func(io.Writer) error
	}{
		{"text", textBound, func(w io.Writer) error { return WriteText(w, &s) }},
		{"md", mdBound, func(w io.Writer) error { return WriteMarkdown(w, &s) }},
		{"json", jsonBound, func(w io.Writer) error {
			if err := WriteJSON(w, &s, 1); err != nil {
				return err
			}
			w.(*countingWriter).n += (maxIssues - 1) * statusLine
			return nil
		}},
		{"html index", htmlBound, func(w io.Writer) error { return WriteHTML(w, &s, link) }},
		{"html list page", htmlBound, func(w io.Writer) error { return WriteHTMLList(w, &s, 2, link) }},
	} {
		var c countingWriter
		if err := form.write(&c); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %.1f MiB of at most %.0f (%.0f %%)", form.name, float64(c.n)/(1<<20), float64(form.bound)/(1<<20), 100*float64(c.n)/float64(form.bound))
		if c.n > form.bound {
			t.Errorf("%s: %d bytes, over its bound of %d", form.name, c.n, form.bound)
		}
	}
}
