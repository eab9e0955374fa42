package fleet

import (
	"bufio"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/malarun/malarun/internal/ui"
)

// The page's own style, inline (the page is one file that works offline)
// and allowed by its hash alone; the page has no script at all. Its
// templates, with the head every page shares (ui.PageTemplate).
var (
	//go:embed assets/summary.css
	pageCSS string
	//go:embed assets/summary.tmpl
	pageTemplates string
)

// contentSecurityPolicy allows nothing but the page's own style: no
// network, no script, no inline style attribute.
func contentSecurityPolicy() string {
	return "default-src 'none'; style-src " + ui.CSPSource(pageCSS) + "; img-src 'none'; base-uri 'none'; form-action 'none'"
}

// head is a page's head, titled.
func head(title string) ui.Head {
	return ui.Head{CSP: contentSecurityPolicy(), Title: ui.Inert(title), CSS: template.CSS(pageCSS)}
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

// ref is a part of a list on the page: an issue's id (linked to its page
// at Href, if it has one), or a prompt file (Code), and words after it;
// or words alone ("and 3 more"). Its text is inert.
type ref struct {
	Issue, Href string
	Code        string
	Text        string
}

// refOf is an issue as the page names it, linked to link(issue).
func refOf(link func(string) string, issue string) ref {
	return ref{Issue: ui.Inert(issue), Href: link(issue)}
}

// andMore is the list's last part when more are not listed.
func andMore(refs []ref, more int) []ref {
	if more > 0 {
		refs = append(refs, ref{Text: fmt.Sprintf("and %d more", more)})
	}
	return refs
}

// indexView is the index as its template ("index") shows it.
type indexView struct {
	Head                                          ui.Head
	Issues                                        string
	Header                                        string
	ActOn                                         []actOnView
	Changes                                       *changesView
	Statuses                                      []statusBar
	Facts                                         []fact
	Durations                                     *histogram
	Night                                         *nightView
	Ended                                         []groupView
	EndedMore                                     int
	Waiting, Running, Damaged, Slowest, Costliest rowsView
	Skipped, Linked                               string
	Unlinked                                      string
	PagesMax                                      int
	Table                                         issuesView
}

type actOnView struct {
	Title, What string
	Items       []ref
	Reason      string
}

type changesView struct {
	Since                              string
	NewlyFailedCount, PassesAgainCount int
	NewlyFailed, PassesAgain           []ref
	StillFailing                       int
}

type fact struct{ Name, Text string }

type groupView struct {
	Title, Reason string
	Issues        []ref
}

// rowsView is a section of issues, a row each with words (Code: an
// error, in code); no rows, no section.
type rowsView struct {
	Title string
	Code  bool
	Rows  []rowView
	More  int
}

type rowView struct {
	Ref  ref
	Text string
}

// WriteHTML writes the summary's index: one self-contained page of
// bounded size (TestWorstCaseFitsItsBound): what to act on, what changed,
// the numbers, small charts (the statuses, how long the runs took, the
// runs on a time line) and the first htmlRows issues, each linked to
// link(issue) (its own `malarun show` page; "" for no link); the others
// are on the list pages (WriteHTMLList), which it links to.
func WriteHTML(w io.Writer, s *Summary, link func(issue string) string) error {
	issues := ui.Plural(s.Issues, "issue")
	v := indexView{Head: head("malarun summary: " + issues), Issues: issues, Header: ui.Inert(s.header()),
		ActOn: actOnViews(s, link), Changes: changesOf(s, link), Statuses: statusBars(s),
		Durations: durationChart(s), Night: nightChart(s, link), PagesMax: ShowPagesMax, Table: issueTable(s, 1, link)}
	for _, row := range [][2]string{{"Rescued", s.rescueLine()}, {"Failures", s.failureLine()}, {"Cost", s.costLine()},
		{"Wall time", s.wallLine()}, {"Cost per run", s.costSpreadLine()}} {
		v.Facts = append(v.Facts, fact{row[0], ui.Inert(row[1])})
	}
	shown, more := capped(s.Ended, htmlGroups)
	for _, g := range shown {
		issues, left := capped(g.Issues, htmlItems)
		var refs []ref
		for _, is := range issues {
			refs = append(refs, refOf(link, is))
		}
		v.Ended = append(v.Ended, groupView{Title: ui.Inert(g.title()), Reason: ui.Inert(g.Reason), Issues: andMore(refs, left+g.IssuesNotListed)})
	}
	v.EndedMore = more
	section := func(title string, rows []Row, text func(*Row) string) rowsView {
		shown, more := capped(rows, jsonRows)
		sv := rowsView{Title: title, More: more}
		for i := range shown {
			sv.Rows = append(sv.Rows, rowView{refOf(link, shown[i].Issue), ui.Inert(text(&shown[i]))})
		}
		return sv
	}
	v.Waiting = section("Waiting for a usage limit", s.Waiting, (*Row).waitingText)
	v.Running = section("Running", s.Running, func(r *Row) string { return r.runningText(s.MadeAt) })
	damaged, more := capped(s.Damaged, jsonRows)
	v.Damaged = rowsView{Title: "Damaged", Code: true, More: more}
	for _, d := range damaged {
		v.Damaged.Rows = append(v.Damaged.Rows, rowView{refOf(link, d.Issue), ui.Inert(d.Error)})
	}
	if len(s.Skipped) > 0 {
		v.Skipped = ui.Inert(cleanList(s.Skipped, s.Omitted.Skipped))
	}
	if len(s.Linked) > 0 {
		v.Linked = ui.Inert(cleanList(s.Linked, s.Omitted.Linked))
	}
	v.Slowest = section("Slowest", s.Slowest, (*Row).rankText)
	v.Costliest = section("Most expensive", s.Costliest, (*Row).rankText)
	unlinked := 0
	for _, r := range s.Rows {
		if link(r.Issue) == "" {
			unlinked++
		}
	}
	switch {
	case unlinked == 1:
		v.Unlinked = "1 issue has"
	case unlinked > 1:
		v.Unlinked = fmt.Sprintf("%d issues have", unlinked)
	}
	return writePage(w, "index", v)
}

// listView is a list page as its template ("list") shows it.
type listView struct {
	Head     ui.Head
	N, Pages int
	Header   string
	Table    issuesView
}

// WriteHTMLList writes list page n (2 and up) of s's issues: htmlRows of
// them, with links to the index and the other list pages.
func WriteHTMLList(w io.Writer, s *Summary, n int, link func(issue string) string) error {
	pages := ListPages(s)
	return writePage(w, "list", listView{Head: head(fmt.Sprintf("malarun summary: issues, page %d of %d", n, pages)),
		N: n, Pages: pages, Header: ui.Inert(s.header()), Table: issueTable(s, n, link)})
}

// writePage writes one of the summary's pages.
func writePage(w io.Writer, name string, view any) error {
	b := bufio.NewWriter(w)
	if err := ui.PageTemplate("summary", pageTemplates).ExecuteTemplate(b, name, view); err != nil {
		return err
	}
	return b.Flush()
}

// issuesView is list page n's rows of every issue, and the links to the
// other pages (none when one page lists them all).
type issuesView struct {
	Rows  []issueRow
	Pages []pageLink
	Total int
}

type issueRow struct {
	Ref                    ref
	Class, Status, Outcome string
	Exit, Wall, Cost       string
	Attempts, Hangs        int
}

type pageLink struct {
	Label, Href string
	Current     bool
}

// issueTable is list page n's rows of every issue, and the links to the
// other pages.
func issueTable(s *Summary, n int, link func(string) string) issuesView {
	v := issuesView{Total: len(s.Rows)}
	for _, r := range s.Rows[min(len(s.Rows), (n-1)*htmlRows):min(len(s.Rows), n*htmlRows)] {
		exit := ""
		if r.ExitCode != nil {
			exit = fmt.Sprint(*r.ExitCode)
		}
		v.Rows = append(v.Rows, issueRow{Ref: refOf(link, r.Issue), Class: statusClass(r.Status), Status: ui.Inert(r.Status),
			Outcome: ui.Inert(r.Outcome), Exit: exit, Wall: msText(float64(r.WallMS)), Cost: ui.Cost(r.CostUSD), Attempts: r.Attempts, Hangs: r.Hangs})
	}
	pages := ListPages(s)
	if pages == 1 {
		return v
	}
	for k := 1; k <= pages; k++ {
		href := ListPage(k)
		if k == 1 {
			href = "index.html"
		}
		v.Pages = append(v.Pages, pageLink{Label: fmt.Sprintf("%d–%d", (k-1)*htmlRows+1, min(k*htmlRows, len(s.Rows))), Href: href, Current: k == n})
	}
	return v
}

// actOnViews is what a person must act on, first on the page.
func actOnViews(s *Summary, link func(string) string) []actOnView {
	var out []actOnView
	for i := range s.ActOn {
		a := &s.ActOn[i]
		issues, _ := capped(a.Issues, htmlItems)
		files, _ := capped(a.Files, htmlItems-len(issues))
		var items []ref
		for _, is := range issues {
			items = append(items, refOf(link, is))
		}
		for _, f := range files {
			items = append(items, ref{Code: ui.Inert(f)})
		}
		out = append(out, actOnView{Title: ui.Inert(a.title()), What: ui.Inert(a.What),
			Items: andMore(items, a.Count-len(items)), Reason: ui.Inert(a.Reason)})
	}
	return out
}

// changesOf is what changed since the earlier summary (nil: no earlier
// summary).
func changesOf(s *Summary, link func(string) string) *changesView {
	c := s.Changes
	if c == nil {
		return nil
	}
	list := func(cs []Change, count int) []ref {
		shown, _ := capped(cs, htmlItems)
		var refs []ref
		for i := range shown {
			ch := &shown[i]
			r := refOf(link, ch.Issue)
			r.Text = ui.Inert(strings.TrimPrefix(ch.text(), ui.Clean(ch.Issue, 0)))
			refs = append(refs, r)
		}
		if refs = andMore(refs, count-len(shown)); len(refs) == 0 {
			return []ref{{Text: "none"}}
		}
		return refs
	}
	return &changesView{Since: ui.Inert(c.sinceText()), NewlyFailedCount: c.NewlyFailedCount, PassesAgainCount: c.PassesAgainCount,
		NewlyFailed: list(c.NewlyFailed, c.NewlyFailedCount), PassesAgain: list(c.PassesAgain, c.PassesAgainCount), StillFailing: c.StillFailing}
}
