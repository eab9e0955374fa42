package fleet

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/malarun/malarun/internal/ui"
)

// WriteText writes the summary for a terminal or a log: plain lines,
// every value from a record cleaned; each list at most listMax, with a
// count of the rest (--format json names more).
func WriteText(w io.Writer, s *Summary) error {
	b := bufio.NewWriter(w)
	line := func(format string, a ...any) { fmt.Fprintf(b, format+"\n", a...) }
	line("%s", s.header())
	if len(s.ActOn) > 0 {
		line("")
		line("Act on these first")
		for i := range s.ActOn {
			a := &s.ActOn[i]
			line("  %s: %s", a.title(), a.What)
			line("    %s", a.itemsText(listMax))
			if a.Reason != "" {
				line("    the first says: %s", ui.Clean(a.Reason, 160))
			}
		}
	}
	if c := s.Changes; c != nil {
		line("")
		line("%s", c.sinceText())
		line("  Newly failed   %d: %s", c.NewlyFailedCount, changesText(c.NewlyFailed, c.NewlyFailedCount, listMax))
		line("  Passes again   %d: %s", c.PassesAgainCount, changesText(c.PassesAgain, c.PassesAgainCount, listMax))
		line("  Still failing  %d", c.StillFailing)
	}
	line("")
	line("Status     %s", s.statusLine())
	line("Rescued    %s", s.rescueLine())
	line("Failures   %s", s.failureLine())
	line("Cost       %s", s.costLine())
	line("Wall time  %s", s.wallLine())
	line("Cost/run   %s", s.costSpreadLine())
	if len(s.Ended) > 0 {
		line("")
		line("Ended without success")
		shown, more := capped(s.Ended, listMax)
		for _, g := range shown {
			line("  %s: %s", g.title(), ui.Clean(g.Reason, 160))
			line("    %s", issueList(g.Issues, g.IssuesNotListed))
		}
		if more += s.Omitted.Groups; more > 0 {
			line("  and %d more groups (--format json names more)", more)
		}
	}
	table := func(title string, rows []Row, omitted int, text func(*Row) string) {
		if len(rows) == 0 {
			return
		}
		line("")
		line("%s", title)
		shown, more := capped(rows, listMax)
		for i := range shown {
			line("  %-24s %s", shown[i].Issue, text(&shown[i]))
		}
		if more += omitted; more > 0 {
			line("  and %d more", more)
		}
	}
	table("Waiting for a usage limit", s.Waiting, s.Omitted.Waiting, (*Row).waitingText)
	table("Running", s.Running, s.Omitted.Running, func(r *Row) string { return r.runningText(s.MadeAt) })
	if len(s.Damaged) > 0 {
		line("")
		line("Damaged (not read; malarun status ISSUE says why, --reset starts it over)")
		shown, more := capped(s.Damaged, listMax)
		for _, d := range shown {
			line("  %-24s %s", d.Issue, ui.Clean(d.Error, 160))
		}
		if more += s.Omitted.Damaged; more > 0 {
			line("  and %d more", more)
		}
	}
	if len(s.Skipped) > 0 {
		line("")
		line("Folders that are not issues: %s", cleanList(s.Skipped, s.Omitted.Skipped))
	}
	if len(s.Linked) > 0 {
		line("")
		line("Links not followed (an issue's folder is a folder): %s", cleanList(s.Linked, s.Omitted.Linked))
	}
	table("Slowest", s.Slowest, 0, (*Row).rankText)
	table("Most expensive", s.Costliest, 0, (*Row).rankText)
	return b.Flush()
}

// issueList names a group's issues, at most listMax, and how many more
// there are (notListed: the ones the summary already left out).
func issueList(issues []string, notListed int) string {
	shown, more := listed(issues, listMax)
	t := strings.Join(shown, ", ")
	if more += notListed; more > 0 {
		t += fmt.Sprintf(", and %d more (--format json names more)", more)
	}
	return t
}

// cleanList names outside strings (folder names) cleaned, at most listMax,
// and how many more there are.
func cleanList(names []string, notListed int) string {
	shown, more := listed(names, listMax)
	var parts []string
	for _, n := range shown {
		parts = append(parts, fmt.Sprintf("%q", ui.Clean(n, 60)))
	}
	t := strings.Join(parts, ", ")
	if more += notListed; more > 0 {
		t += fmt.Sprintf(", and %d more", more)
	}
	return t
}
