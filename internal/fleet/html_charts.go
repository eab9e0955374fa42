package fleet

import (
	"time"

	"github.com/malarun/malarun/internal/ui"
)

// statusBar is a status's part of the bar that splits the issues by
// status, and of its legend.
type statusBar struct {
	Class, Status string
	Count         int
	X, Width      float64
}

// statusBars is one bar split by status (none when there are no issues).
func statusBars(s *Summary) []statusBar {
	if s.Issues == 0 {
		return nil
	}
	const width = 1000
	var out []statusBar
	x := 0.0
	for _, c := range s.ByStatus {
		w := float64(width) * float64(c.Count) / float64(s.Issues)
		out = append(out, statusBar{Class: statusClass(c.Status), Status: ui.Inert(c.Status), Count: c.Count, X: x, Width: w})
		x += w
	}
	return out
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

// histogram is how many of the runs that ended took how long, a bar per
// bucket standing on the axis.
type histogram struct {
	Width, Height, Axis float64
	Bars                []histogramBar
}

type histogramBar struct {
	X, Y, Width, Height float64
	Mid, CountY, LabelY float64
	Count               int
	Label, Runs         string
}

// durationChart is how many of the runs that ended took how long, in
// buckets of one round width that follow the spread (durationBuckets);
// nil when none ended.
func durationChart(s *Summary) *histogram {
	var walls []time.Duration
	for _, r := range s.Rows {
		if ended(r.Status) {
			walls = append(walls, time.Duration(r.WallMS)*time.Millisecond)
		}
	}
	buckets := durationBuckets(walls, histBuckets)
	if len(buckets) == 0 {
		return nil
	}
	top := 0
	for _, bk := range buckets {
		top = max(top, bk.count)
	}
	v := &histogram{Width: histWidth, Height: histHeight, Axis: barsBottom}
	slot := histWidth / float64(max(len(buckets), 6)) // a few wide bars stay bars
	left := (histWidth - slot*float64(len(buckets))) / 2
	for i, bk := range buckets {
		h := barsHeight * float64(bk.count) / float64(top)
		x := left + float64(i)*slot
		v.Bars = append(v.Bars, histogramBar{X: x + 4, Y: barsBottom - h, Width: slot - 8, Height: h,
			Mid: x + slot/2, CountY: barsBottom - h - 5, LabelY: barsBottom + 16,
			Count: bk.count, Label: bk.label(), Runs: ui.Plural(bk.count, "run")})
	}
	return v
}
