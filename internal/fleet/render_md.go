package fleet

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/malarun/malarun/internal/ui"
)

// WriteMarkdown writes the summary as Markdown for a pull-request comment
// or a GitHub step summary (which holds at most 1 MiB: a group names at
// most listMax issues, a table at most listMax rows, so a state directory
// of any size fits). Every value from a record is an inline code span
// (ui.MarkdownCode): it renders as the text it is, never as a link, HTML
// or a mention. Issue ids are checked names (letters, digits, . _ -).
func WriteMarkdown(w io.Writer, s *Summary) error {
	b := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(b, format+"\n", a...) }
	p("### malarun summary: %d issues", s.Issues)
	p("")
	p("%s", mdText(s.header()))
	p("")
	p("| | |")
	p("| --- | --- |")
	p("| Status | %s |", mdText(s.statusLine()))
	p("| Rescued | %s |", mdText(s.rescueLine()))
	p("| Cost | %s |", mdText(s.costLine()))
	p("| Wall time | %s |", mdText(s.wallLine()))
	p("| Cost per run | %s |", mdText(s.costSpreadLine()))
	if len(s.Ended) > 0 {
		p("")
		p("#### Ended without success")
		p("")
		for _, g := range s.Ended {
			shown, more := listed(g.Issues, listMax)
			names := strings.Join(shown, ", ")
			if more > 0 {
				names += fmt.Sprintf(", and %d more", more)
			}
			p("- **%s**: %s  ", mdText(g.title()), ui.MarkdownCode(g.Reason))
			p("  %s", mdText(names))
		}
	}
	rows := func(title string, rs []Row, text func(*Row) string) {
		if len(rs) == 0 {
			return
		}
		p("")
		p("#### %s", title)
		p("")
		p("| issue | |")
		p("| --- | --- |")
		shown := rs[:min(len(rs), listMax)]
		for i := range shown {
			p("| %s | %s |", mdText(shown[i].Issue), mdText(text(&shown[i])))
		}
		if len(rs) > listMax {
			p("| and %d more | |", len(rs)-listMax)
		}
	}
	rows("Waiting for a usage limit", s.Waiting, (*Row).waitingText)
	rows("Running", s.Running, func(r *Row) string { return r.runningText(s.MadeAt) })
	rows("Slowest", s.Slowest, (*Row).rankText)
	rows("Most expensive", s.Costliest, (*Row).rankText)
	if len(s.Damaged) > 0 {
		p("")
		p("#### Damaged")
		p("")
		for _, d := range s.Damaged[:min(len(s.Damaged), listMax)] {
			p("- %s: %s", mdText(d.Issue), ui.MarkdownCode(d.Error))
		}
		if len(s.Damaged) > listMax {
			p("- and %d more", len(s.Damaged)-listMax)
		}
	}
	if len(s.Skipped) > 0 {
		p("")
		p("Folders that are not issues: %s", ui.MarkdownCode(cleanList(s.Skipped)))
	}
	return b.Flush()
}

// mdText is one of the summary's own sentences in Markdown: its parts from
// records are already clean; what Markdown would act on (emphasis, links,
// HTML, a table's bar) is escaped. Each value is one line, so no block
// (a list, a heading) can begin inside it.
func mdText(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune("\\`*_[]<>|~&", c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
