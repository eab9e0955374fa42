package fleet

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"strings"
	"time"

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

// WriteHTML writes the summary as one self-contained page: the numbers,
// small charts (the statuses, how long the runs took, the night's runs on
// a time line) and every issue, each linked to link(issue) (its own
// `malarun show` page; "" for no link).
func WriteHTML(w io.Writer, s *Summary, link func(issue string) string) error {
	b := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(b, format+"\n", a...) }
	name := func(issue string) string {
		if href := link(issue); href != "" {
			return fmt.Sprintf(`<a href="%s">%s</a>`, ui.HTMLText(href), ui.HTMLText(issue))
		}
		return ui.HTMLText(issue)
	}
	p(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="%s">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>malarun summary: %d issues</title>
<style>%s</style>
</head><body><main>`, ui.HTMLText(contentSecurityPolicy()), s.Issues, pageCSS)
	p(`<h1>malarun summary: %d issues</h1>`, s.Issues)
	p(`<p class="dim">%s</p>`, ui.HTMLText(s.header()))
	statusChart(b, s)
	p(`<table class="facts">`)
	for _, row := range [][2]string{{"Rescued", s.rescueLine()}, {"Cost", s.costLine()}, {"Wall time", s.wallLine()}, {"Cost per run", s.costSpreadLine()}} {
		p(`<tr><th>%s</th><td>%s</td></tr>`, row[0], ui.HTMLText(row[1]))
	}
	p(`</table>`)
	durationChart(b, s)
	nightChart(b, s, link)
	if len(s.Ended) > 0 {
		p(`<h2>Ended without success</h2>`)
		for _, g := range s.Ended {
			var names []string
			for _, is := range g.Issues {
				names = append(names, name(is))
			}
			p(`<div class="group"><b>%s</b>: <code>%s</code><div class="issues">%s</div></div>`, ui.HTMLText(g.title()), ui.HTMLText(g.Reason), strings.Join(names, ", "))
		}
	}
	section := func(title string, rows []Row, text func(*Row) string) {
		if len(rows) == 0 {
			return
		}
		p(`<h2>%s</h2><table>`, title)
		for i := range rows {
			p(`<tr><td>%s</td><td>%s</td></tr>`, name(rows[i].Issue), ui.HTMLText(text(&rows[i])))
		}
		p(`</table>`)
	}
	section("Waiting for a usage limit", s.Waiting, (*Row).waitingText)
	section("Running", s.Running, func(r *Row) string { return r.runningText(s.MadeAt) })
	if len(s.Damaged) > 0 {
		p(`<h2>Damaged</h2><table>`)
		for _, d := range s.Damaged {
			p(`<tr><td>%s</td><td><code>%s</code></td></tr>`, name(d.Issue), ui.HTMLText(d.Error))
		}
		p(`</table>`)
	}
	if len(s.Skipped) > 0 {
		p(`<p class="dim">Folders that are not issues: <code>%s</code></p>`, ui.HTMLText(cleanList(s.Skipped)))
	}
	section("Slowest", s.Slowest, (*Row).rankText)
	section("Most expensive", s.Costliest, (*Row).rankText)
	p(`<h2>Every issue</h2><table><tr><th>issue</th><th>status</th><th>outcome</th><th class="n">exit</th><th class="n">wall time</th><th class="n">cost</th><th class="n">attempts</th><th class="n">hangs</th></tr>`)
	for _, r := range s.Rows {
		exit := ""
		if r.ExitCode != nil {
			exit = fmt.Sprint(*r.ExitCode)
		}
		p(`<tr><td>%s</td><td class="%s">%s</td><td>%s</td><td class="n">%s</td><td class="n">%s</td><td class="n">%s</td><td class="n">%d</td><td class="n">%d</td></tr>`,
			name(r.Issue), statusClass(r.Status), ui.HTMLText(r.Status), ui.HTMLText(r.Outcome), exit, ui.Duration(time.Duration(r.WallMS)*time.Millisecond), ui.Cost(r.CostUSD), r.Attempts, r.Hangs)
	}
	p(`</table></main></body></html>`)
	return b.Flush()
}

// statusChart is one bar split by status, and its legend.
func statusChart(b *bufio.Writer, s *Summary) {
	if s.Issues == 0 {
		return
	}
	const width = 1000
	fmt.Fprintf(b, `<svg viewBox="0 0 %d 24" role="img" aria-label="issues by status">`, width)
	x := 0.0
	for _, c := range s.ByStatus {
		w := float64(width) * float64(c.Count) / float64(s.Issues)
		fmt.Fprintf(b, `<rect class="%s" x="%.1f" y="0" width="%.1f" height="24"><title>%s: %d</title></rect>`, statusClass(c.Status), x, w, ui.HTMLText(c.Status), c.Count)
		x += w
	}
	b.WriteString("</svg>\n<p class=\"legend\">")
	for _, c := range s.ByStatus {
		fmt.Fprintf(b, `<span class="%s">■</span><span>%s %d</span>`, statusClass(c.Status), ui.HTMLText(c.Status), c.Count)
	}
	b.WriteString("</p>\n")
}

// durationBuckets are the wall-time bars of the duration chart.
func durationBuckets() []struct {
	label string
	upTo  time.Duration
} {
	return []struct {
		label string
		upTo  time.Duration
	}{{"< 1m", time.Minute}, {"1-5m", 5 * time.Minute}, {"5-15m", 15 * time.Minute}, {"15-30m", 30 * time.Minute},
		{"30m-1h", time.Hour}, {"1-2h", 2 * time.Hour}, {"2-4h", 4 * time.Hour}, {"≥ 4h", 1 << 62}}
}

// durationChart is how many of the runs that ended took how long.
func durationChart(b *bufio.Writer, s *Summary) {
	buckets := durationBuckets()
	counts := make([]int, len(buckets))
	top := 0
	for _, r := range s.Rows {
		if !ended(r.Status) {
			continue
		}
		d := time.Duration(r.WallMS) * time.Millisecond
		for i, bk := range buckets {
			if d < bk.upTo {
				counts[i]++
				top = max(top, counts[i])
				break
			}
		}
	}
	if top == 0 {
		return
	}
	fmt.Fprintf(b, "<h2>How long the runs that ended took</h2>\n<svg viewBox=\"0 0 1000 150\" role=\"img\" aria-label=\"wall time of the runs that ended\">")
	slot := 1000.0 / float64(len(buckets))
	for i, bk := range buckets {
		h := 110 * float64(counts[i]) / float64(top)
		x := float64(i)*slot + 8
		fmt.Fprintf(b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s: %d</title></rect>`, x, 120-h, slot-16, h, bk.label, counts[i])
		fmt.Fprintf(b, `<text x="%.1f" y="138">%s</text><text x="%.1f" y="%.1f">%d</text>`, x, bk.label, x, 116-h, counts[i])
	}
	b.WriteString("<line class=\"axis\" x1=\"0\" y1=\"120\" x2=\"1000\" y2=\"120\"/></svg>\n")
}
