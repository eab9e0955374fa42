package fleet

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/ui"
)

// The summary's sentences, made once for every form: each is clean text
// (ui.Clean: nothing from a record can drive a terminal), which the
// Markdown and HTML forms escape again for their own syntax.

// timeText is a time as the summary shows it: UTC to the minute.
func timeText(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// header is the summary's first line.
func (s *Summary) header() string {
	h := fmt.Sprintf("malarun summary of %s: %s, made %s", ui.Clean(s.StateDir, 200), ui.Plural(s.Issues, "issue"), timeText(s.MadeAt))
	if !s.Since.IsZero() {
		h += ", runs updated since " + timeText(s.Since)
	}
	if s.NotRead > 0 {
		h += fmt.Sprintf("; %d more issue folders not read (a summary reads %d)", s.NotRead, maxIssues)
	}
	return h
}

// statusLine counts the issues by status: "succeeded 950 · failed 12".
func (s *Summary) statusLine() string {
	if len(s.ByStatus) == 0 {
		return "no issues recorded"
	}
	var parts []string
	for _, c := range s.ByStatus {
		parts = append(parts, fmt.Sprintf("%s %d", ui.Clean(c.Status, 0), c.Count))
	}
	return strings.Join(parts, " · ")
}

// rescueLine says what malarun did beyond starting claude.
func (s *Summary) rescueLine() string {
	r := s.Rescues
	var parts []string
	if r.Hangs > 0 {
		parts = append(parts, fmt.Sprintf("%s (%s)", ui.Plural(r.Hangs, "hang"), phasesText(r.HangsByPhase)))
	}
	for _, p := range []struct {
		n    int
		word string
	}{{r.Crashes, "crash"}, {r.LimitWaits, "usage-limit wait"}, {r.Reclaims, "reclaim"}, {r.Restarts, "context restart"}} {
		if p.n > 0 {
			parts = append(parts, ui.Plural(p.n, p.word))
		}
	}
	if len(parts) == 0 {
		parts = []string{"nothing to rescue"}
	}
	line := fmt.Sprintf("%s succeeded after malarun stepped in: %s", ui.Plural(r.Rescued, "run"), strings.Join(parts, ", "))
	var itself []string
	if r.Tasks > 0 {
		itself = append(itself, "ran "+ui.Plural(r.Tasks, "background task"))
	}
	if r.APIRetries > 0 {
		itself = append(itself, "retried "+ui.Plural(r.APIRetries, "API request"))
	}
	if r.NoResponses > 0 {
		itself = append(itself, fmt.Sprintf("asked again %s the API never answered (%s lost)", ui.Plural(r.NoResponses, "request"), lostText(r.NoResponseMS)))
	}
	if len(itself) > 0 {
		line += "; claude " + strings.Join(itself, " and ") + " itself"
	}
	return line
}

// phasesText is hangs by phase, most first: "text 12, tool 3".
func phasesText(by map[string]int) string {
	phases := make([]string, 0, len(by))
	for p := range by {
		phases = append(phases, p)
	}
	slices.SortFunc(phases, func(a, b string) int {
		if by[a] != by[b] {
			return by[b] - by[a]
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, p := range phases {
		parts = append(parts, fmt.Sprintf("%s %d", ui.Clean(p, wordMax), by[p]))
	}
	return "in " + strings.Join(parts, ", ")
}

// costLine is the cost, tokens and time of every run.
func (s *Summary) costLine() string {
	t := s.Totals
	return fmt.Sprintf("%s · tokens %s in, %s out, %s cache read, %s cache written · %s of runs", ui.Cost(t.CostUSD),
		ui.Tokens(t.Tokens.InputTokens), ui.Tokens(t.Tokens.OutputTokens), ui.Tokens(t.Tokens.CacheReadInputTokens), ui.Tokens(t.Tokens.CacheCreationInputTokens),
		ui.Duration(time.Duration(t.WallMS)*time.Millisecond))
}

// wallLine and costSpreadLine are the spread of the runs that ended.
func (s *Summary) wallLine() string {
	w := s.Totals.Wall
	if w.N == 0 {
		return "no run has ended"
	}
	d := func(ms float64) string { return ui.Duration(time.Duration(ms) * time.Millisecond) }
	return fmt.Sprintf("p50 %s · p90 %s · p99 %s · max %s (%s)", d(w.P50), d(w.P90), d(w.P99), d(w.Max), ui.Plural(w.N, "ended run"))
}

func (s *Summary) costSpreadLine() string {
	c := s.Totals.Cost
	if c.N == 0 {
		return "no run has ended"
	}
	return fmt.Sprintf("p50 %s · p90 %s · p99 %s · max %s", ui.Cost(c.P50), ui.Cost(c.P90), ui.Cost(c.P99), ui.Cost(c.Max))
}

// failureLine is what the runs that did not succeed cost, how long they
// took to fail, and the time hangs and requests never answered took from
// every run; beside the earlier summary's when there is one.
func (s *Summary) failureLine() string {
	f := s.Failures
	line := failuresText(f, true)
	if c := s.Changes; c != nil {
		line += "; the earlier summary: " + failuresText(c.PreviousFailures, false)
	}
	return line
}

func failuresText(f Failures, spread bool) string {
	var t string
	if f.Runs == 0 {
		t = "no run ended without success"
	} else {
		t = fmt.Sprintf("%s ended without success, costing %s", ui.Plural(f.Runs, "run"), ui.Cost(f.CostUSD))
		if d := f.ToFailure; spread && d.N > 0 {
			t += fmt.Sprintf(", time to failure p50 %s, p90 %s", msText(d.P50), msText(d.P90))
		}
	}
	if f.HangLostMS > 0 {
		t += ", hangs took " + lostText(f.HangLostMS)
	}
	return t + noResponseText(f)
}

// noResponseText is the time requests never answered took, said after the
// hangs' (both every run's; never added, as a hang after such a request
// counts the same silence): nothing when none was lost in runs that all
// counted them, and "unknown" where they were not counted, never 0.
func noResponseText(f Failures) string {
	const what = "requests never answered"
	switch n := f.NoResponseUncounted; {
	case f.NoResponseLostMS == nil:
		return ", the time " + what + " took unknown (that summary does not say it)"
	case n > 0 && *f.NoResponseLostMS > 0:
		return fmt.Sprintf(", %s took %s (unknown in %s an older malarun recorded)", what, lostText(*f.NoResponseLostMS), ui.Plural(n, "run"))
	case n > 0:
		return fmt.Sprintf(", the time %s took unknown (%s an older malarun recorded, which did not count them)", what, ui.Plural(n, "run"))
	case *f.NoResponseLostMS > 0:
		return fmt.Sprintf(", %s took %s", what, lostText(*f.NoResponseLostMS))
	}
	return ""
}

// lostText is a time lost, given in milliseconds by a summary or an
// earlier one (outside input: any int64), within what a Duration holds.
func lostText(ms int64) string {
	return ui.Duration(time.Duration(min(ms, int64(1<<63-1)/int64(time.Millisecond))) * time.Millisecond)
}

// msText is a duration given in milliseconds.
func msText(ms float64) string { return ui.Duration(time.Duration(ms) * time.Millisecond) }

// actTitle names a kind of thing to act on and how many: "Credentials
// (2 issues)".
func (a *ActOn) title() string {
	names := map[string]string{"credentials": "Credentials", "credit": "Usage credit", "configuration": "Configuration",
		"not_run": "Prompt files not run", "budget": "Budget", "poisoned": "Poisoned", "damaged": "Damaged records"}
	name, ok := names[a.Kind]
	if !ok {
		name = ui.Clean(a.Kind, wordMax)
	}
	what := "issue"
	if len(a.Issues) == 0 && len(a.Files) > 0 {
		what = "prompt file"
	}
	return fmt.Sprintf("%s (%s)", name, ui.Plural(a.Count, what))
}

// itemsText names a thing to act on's issues and files, at most max in
// all: issue ids as they are, prompt files (outside names) quoted and
// cleaned.
func (a *ActOn) itemsText(max int) string {
	issues, _ := capped(a.Issues, max)
	files, _ := capped(a.Files, max-len(issues))
	parts := slices.Clone(issues)
	for _, f := range files {
		parts = append(parts, fmt.Sprintf("%q", ui.Clean(f, 80)))
	}
	t := strings.Join(parts, ", ")
	if more := a.Count - len(parts); more > 0 {
		t += fmt.Sprintf(", and %d more", more)
	}
	return t
}

// sinceText is the earlier summary a comparison is with.
func (c *Changes) sinceText() string {
	return fmt.Sprintf("Since the summary made %s (%s)", timeText(c.PreviousMadeAt), ui.Plural(c.PreviousIssues, "issue"))
}

// changeText is a change: "fail-3 (retries_exhausted, exit 3; was
// succeeded)".
func (c *Change) text() string {
	var what []string
	if c.Outcome != "" {
		o := ui.Clean(c.Outcome, wordMax)
		if c.ExitCode != nil {
			o += fmt.Sprintf(", exit %d", *c.ExitCode)
		}
		what = append(what, o)
	}
	was := "new"
	if c.Was != "" {
		was = "was " + ui.Clean(c.Was, wordMax)
	}
	what = append(what, was)
	return fmt.Sprintf("%s (%s)", ui.Clean(c.Issue, 0), strings.Join(what, "; "))
}

// changesText names changes, at most max, and how many there are.
func changesText(cs []Change, count, max int) string {
	shown, _ := capped(cs, max)
	var parts []string
	for i := range shown {
		parts = append(parts, shown[i].text())
	}
	t := strings.Join(parts, ", ")
	if more := count - len(shown); more > 0 {
		t += fmt.Sprintf(", and %d more", more)
	}
	return t
}

// groupTitle is a group of runs that ended without success:
// "retries_exhausted, exit 3 (8 issues)".
func (g *Group) title() string {
	t := ui.Clean(g.Outcome, 60)
	if len(g.ExitCodes) > 0 {
		var codes []string
		for _, c := range g.ExitCodes {
			codes = append(codes, fmt.Sprint(c))
		}
		t += ", exit " + strings.Join(codes, "/")
	}
	return fmt.Sprintf("%s (%s)", t, ui.Plural(len(g.Issues)+g.IssuesNotListed, "issue"))
}

// waitingText is a waiting run: "until 2026-11-27 09:00 UTC (five_hour)".
func (r *Row) waitingText() string {
	t := "until " + timeText(r.RetryAt)
	if r.RetryAt.IsZero() {
		t = "no reset known"
	}
	if r.LimitType != "" {
		t += " (" + ui.Clean(r.LimitType, wordMax) + ")"
	}
	return t
}

// runningText is a running run: "attempt 2 since 07:58 UTC, while
// writing text, last wrote 3s ago", or that its malarun is gone.
func (r *Row) runningText(now time.Time) string {
	if r.Status == "orphaned" {
		return "its malarun is gone: the next malarun of the issue reclaims the run"
	}
	if r.Attempt == 0 {
		return "between attempts"
	}
	t := fmt.Sprintf("attempt %d since %s", r.Attempt, timeText(r.RunningSince))
	if r.Doing != "" {
		t += ", " + ui.Clean(r.Doing, doingMax)
	}
	if !r.LastLine.IsZero() {
		t += ", last wrote " + ui.Duration(now.Sub(r.LastLine).Truncate(time.Second)) + " ago"
	}
	return t
}

// rankText is a row of the slowest or costliest: its wall time, cost and status.
func (r *Row) rankText() string { return strings.Join(r.rankCells(), ", ") }

// rankCells are rankText's parts, for a table's cells.
func (r *Row) rankCells() []string {
	return []string{msText(float64(r.WallMS)), ui.Cost(r.CostUSD), ui.Clean(r.Status, wordMax)}
}

// listed names at most max issues, and how many more there are.
func listed(issues []string, max int) (shown []string, more int) { return capped(issues, max) }
