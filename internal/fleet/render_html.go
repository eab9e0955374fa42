package fleet

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"strings"

	"github.com/malarun/malarun/internal/ui"
)

// The page's own style, inline (the page is one file that works offline)
// and allowed by its hash alone; the page has no script at all.
//
//go:embed assets/summary.css
var pageCSS string

// contentSecurityPolicy allows nothing but the page's own style: no
// network, no script, no inline style attribute.
func contentSecurityPolicy() string {
	return "default-src 'none'; style-src " + ui.CSPSource(pageCSS) + "; img-src 'none'; base-uri 'none'; form-action 'none'"
}

// statusClass is the style class of a status word (an unknown word, from
// a newer malarun or a planted record, gets the damaged one's).
func statusClass(status string) string {
	for _, s := range statusOrder() {
		if s == status {
			return "s-" + s
		}
	}
	return "s-damaged"
}

// htmlGroups and htmlItems bound the index's groups, the issues each
// names, and the items of what to act on and of the changes: a person
// reads the first; the JSON form and the list pages have the rest.
const (
	htmlGroups = 100
	htmlItems  = 40
)

// ShowPagesMax is how many issues' own pages (malarun show) a summary's
// folder holds at most: each is a file, and its run's story can be large,
// so a state directory of any size makes a folder of bounded size and
// time. ShowPageOrder says which.
const ShowPagesMax = 2000

// ShowPageOrder is the issues whose pages a folder holds, at most n: those
// a person should look at first (what to act on, the runs that ended
// without success, that run or wait, the slowest and costliest), then the
// others by id.
func ShowPageOrder(s *Summary, n int) []string {
	seen := map[string]bool{}
	var out []string
	add := func(issue string) {
		if len(out) < n && !seen[issue] {
			seen[issue] = true
			out = append(out, issue)
		}
	}
	for _, a := range s.ActOn {
		for _, is := range a.Issues {
			add(is)
		}
	}
	for _, g := range s.Ended {
		for _, is := range g.Issues {
			add(is)
		}
	}
	for _, rows := range [][]Row{s.Running, s.Waiting, s.Slowest, s.Costliest, s.Rows} {
		for _, r := range rows {
			add(r.Issue)
		}
	}
	return out
}

// ListPage is the file name of the index's list page n (2 and up): the
// issues past the index's first htmlRows, htmlRows each.
func ListPage(n int) string { return fmt.Sprintf("list-%d.html", n) }

// ListPages is how many pages list the issues of s, the index included.
func ListPages(s *Summary) int { return max(1, (len(s.Rows)+htmlRows-1)/htmlRows) }

// page writes the page's head and the start of its body.
func page(b *bufio.Writer, title string) {
	fmt.Fprintf(b, `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="%s">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%s</title>
<style>%s</style>
</head><body><main>
`, ui.HTMLText(contentSecurityPolicy()), ui.HTMLText(title), pageCSS)
}

// linker writes an issue's name, linked to its page when link names one.
func linker(link func(string) string) func(string) string {
	return func(issue string) string {
		if href := link(issue); href != "" {
			return fmt.Sprintf(`<a href="%s">%s</a>`, ui.HTMLText(href), ui.HTMLText(issue))
		}
		return ui.HTMLText(issue)
	}
}

// WriteHTML writes the summary's index: one self-contained page of
// bounded size (TestWorstCaseFitsItsBound): what to act on, what changed,
// the numbers, small charts (the statuses, how long the runs took, the
// runs on a time line) and the first htmlRows issues, each linked to
// link(issue) (its own `malarun show` page; "" for no link); the others
// are on the list pages (WriteHTMLList), which it links to.
func WriteHTML(w io.Writer, s *Summary, link func(issue string) string) error {
	b := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(b, format+"\n", a...) }
	name := linker(link)
	page(b, fmt.Sprintf("malarun summary: %s", ui.Plural(s.Issues, "issue")))
	p(`<h1>malarun summary: %s</h1>`, ui.Plural(s.Issues, "issue"))
	p(`<p class="dim">%s</p>`, ui.HTMLText(s.header()))
	actOnHTML(b, s, name)
	changesHTML(b, s, name)
	statusChart(b, s)
	p(`<table class="facts">`)
	for _, row := range [][2]string{{"Rescued", s.rescueLine()}, {"Failures", s.failureLine()}, {"Cost", s.costLine()},
		{"Wall time", s.wallLine()}, {"Cost per run", s.costSpreadLine()}} {
		p(`<tr><th>%s</th><td>%s</td></tr>`, row[0], ui.HTMLText(row[1]))
	}
	p(`</table>`)
	durationChart(b, s)
	nightChart(b, s, link)
	if len(s.Ended) > 0 {
		p(`<h2>Ended without success</h2>`)
		shown, more := capped(s.Ended, htmlGroups)
		for _, g := range shown {
			issues, left := capped(g.Issues, htmlItems)
			var names []string
			for _, is := range issues {
				names = append(names, name(is))
			}
			if left += g.IssuesNotListed; left > 0 {
				names = append(names, fmt.Sprintf("and %d more", left))
			}
			p(`<div class="group"><b>%s</b>: <code>%s</code><div class="issues">%s</div></div>`, ui.HTMLText(g.title()), ui.HTMLText(g.Reason), strings.Join(names, ", "))
		}
		if more > 0 {
			p(`<p class="dim">and %d more groups (--format json names more; every issue is listed below)</p>`, more)
		}
	}
	section := func(title string, rows []Row, text func(*Row) string) {
		if len(rows) == 0 {
			return
		}
		shown, more := capped(rows, jsonRows)
		p(`<h2>%s</h2><table>`, title)
		for i := range shown {
			p(`<tr><td>%s</td><td>%s</td></tr>`, name(shown[i].Issue), ui.HTMLText(text(&shown[i])))
		}
		p(`</table>`)
		if more > 0 {
			p(`<p class="dim">and %d more</p>`, more)
		}
	}
	section("Waiting for a usage limit", s.Waiting, (*Row).waitingText)
	section("Running", s.Running, func(r *Row) string { return r.runningText(s.MadeAt) })
	if len(s.Damaged) > 0 {
		shown, more := capped(s.Damaged, jsonRows)
		p(`<h2>Damaged</h2><table>`)
		for _, d := range shown {
			p(`<tr><td>%s</td><td><code>%s</code></td></tr>`, name(d.Issue), ui.HTMLText(d.Error))
		}
		p(`</table>`)
		if more > 0 {
			p(`<p class="dim">and %d more</p>`, more)
		}
	}
	if len(s.Skipped) > 0 {
		p(`<p class="dim">Folders that are not issues: <code>%s</code></p>`, ui.HTMLText(cleanList(s.Skipped, s.Omitted.Skipped)))
	}
	if len(s.Linked) > 0 {
		p(`<p class="dim">Links not followed (an issue's folder is a folder): <code>%s</code></p>`, ui.HTMLText(cleanList(s.Linked, s.Omitted.Linked)))
	}
	section("Slowest", s.Slowest, (*Row).rankText)
	section("Most expensive", s.Costliest, (*Row).rankText)
	p(`<h2>Every issue</h2>`)
	unlinked := 0
	for _, r := range s.Rows {
		if link(r.Issue) == "" {
			unlinked++
		}
	}
	if unlinked > 0 {
		what := fmt.Sprintf("%d issues have", unlinked)
		if unlinked == 1 {
			what = "1 issue has"
		}
		p(`<p class="dim">%s no page of its own here (a damaged record, or past the %d pages a summary makes, those to look at first): <code>malarun show ISSUE --format html</code> makes one.</p>`,
			what, ShowPagesMax)
	}
	issueTable(b, s, 1, name)
	p(`</main></body></html>`)
	return b.Flush()
}

// WriteHTMLList writes list page n (2 and up) of s's issues: htmlRows of
// them, with links to the index and the other list pages.
func WriteHTMLList(w io.Writer, s *Summary, n int, link func(issue string) string) error {
	b := bufio.NewWriter(w)
	page(b, fmt.Sprintf("malarun summary: issues, page %d of %d", n, ListPages(s)))
	fmt.Fprintf(b, "<h1>malarun summary: issues, page %d of %d</h1>\n<p class=\"dim\">%s</p>\n", n, ListPages(s), ui.HTMLText(s.header()))
	issueTable(b, s, n, linker(link))
	b.WriteString("</main></body></html>\n")
	return b.Flush()
}

// issueTable is list page n's rows of every issue, and the links to the
// other pages.
func issueTable(b *bufio.Writer, s *Summary, n int, name func(string) string) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format+"\n", a...) }
	rows := s.Rows[min(len(s.Rows), (n-1)*htmlRows):min(len(s.Rows), n*htmlRows)]
	p(`<table><tr><th>issue</th><th>status</th><th>outcome</th><th class="n">exit</th><th class="n">wall time</th><th class="n">cost</th><th class="n">attempts</th><th class="n">hangs</th></tr>`)
	for _, r := range rows {
		exit := ""
		if r.ExitCode != nil {
			exit = fmt.Sprint(*r.ExitCode)
		}
		p(`<tr><td>%s</td><td class="%s">%s</td><td>%s</td><td class="n">%s</td><td class="n">%s</td><td class="n">%s</td><td class="n">%d</td><td class="n">%d</td></tr>`,
			name(r.Issue), statusClass(r.Status), ui.HTMLText(r.Status), ui.HTMLText(r.Outcome), exit, msText(float64(r.WallMS)), ui.Cost(r.CostUSD), r.Attempts, r.Hangs)
	}
	p(`</table>`)
	pages := ListPages(s)
	if pages == 1 {
		return
	}
	var links []string
	for k := 1; k <= pages; k++ {
		label := fmt.Sprintf("%d–%d", (k-1)*htmlRows+1, min(k*htmlRows, len(s.Rows)))
		href := ListPage(k)
		if k == 1 {
			href = "index.html"
		}
		if k == n {
			links = append(links, "<b>"+label+"</b>")
		} else {
			links = append(links, fmt.Sprintf(`<a href="%s">%s</a>`, href, label))
		}
	}
	p(`<p class="pages">Issues %s (of %d)</p>`, strings.Join(links, " · "), len(s.Rows))
}

// actOnHTML is what a person must act on, first on the page.
func actOnHTML(b *bufio.Writer, s *Summary, name func(string) string) {
	if len(s.ActOn) == 0 {
		return
	}
	b.WriteString("<section class=\"act\"><h2>Act on these first</h2><ul>\n")
	for i := range s.ActOn {
		a := &s.ActOn[i]
		issues, _ := capped(a.Issues, htmlItems)
		files, _ := capped(a.Files, htmlItems-len(issues))
		var items []string
		for _, is := range issues {
			items = append(items, name(is))
		}
		for _, f := range files {
			items = append(items, "<code>"+ui.HTMLText(f)+"</code>")
		}
		if more := a.Count - len(items); more > 0 {
			items = append(items, fmt.Sprintf("and %d more", more))
		}
		fmt.Fprintf(b, "<li><b>%s</b>: %s<div class=\"issues\">%s</div>", ui.HTMLText(a.title()), ui.HTMLText(a.What), strings.Join(items, ", "))
		if a.Reason != "" {
			fmt.Fprintf(b, "<div class=\"dim\">the first says <code>%s</code></div>", ui.HTMLText(a.Reason))
		}
		b.WriteString("</li>\n")
	}
	b.WriteString("</ul></section>\n")
}

// changesHTML is what changed since the earlier summary.
func changesHTML(b *bufio.Writer, s *Summary, name func(string) string) {
	c := s.Changes
	if c == nil {
		return
	}
	list := func(cs []Change, count int) string {
		shown, _ := capped(cs, htmlItems)
		var parts []string
		for i := range shown {
			ch := &shown[i]
			text := strings.TrimPrefix(ch.text(), ui.Clean(ch.Issue, 0))
			parts = append(parts, name(ch.Issue)+ui.HTMLText(text))
		}
		if more := count - len(shown); more > 0 {
			parts = append(parts, fmt.Sprintf("and %d more", more))
		}
		if len(parts) == 0 {
			return "none"
		}
		return strings.Join(parts, ", ")
	}
	fmt.Fprintf(b, "<h2>%s</h2>\n<table class=\"facts\">\n", ui.HTMLText(c.sinceText()))
	fmt.Fprintf(b, "<tr><th>Newly failed (%d)</th><td>%s</td></tr>\n", c.NewlyFailedCount, list(c.NewlyFailed, c.NewlyFailedCount))
	fmt.Fprintf(b, "<tr><th>Passes again (%d)</th><td>%s</td></tr>\n", c.PassesAgainCount, list(c.PassesAgain, c.PassesAgainCount))
	fmt.Fprintf(b, "<tr><th>Still failing</th><td>%d</td></tr>\n</table>\n", c.StillFailing)
}
