package fleet

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/malarun/malarun/internal/ui"
)

// WriteMarkdown writes the summary as Markdown for a pull-request comment
// or a GitHub step summary, which holds at most 1 MiB: each list at most
// listMax, every value cut, so a state directory of any size fits
// (TestWorstCaseFitsItsBound). A record's reason or error is an inline
// code span (ui.MarkdownCode); the summary's sentences, which carry
// shorter values from records, go through ui.MarkdownText: neither
// renders as a link, HTML or a mention.
func WriteMarkdown(w io.Writer, s *Summary) error {
	b := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(b, format+"\n", a...) }
	p("### malarun summary: %s", ui.Plural(s.Issues, "issue"))
	p("")
	p("%s", ui.MarkdownText(s.header()))
	if len(s.ActOn) > 0 {
		p("")
		p("#### Act on these first")
		p("")
		for i := range s.ActOn {
			a := &s.ActOn[i]
			p("- **%s**: %s  ", ui.MarkdownText(a.title()), ui.MarkdownText(a.What))
			line := ui.MarkdownText(a.itemsText(listMax))
			if a.Reason != "" {
				line += " · the first says " + ui.MarkdownCode(a.Reason)
			}
			p("  %s", line)
		}
	}
	if c := s.Changes; c != nil {
		p("")
		p("#### %s", ui.MarkdownText(c.sinceText()))
		p("")
		p("- **Newly failed** (%d): %s", c.NewlyFailedCount, ui.MarkdownText(changesText(c.NewlyFailed, c.NewlyFailedCount, listMax)))
		p("- **Passes again** (%d): %s", c.PassesAgainCount, ui.MarkdownText(changesText(c.PassesAgain, c.PassesAgainCount, listMax)))
		p("- **Still failing**: %d", c.StillFailing)
	}
	p("")
	p("- **Status**: %s", ui.MarkdownText(s.statusLine()))
	p("- **Rescued**: %s", ui.MarkdownText(s.rescueLine()))
	p("- **Failures**: %s", ui.MarkdownText(s.failureLine()))
	p("- **Cost**: %s", ui.MarkdownText(s.costLine()))
	p("- **Wall time**: %s", ui.MarkdownText(s.wallLine()))
	p("- **Cost per run**: %s", ui.MarkdownText(s.costSpreadLine()))
	if len(s.Ended) > 0 {
		p("")
		p("#### Ended without success")
		p("")
		shown, more := capped(s.Ended, listMax)
		for _, g := range shown {
			p("- **%s**: %s  ", ui.MarkdownText(g.title()), ui.MarkdownCode(g.Reason))
			p("  %s", ui.MarkdownText(issueList(g.Issues, g.IssuesNotListed)))
		}
		if more += s.Omitted.Groups; more > 0 {
			p("- and %d more groups (`--format json` names more)", more)
		}
	}
	table := func(title string, header string, rs []Row, omitted int, cells func(*Row) []string) {
		if len(rs) == 0 {
			return
		}
		p("")
		p("#### %s", title)
		p("")
		p("| %s |", header)
		p("|%s", strings.Repeat(" --- |", strings.Count(header, "|")+1))
		shown, more := capped(rs, listMax)
		for i := range shown {
			var cs []string
			for _, c := range append([]string{shown[i].Issue}, cells(&shown[i])...) {
				cs = append(cs, ui.MarkdownCell(c))
			}
			p("| %s |", strings.Join(cs, " | "))
		}
		if more += omitted; more > 0 {
			p("")
			p("and %d more (`--format json` names more)", more)
		}
	}
	table("Waiting for a usage limit", "issue | waits", s.Waiting, s.Omitted.Waiting, func(r *Row) []string { return []string{r.waitingText()} })
	table("Running", "issue | what it does", s.Running, s.Omitted.Running, func(r *Row) []string { return []string{r.runningText(s.MadeAt)} })
	rank := func(r *Row) []string { return r.rankCells() }
	table("Slowest", "issue | wall time | cost | status", s.Slowest, 0, rank)
	table("Most expensive", "issue | wall time | cost | status", s.Costliest, 0, rank)
	if len(s.Damaged) > 0 {
		p("")
		p("#### Damaged")
		p("")
		shown, more := capped(s.Damaged, listMax)
		for _, d := range shown {
			p("- %s: %s", ui.MarkdownText(d.Issue), ui.MarkdownCode(d.Error))
		}
		if more += s.Omitted.Damaged; more > 0 {
			p("- and %d more", more)
		}
	}
	if len(s.Skipped) > 0 {
		p("")
		p("Folders that are not issues: %s", ui.MarkdownCode(cleanList(s.Skipped, s.Omitted.Skipped)))
	}
	if len(s.Linked) > 0 {
		p("")
		p("Links not followed (an issue's folder is a folder): %s", ui.MarkdownCode(cleanList(s.Linked, s.Omitted.Linked)))
	}
	return b.Flush()
}
