package replay

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/ui"
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

// chart draws points as a step line from 0 to spec.top in the band whose
// top is y0, under its title, with its scale at the left.
func (p *picture) chart(w io.Writer, spec chartSpec, pts []point, y0 float64, x func(time.Time) float64) {
	bottom := y0 + chartH
	fmt.Fprintf(w, `<text class="chart-title" x="%.0f" y="%.1f">%s</text><line class="axis" x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f"/>`+"\n",
		plotLeft, y0-6, ui.HTMLText(spec.title), plotLeft, bottom, plotRight, bottom)
	for _, tk := range spec.ticks {
		y := bottom - chartH*tk.at
		if tk.at > 0 {
			fmt.Fprintf(w, `<line class="grid" x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f"/>`, plotLeft, y, plotRight, y)
		}
		fmt.Fprintf(w, `<text class="scale" x="%.0f" y="%.1f" text-anchor="end">%s</text>`+"\n", plotLeft-6, y+4, ui.HTMLText(tk.label))
	}
	if len(pts) == 0 || spec.top <= 0 {
		return
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
	fmt.Fprintf(w, `<polyline class="%s" points="%s"/>`+"\n", spec.class, strings.TrimSpace(b.String()))
}
