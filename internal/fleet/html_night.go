package fleet

import (
	"bufio"
	"fmt"
	"slices"
	"time"

	"github.com/malarun/malarun/internal/ui"
)

// nightChart is the night's runs on one time line: a row per issue, from
// its run's start to its end (to now while it goes on), in its status's
// colour, each linked to the issue's page; earliest start first.
func nightChart(b *bufio.Writer, s *Summary, link func(string) string) {
	type span struct {
		row        *Row
		start, end time.Time
	}
	var spans []span
	var t0, t1 time.Time
	for i := range s.Rows {
		r := &s.Rows[i]
		if r.Started.IsZero() {
			continue
		}
		end := r.Started.Add(time.Duration(r.WallMS) * time.Millisecond)
		spans = append(spans, span{r, r.Started, end})
		if t0.IsZero() || r.Started.Before(t0) {
			t0 = r.Started
		}
		if end.After(t1) {
			t1 = end
		}
	}
	if len(spans) == 0 || !t1.After(t0) {
		return
	}
	slices.SortStableFunc(spans, func(a, b span) int { return a.start.Compare(b.start) })
	const width, left, axis = 1000.0, 0.0, 22.0
	rowH := 6.0
	switch n := len(spans); {
	case n > 400:
		rowH = 1.5
	case n > 100:
		rowH = 3
	}
	height := axis + rowH*float64(len(spans)) + 4
	total := t1.Sub(t0)
	x := func(t time.Time) float64 { return left + (width-left)*float64(t.Sub(t0))/float64(total) }
	fmt.Fprintf(b, "<h2>The runs on a time line</h2>\n<p class=\"dim\">%s to %s: a row per issue from its run's start to its end; each links to the issue's page.</p>\n",
		ui.HTMLText(timeText(t0)), ui.HTMLText(timeText(t1)))
	fmt.Fprintf(b, `<svg viewBox="0 0 %.0f %.1f" role="img" aria-label="the runs on a time line">`, width, height)
	for i := 0; i <= 4; i++ {
		tx := width * float64(i) / 4
		at := t0.Add(time.Duration(float64(total) * float64(i) / 4)).UTC().Format("15:04")
		anchor := "middle"
		if i == 0 {
			anchor = "start"
		} else if i == 4 {
			anchor = "end"
		}
		fmt.Fprintf(b, `<line class="axis" x1="%.1f" y1="%.0f" x2="%.1f" y2="%.1f"/><text x="%.1f" y="14" text-anchor="%s">%s</text>`, tx, axis-4, tx, height, tx, anchor, at)
	}
	for i, sp := range spans {
		y := axis + rowH*float64(i)
		w := max(x(sp.end)-x(sp.start), 1)
		tip := fmt.Sprintf("%s: %s, %s, %s", sp.row.Issue, sp.row.Status, ui.Duration(time.Duration(sp.row.WallMS)*time.Millisecond), ui.Cost(sp.row.CostUSD))
		rect := fmt.Sprintf(`<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s</title></rect>`,
			statusClass(sp.row.Status), x(sp.start), y, w, max(rowH-0.5, 1), ui.HTMLText(tip))
		if href := link(sp.row.Issue); href != "" {
			rect = fmt.Sprintf(`<a href="%s">%s</a>`, ui.HTMLText(href), rect)
		}
		b.WriteString(rect)
	}
	b.WriteString("</svg>\n")
}
