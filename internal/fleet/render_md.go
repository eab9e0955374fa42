package fleet

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/malarun/malarun/internal/ui"
)

// WriteMarkdown writes the summary as Markdown for a pull-request comment
// or a GitHub step summary (which holds at most 1 MiB: at most listMax
// groups, each naming at most listMax issues, a table at most listMax
// rows, so a state directory of any size fits). A record's reason or
// error is an inline code span (ui.MarkdownCode); the summary's sentences,
// which carry shorter values from records (a phase, an outcome, a limit
// type, a tool's name), are escaped by mdText: neither renders as a link,
// HTML or a mention. Issue ids are checked names (letters, digits, . _ -).
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
		for _, g := range s.Ended[:min(len(s.Ended), listMax)] {
			shown, more := listed(g.Issues, listMax)
			names := strings.Join(shown, ", ")
			if more > 0 {
				names += fmt.Sprintf(", and %d more", more)
			}
			p("- **%s**: %s  ", mdText(g.title()), ui.MarkdownCode(g.Reason))
			p("  %s", mdText(names))
		}
		if len(s.Ended) > listMax {
			p("- and %d more groups (`--format json` names them all)", len(s.Ended)-listMax)
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
// records are already clean; what Markdown would act on is escaped:
// emphasis, links, HTML, a table's bar, a mention (@), and GitHub's
// autolinks (the colon of "http://", the dot of "www."). Each value is one
// line, so no block (a list, a heading) can begin inside it.
func mdText(s string) string {
	var b strings.Builder
	for i, c := range s {
		if strings.ContainsRune("\\`*_[]<>|~&@:", c) || c == '.' && i >= 3 && strings.EqualFold(s[i-3:i], "www") {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
