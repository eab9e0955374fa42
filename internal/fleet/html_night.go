package fleet

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/ui"
)

// The time line's geometry, in the units of its viewBox (1000 wide, drawn
// at the page's width): the axis's labels in the band above axisH, then
// the runs. A row per run while they fit (ganttMax runs): as tall as
// ganttHeight allows, between rowMin and rowMax; its issue id to its left
// when the row is tall enough to be read (labelRow). More runs than that
// are drawn as how many were in flight, by status, over time.
const (
	nightWidth  = 1000.0
	axisH       = 24.0
	rightMargin = 10.0
	ganttMax    = 200
	ganttHeight = 720.0
	rowMin      = 3.0
	rowMax      = 18.0
	labelRow    = 11.0
	labelChars  = 24
	flightBins  = 200
	flightH     = 220.0
)

// span is one run on the time line.
type span struct {
	row        *Row
	start, end time.Time
}

// nightView is the night's runs on one time line, as its template
// ("night") draws it: a row per run (Rows), or the runs in flight over
// time (InFlight: Areas); the axis's ticks above either.
type nightView struct {
	Span          string
	Runs          int
	InFlight      bool
	Labelled      bool
	Width, Height float64
	TickTop       float64
	Ticks         []nightTick
	Rows          []nightRow
	Areas         []area
	Top           int
	ScaleX, TopY  float64
	ZeroY         float64
}

// nightTick is a tick of the axis, its label anchored so that it stays
// inside the chart.
type nightTick struct {
	X             float64
	Anchor, Label string
}

// nightRow is a run's row: its bar in its status's colour, its id to the
// left when Labelled, its numbers in the tooltip, linked to its page.
type nightRow struct {
	Href                string
	Labelled            bool
	Label               string
	LabelX, LabelY      float64
	Class               string
	X, Y, Width, Height float64
	Tip                 string
}

// area is a status's runs in flight, stacked.
type area struct{ Class, Points string }

// nightChart is the night's runs on one time line, earliest start first:
// a row per run from its start to its end (to now while it goes on), in
// its status's colour, each linked to the issue's page; or, for a night
// of more runs than rows can show, the runs in flight over time. Nil when
// no run started.
func nightChart(s *Summary, link func(string) string) *nightView {
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
	if len(spans) == 0 {
		return nil
	}
	t1 = maxTime(t1, t0.Add(time.Second)) // a night of instants still has a scale
	slices.SortStableFunc(spans, func(a, b span) int { return a.start.Compare(b.start) })
	v := &nightView{Span: ui.Inert(spanText(t0, t1)), Runs: len(spans), Width: nightWidth, TickTop: axisH - 4}
	if len(spans) > ganttMax {
		inFlight(v, spans, t0, t1)
	} else {
		gantt(v, spans, t0, t1, link)
	}
	return v
}

// gantt lays out a row per run, its issue id beside it where the row is
// tall enough.
func gantt(v *nightView, spans []span, t0, t1 time.Time, link func(string) string) {
	n := len(spans)
	rowH := min(max(ganttHeight/float64(n), rowMin), rowMax)
	v.Labelled = rowH >= labelRow
	left := 0.0
	if v.Labelled {
		longest := 0
		for _, sp := range spans {
			longest = max(longest, len([]rune(rowLabel(sp.row.Issue))))
		}
		left = 12 + 6.4*float64(longest) // a label is at most labelChars, at 11 units a character's width is under 6.4
	}
	plotL, plotR := left+4, nightWidth-rightMargin
	x := func(t time.Time) float64 { return plotL + (plotR-plotL)*float64(t.Sub(t0))/float64(t1.Sub(t0)) }
	v.Height = axisH + rowH*float64(n) + 6
	v.Ticks = axis(t0, t1, plotL, plotR, x)
	for i, sp := range spans {
		y := axisH + rowH*float64(i)
		r := sp.row
		v.Rows = append(v.Rows, nightRow{Href: link(r.Issue), Labelled: v.Labelled, Label: ui.Inert(rowLabel(r.Issue)),
			LabelX: left, LabelY: y + rowH/2 + 4, Class: statusClass(r.Status), X: x(sp.start), Y: y + rowH*0.15,
			Width: max(x(sp.end)-x(sp.start), 1.5), Height: max(rowH*0.7, 1),
			Tip: ui.Inert(fmt.Sprintf("%s: %s, %s, %s", r.Issue, r.Status, msText(float64(r.WallMS)), ui.Cost(r.CostUSD)))})
	}
}

// axis is the ticks of t0 to t1 and their labels, each kept inside the
// chart: one near an edge is anchored at its end instead of its middle.
func axis(t0, t1 time.Time, plotL, plotR float64, x func(time.Time) float64) []nightTick {
	var out []nightTick
	most := max(2, int((plotR-plotL)/120))
	for _, tk := range axisTicks(t0, t1, most) {
		tx := x(tk.at)
		half := 3.3 * float64(len(tk.label)) // half a label's width, at most
		anchor := "middle"
		switch {
		case tx-half < 2:
			anchor = "start"
		case tx+half > nightWidth-2:
			anchor = "end"
		}
		out = append(out, nightTick{X: tx, Anchor: anchor, Label: tk.label})
	}
	return out
}

// inFlight lays out how many runs were going on over the night, stacked
// by the status each ended in, in flightBins steps.
func inFlight(v *nightView, spans []span, t0, t1 time.Time) {
	plotL, plotR := 40.0, nightWidth-rightMargin
	bin := t1.Sub(t0) / flightBins
	binOf := func(t time.Time) int { return min(max(int(t.Sub(t0)/max(bin, 1)), 0), flightBins-1) }
	// A difference array per status: +1 where a run starts, -1 after it ends.
	diff := map[string][]int{}
	for _, sp := range spans {
		st := statusClass(sp.row.Status)
		if diff[st] == nil {
			diff[st] = make([]int, flightBins+1)
		}
		diff[st][binOf(sp.start)]++
		diff[st][binOf(sp.end)+1]--
	}
	var order []string
	for _, st := range statusOrder() {
		if diff["s-"+st] != nil && !slices.Contains(order, "s-"+st) {
			order = append(order, "s-"+st)
		}
	}
	stack := make([]int, flightBins)
	levels := map[string][]int{}
	for _, st := range order {
		run := 0
		lv := make([]int, flightBins)
		for i := range flightBins {
			run += diff[st][i]
			stack[i] += run
			lv[i] = stack[i]
		}
		levels[st] = lv
	}
	top := max(slices.Max(stack), 1)
	v.InFlight, v.Height = true, axisH+flightH+6
	x := func(t time.Time) float64 { return plotL + (plotR-plotL)*float64(t.Sub(t0))/float64(t1.Sub(t0)) }
	y := func(n int) float64 { return axisH + flightH - flightH*float64(n)/float64(top) }
	v.Ticks = axis(t0, t1, plotL, plotR, x)
	v.Top, v.ScaleX, v.TopY, v.ZeroY = top, plotL-4, axisH+10, axisH+flightH
	// Highest first: each status's area runs from its level down to the
	// axis, and the ones below cover their share.
	for i := len(order) - 1; i >= 0; i-- {
		lv := levels[order[i]]
		var pts strings.Builder
		fmt.Fprintf(&pts, "%.1f,%.1f", plotL, y(0))
		for k := range flightBins {
			xl, xr := x(t0.Add(bin*time.Duration(k))), x(t0.Add(bin*time.Duration(k+1)))
			fmt.Fprintf(&pts, " %.1f,%.1f %.1f,%.1f", xl, y(lv[k]), xr, y(lv[k]))
		}
		fmt.Fprintf(&pts, " %.1f,%.1f", plotR, y(0))
		v.Areas = append(v.Areas, area{order[i], pts.String()})
	}
}

// rowLabel is an issue id as a row's label: at most labelChars.
func rowLabel(issue string) string {
	if r := []rune(issue); len(r) > labelChars {
		return string(r[:labelChars-1]) + "…"
	}
	return issue
}

// spanText is the time line's span: to the second when it is short.
func spanText(t0, t1 time.Time) string {
	layout := "2006-01-02 15:04 UTC"
	if t1.Sub(t0) < time.Hour {
		layout = "2006-01-02 15:04:05 UTC"
	}
	return fmt.Sprintf("%s to %s (%s)", t0.UTC().Format(layout), t1.UTC().Format(layout), shortDuration(t1.Sub(t0).Round(time.Millisecond)))
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
