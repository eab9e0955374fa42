package replay

import (
	"fmt"
	"strings"
	"time"
)

// chartSpec is one chart under the lanes: its title (above its band, from
// the plot's left edge), the class of its line, the value at the band's
// top, and the scale written left of the band.
type chartSpec struct {
	title string
	class string
	top   float64
	ticks []tick
}

// tick is a mark of a chart's scale: at this share of the band's height,
// this label, with a dashed line across the plot above the baseline.
type tick struct {
	at    float64
	label string
}

// chartView is a chart as its template ("chart") draws it.
type chartView struct {
	Title, Class        string
	Left, Right, ScaleX float64
	TitleY, Bottom      float64
	Ticks               []chartTick
	Points              string // the step line's, "" for none
}

// chartTick is a mark of the scale at height Y: its label, and a dashed
// line across the plot above the baseline (Grid).
type chartTick struct {
	Y, LabelY float64
	Grid      bool
	Label     string
}

// chart lays points out as a step line from 0 to spec.top in the band
// whose top is y0, under its title, with its scale at the left.
func chart(spec chartSpec, pts []point, y0 float64, x func(time.Time) float64) chartView {
	bottom := y0 + chartH
	v := chartView{Title: spec.title, Class: spec.class, Left: plotLeft, Right: plotRight, ScaleX: plotLeft - 6, TitleY: y0 - 6, Bottom: bottom}
	for _, tk := range spec.ticks {
		y := bottom - chartH*tk.at
		v.Ticks = append(v.Ticks, chartTick{Y: y, LabelY: y + 4, Grid: tk.at > 0, Label: tk.label})
	}
	if len(pts) == 0 || spec.top <= 0 {
		return v
	}
	var b strings.Builder
	prev := bottom
	for i, pt := range pts {
		y := bottom - chartH*pt.v/spec.top
		if i > 0 {
			fmt.Fprintf(&b, "%.1f,%.1f ", x(pt.at), prev)
		}
		fmt.Fprintf(&b, "%.1f,%.1f ", x(pt.at), y)
		prev = y
	}
	v.Points = strings.TrimSpace(b.String())
	return v
}
