package replay

import (
	"container/heap"
	"slices"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/ui"
)

// The picture keeps a bounded summary of the story: at most maxBars tool
// bars, maxMarks of malarun's decisions and maxPoints points per chart, so
// a run of any size draws in the same memory. What is not drawn is
// counted and said.
const (
	maxBars    = 4000
	maxMarks   = 1000
	maxPoints  = 2000
	labelRunes = 80
)

// Geometry of the SVG (its viewBox; the page scales it).
const (
	svgWidth   = 1000.0
	plotLeft   = 80.0
	plotRight  = 955.0
	laneTop    = 24.0
	laneHeight = 26.0
	chartH     = 40.0
	chartTitle = 18.0 // the row above a chart for its title
	chartGap   = 10.0 // between a chart and what is above its title
)

// shape is one thing drawn on an attempt's lane.
type shape struct {
	seq      int
	attempt  int
	from, to time.Time // a point when to is zero
	class    string    // bar, bar err, bar task, silence, wait, mark, mark bad, mark good
	label    string
}

type point struct {
	at time.Time
	v  float64
}

type picture struct {
	timed     bool
	bars      byLength // tool calls and background tasks, at most maxBars
	marks     []shape  // malarun's decisions and results, at most maxMarks
	marksRing int      // where the next decision past the budget goes
	dropped   int
	lanes     []int                // attempts, in order
	spans     map[int][2]time.Time // an attempt's start and end
	calls     map[string]shape     // tool calls waiting for their result
	tasks     map[string]shape     // background tasks running
	occ       []point              // context occupancy, as a share of the window
	cost      []point              // the run's cost
	window    int64
}

// shape keeps s for the picture. Tool bars and malarun's decisions have
// budgets of their own, so that thousands of tool calls never crowd out
// the hang, kill or result that ends a long run. Past its budget a bar
// replaces the shortest bar kept, if it is longer (the long ones are what
// the picture is for); a decision replaces the oldest of the later half
// (the first ones and the latest ones stay).
func (p *picture) shape(s shape) {
	s.label = ui.Clean(s.label, labelRunes)
	if strings.HasPrefix(s.class, "bar") {
		switch {
		case len(p.bars) < maxBars:
			heap.Push(&p.bars, s)
			return
		case s.to.Sub(s.from) > p.bars[0].to.Sub(p.bars[0].from):
			p.bars[0] = s
			heap.Fix(&p.bars, 0)
		}
		p.dropped++
		return
	}
	if len(p.marks) < maxMarks {
		p.marks = append(p.marks, s)
		return
	}
	half := maxMarks / 2
	p.marks[half+p.marksRing%(maxMarks-half)] = s
	p.marksRing++
	p.dropped++
}

// shapes is what is drawn, in story order.
func (p *picture) shapes() []shape {
	out := append(slices.Clone([]shape(p.bars)), p.marks...)
	slices.SortFunc(out, func(a, b shape) int { return a.seq - b.seq })
	return out
}

// byLength is a min-heap of bars by duration.
type byLength []shape

func (h byLength) Len() int           { return len(h) }
func (h byLength) Less(i, j int) bool { return h[i].to.Sub(h[i].from) < h[j].to.Sub(h[j].from) }
func (h byLength) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *byLength) Push(x any)        { *h = append(*h, x.(shape)) }
func (h *byLength) Pop() any {
	old := *h
	s := old[len(old)-1]
	*h = old[:len(old)-1]
	return s
}

func addPoint(ps []point, pt point) []point {
	if len(ps) >= maxPoints { // keep every other one: the line's shape stays
		half := ps[:0]
		for i := 0; i < len(ps); i += 2 {
			half = append(half, ps[i])
		}
		ps = half
	}
	return append(ps, pt)
}

// add takes what the picture needs from an item.
func (p *picture) add(it *Item) {
	if it.Time.IsZero() {
		return
	}
	if p.spans == nil {
		p.spans, p.calls, p.tasks = map[int][2]time.Time{}, map[string]shape{}, map[string]shape{}
	}
	n, at := it.Attempt, it.Time
	if n > 0 {
		sp, ok := p.spans[n]
		if !ok {
			p.lanes = append(p.lanes, n)
			sp[0] = at
		}
		sp[1] = at
		p.spans[n] = sp
	}
	if it.Window > 0 {
		p.window = it.Window
	}
	if it.Occupancy > 0 {
		w := float64(max(p.window, 200_000))
		p.occ = addPoint(p.occ, point{at, min(1, float64(it.Occupancy)/w)})
	}
	if it.RunCostUSD > 0 {
		p.cost = addPoint(p.cost, point{at, it.RunCostUSD})
	}
	ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	switch it.Kind {
	case KindToolCall:
		if len(p.calls) < maxBars {
			p.calls[it.ToolID] = shape{seq: it.Seq, attempt: n, from: at, class: "bar", label: it.Tool + ": " + firstNonEmpty(it.Summary, it.Input)}
		}
	case KindToolResult:
		if s, ok := p.calls[it.ToolID]; ok {
			delete(p.calls, it.ToolID)
			s.to = at
			if it.IsError {
				s.class = "bar err"
			}
			p.shape(s)
		}
	case event.TaskStarted:
		if len(p.tasks) < maxBars {
			p.tasks[it.Task] = shape{seq: it.Seq, attempt: n, from: at, class: "bar task", label: "background: " + it.Summary}
		}
	case event.TaskFinished:
		if s, ok := p.tasks[it.Task]; ok {
			delete(p.tasks, it.Task)
			s.to = at
			p.shape(s)
		}
	case event.HangDetected:
		p.shape(shape{seq: it.Seq, attempt: n, from: at.Add(-ms(it.SilenceMS)), to: at, class: "silence", label: decision(it)})
	case event.KillSent, event.TreeGone:
		p.shape(shape{seq: it.Seq, attempt: n, from: at, class: "mark bad", label: decision(it)})
	case event.RetryDecided:
		if it.BackoffMS > 0 {
			p.shape(shape{seq: it.Seq, attempt: n, from: at, to: at.Add(ms(it.BackoffMS)), class: "wait", label: decision(it)})
		}
	case event.LimitWait:
		p.shape(shape{seq: it.Seq, attempt: n, from: at, to: it.Until, class: "wait", label: decision(it)})
	case event.Checkpoint, event.Restart, event.APIRetry:
		p.shape(shape{seq: it.Seq, attempt: n, from: at, class: "mark", label: decision(it)})
	case KindResult:
		class := "mark good"
		if it.IsError || it.Subtype != "success" {
			class = "mark bad"
		}
		p.shape(shape{seq: it.Seq, attempt: n, from: at, class: class, label: "result " + it.Subtype})
	}
}

// pictureView is the picture as its template ("picture") draws it: a lane
// per attempt on a shared time axis, the shapes on the lanes, then the
// occupancy and cost charts on the same axis, and the legend. No lanes:
// no picture (a run recorded before malarun kept a timeline).
type pictureView struct {
	Width, Height       float64
	TickTop, TickBottom float64
	Ticks               []axisTick
	Lanes               []laneView
	Shapes              []shapeView
	Charts              []chartView
	Legend              []legendView
	Dropped             int
	MaxBars, MaxMarks   int
}

// axisTick is a round wall-clock time (UTC) on the axis, and its label.
type axisTick struct {
	X     float64
	Label string
}

// laneView is an attempt's lane.
type laneView struct {
	N                   int
	TextY               float64
	X, Y, Width, Height float64
}

// shapeView is a shape on a lane, pointing at its item (Seq); a Point is
// a mark of a fixed width. Its label is inert.
type shapeView struct {
	Class               string
	X, Y, Width, Height float64
	Point               bool
	Seq                 int
	Label               string
}

// view lays the picture out. The shapes of calls and tasks still open at
// the end (the run goes on, or its malarun died) are drawn to the last
// time seen.
func (p *picture) view() pictureView {
	if !p.timed || len(p.lanes) == 0 {
		return pictureView{}
	}
	var t0, t1 time.Time
	for _, n := range p.lanes {
		sp := p.spans[n]
		if t0.IsZero() || sp[0].Before(t0) {
			t0 = sp[0]
		}
		t1 = maxTime(t1, sp[1])
	}
	for _, s := range p.shapes() {
		t1 = maxTime(t1, s.to)
	}
	for _, open := range [](map[string]shape){p.calls, p.tasks} {
		keys := make([]string, 0, len(open))
		for k := range open {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			s := open[k]
			s.to, s.label = t1, s.label+" (no end recorded)"
			p.shape(s)
		}
	}
	span := max(t1.Sub(t0), time.Second)
	x := func(t time.Time) float64 {
		return plotLeft + (plotRight-plotLeft)*float64(t.Sub(t0))/float64(span)
	}
	lanesBottom := laneTop + laneHeight*float64(len(p.lanes))
	chartRow := chartGap + chartTitle + chartH // a chart with its title
	height := lanesBottom + 2*chartRow + 10
	v := pictureView{Width: svgWidth, Height: height, TickTop: laneTop - 4, TickBottom: height - 6,
		Dropped: p.dropped, MaxBars: maxBars, MaxMarks: maxMarks}
	// The axis: ticks at round wall-clock times (UTC), each labelled with
	// the time it stands at.
	for _, t := range axisTicks(t0, t0.Add(span)) {
		v.Ticks = append(v.Ticks, axisTick{x(t), t.UTC().Format("15:04:05")})
	}
	laneY := map[int]float64{}
	for i, n := range p.lanes {
		y := laneTop + laneHeight*float64(i)
		laneY[n] = y
		sp := p.spans[n]
		v.Lanes = append(v.Lanes, laneView{N: n, TextY: y + laneHeight/2 + 4, X: x(sp[0]), Y: y + 3,
			Width: max(1, x(sp[1])-x(sp[0])), Height: laneHeight - 6})
	}
	for _, s := range p.shapes() {
		y, ok := laneY[s.attempt]
		if !ok {
			continue
		}
		if s.to.IsZero() {
			v.Shapes = append(v.Shapes, shapeView{Class: s.class, X: x(s.from) - 1.5, Y: y + 2, Height: laneHeight - 4,
				Point: true, Seq: s.seq, Label: ui.Inert(s.label)})
			continue
		}
		top, hgt := y+6, laneHeight-12
		if s.class == "silence" || s.class == "wait" {
			top, hgt = y+3, laneHeight-6
		}
		v.Shapes = append(v.Shapes, shapeView{Class: s.class, X: x(s.from), Y: top, Width: max(1.5, x(s.to)-x(s.from)),
			Height: hgt, Seq: s.seq, Label: ui.Inert(s.label)})
	}
	top := lanesBottom + chartGap + chartTitle
	window := max(p.window, 200_000) // as add measures the share
	v.Charts = append(v.Charts, chart(chartSpec{title: "context: share of the " + ui.Tokens(window) + "-token window", class: "chart",
		top: 1, ticks: []tick{{0, "0%"}, {0.5, "50%"}, {1, "100%"}}}, p.occ, top, x))
	maxCost := 0.0
	for _, pt := range p.cost {
		maxCost = max(maxCost, pt.v)
	}
	v.Charts = append(v.Charts, chart(chartSpec{title: "cost so far", class: "chart cost", top: maxCost,
		ticks: []tick{{0, "$0"}, {1, ui.Cost(maxCost)}}}, p.cost, top+chartRow, x))
	v.Legend = p.legend()
	return v
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// axisTicks are the times from t0 to t1 at the smallest round step (1 s,
// 2 s, 5 s, 10 s, 15 s, 30 s, 1 m, ... 1 day) that gives at most six, so that
// each tick stands exactly at the whole second its label says (a tick at
// 07.9 s labelled ":07" drew bars under the wrong second: issue 34).
func axisTicks(t0, t1 time.Time) []time.Time {
	steps := [...]time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second,
		30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute,
		30 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour}
	ticks := func(step time.Duration) []time.Time {
		var out []time.Time
		first := t0.Truncate(step) // time's zero is a UTC midnight: steps land on round UTC times
		if first.Before(t0) {
			first = first.Add(step)
		}
		for t := first; !t.After(t1) && len(out) <= 6; t = t.Add(step) {
			out = append(out, t)
		}
		return out
	}
	for _, s := range steps {
		if out := ticks(s); len(out) <= 6 {
			return out
		}
	}
	return ticks(steps[len(steps)-1])
}
