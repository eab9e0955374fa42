package fleet

import (
	"bufio"
	"fmt"
	"time"

	"github.com/malarun/malarun/internal/ui"
)

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

// The histogram's geometry, in the units of its viewBox: the bars stand on
// the axis at barsBottom and rise at most barsHeight, below a margin that
// holds the tallest bar's count; the labels of the buckets go under the
// axis.
const (
	histWidth   = 1000.0
	histTop     = 22.0
	barsHeight  = 100.0
	barsBottom  = histTop + barsHeight
	histHeight  = barsBottom + 26
	histBuckets = 12
)

// durationChart is how many of the runs that ended took how long, in
// buckets of one round width that follow the spread (durationBuckets).
func durationChart(b *bufio.Writer, s *Summary) {
	var walls []time.Duration
	for _, r := range s.Rows {
		if ended(r.Status) {
			walls = append(walls, time.Duration(r.WallMS)*time.Millisecond)
		}
	}
	buckets := durationBuckets(walls, histBuckets)
	if len(buckets) == 0 {
		return
	}
	top := 0
	for _, bk := range buckets {
		top = max(top, bk.count)
	}
	fmt.Fprintf(b, "<h2>How long the runs that ended took</h2>\n<svg viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"wall time of the runs that ended\">", histWidth, histHeight)
	slot := histWidth / float64(max(len(buckets), 6)) // a few wide bars stay bars
	left := (histWidth - slot*float64(len(buckets))) / 2
	for i, bk := range buckets {
		h := barsHeight * float64(bk.count) / float64(top)
		x := left + float64(i)*slot
		mid := x + slot/2
		fmt.Fprintf(b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s: %s</title></rect>`,
			x+4, barsBottom-h, slot-8, h, bk.label(), ui.Plural(bk.count, "run"))
		fmt.Fprintf(b, `<text class="count" x="%.1f" y="%.1f" text-anchor="middle">%d</text><text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`,
			mid, barsBottom-h-5, bk.count, mid, barsBottom+16, bk.label())
	}
	fmt.Fprintf(b, "<line class=\"axis\" x1=\"0\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/></svg>\n", barsBottom, histWidth, barsBottom)
}
