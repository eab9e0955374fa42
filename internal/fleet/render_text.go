package fleet

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/malarun/malarun/internal/ui"
)

// listMax is how many issues a group names in the text and Markdown forms
// (the JSON and HTML forms name them all).
const listMax = 30

// WriteText writes the summary for a terminal or a log: plain lines,
// every value from a record cleaned.
func WriteText(w io.Writer, s *Summary) error {
	b := bufio.NewWriter(w)
	line := func(format string, a ...any) { fmt.Fprintf(b, format+"\n", a...) }
	line("%s", s.header())
	line("")
	line("Status     %s", s.statusLine())
	line("Rescued    %s", s.rescueLine())
	line("Cost       %s", s.costLine())
	line("Wall time  %s", s.wallLine())
	line("Cost/run   %s", s.costSpreadLine())
	if len(s.Ended) > 0 {
		line("")
		line("Ended without success")
		for _, g := range s.Ended {
			line("  %s: %s", g.title(), ui.Clean(g.Reason, 160))
			line("    %s", issueList(g.Issues))
		}
	}
	if len(s.Waiting) > 0 {
		line("")
		line("Waiting for a usage limit")
		for _, r := range s.Waiting {
			line("  %-24s %s", r.Issue, r.waitingText())
		}
	}
	if len(s.Running) > 0 {
		line("")
		line("Running")
		for _, r := range s.Running {
			line("  %-24s %s", r.Issue, r.runningText(s.MadeAt))
		}
	}
	if len(s.Damaged) > 0 {
		line("")
		line("Damaged (not read; malarun status ISSUE says why, --reset starts it over)")
		for _, d := range s.Damaged {
			line("  %-24s %s", d.Issue, ui.Clean(d.Error, 160))
		}
	}
	if len(s.Skipped) > 0 {
		line("")
		line("Folders that are not issues: %s", cleanList(s.Skipped))
	}
	for _, rank := range []struct {
		title string
		rows  []Row
	}{{"Slowest", s.Slowest}, {"Most expensive", s.Costliest}} {
		if len(rank.rows) == 0 {
			continue
		}
		line("")
		line("%s", rank.title)
		for _, r := range rank.rows {
			line("  %-24s %s", r.Issue, r.rankText())
		}
	}
	return b.Flush()
}

// issueList names a group's issues, at most listMax.
func issueList(issues []string) string {
	shown, more := listed(issues, listMax)
	t := strings.Join(shown, ", ")
	if more > 0 {
		t += fmt.Sprintf(", and %d more (--format json names them all)", more)
	}
	return t
}

// cleanList names outside strings (folder names) cleaned, at most listMax.
func cleanList(names []string) string {
	shown, more := listed(names, listMax)
	var parts []string
	for _, n := range shown {
		parts = append(parts, fmt.Sprintf("%q", ui.Clean(n, 60)))
	}
	t := strings.Join(parts, ", ")
	if more > 0 {
		t += fmt.Sprintf(", and %d more", more)
	}
	return t
}
