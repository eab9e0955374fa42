package replay

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/testing/headless"
)

// The HTML page in a real browser (Debian's chromium): it renders with no
// console error (a blocked planted script would be one) and no request but
// its own file, the hostile text's <script>, onerror and javascript: do
// nothing, the picture has a lane per attempt, and a click on a bar shows
// its item in the story.
func TestHTMLInABrowser(t *testing.T) {
	h, items, s := hostileItems(t)
	var out bytes.Buffer
	render(t, NewHTML(&out), h, items, s)
	file := filepath.Join(t.TempDir(), "show.html")
	if err := os.WriteFile(file, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, p := headless.OpenFor(t, "file://"+file, time.Minute)
	var facts struct {
		Pwned  string
		Lanes  int
		Images int
		Bars   []string
	}
	if err := p.Eval(ctx, `({pwned: typeof window.pwned, lanes: document.querySelectorAll("svg g.lane-group").length,
		images: document.images.length, bars: [...document.querySelectorAll("svg rect.bar[data-seq]")].map(r => r.dataset.seq)})`, &facts); err != nil {
		t.Fatal(err)
	}
	if facts.Pwned != "undefined" || facts.Images != 0 {
		t.Errorf("the hostile text ran or made an element: window.pwned %s, %d images", facts.Pwned, facts.Images)
	}
	if facts.Lanes != 2 || len(facts.Bars) != 1 {
		t.Errorf("%d lanes (want 2, one per attempt), bars %q (want the one tool call)", facts.Lanes, facts.Bars)
	}
	if errs := p.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
	if reqs := p.Requests(); !slices.Equal(reqs, []string{"file://" + file}) {
		t.Errorf("requests %q, want the page's own file only", reqs)
	}
	if len(facts.Bars) == 0 {
		return
	}
	if err := p.Click(ctx, `svg rect.bar[data-seq]`); err != nil {
		t.Fatal(err)
	}
	var selected string
	if err := p.Eval(ctx, `document.querySelector(".item.sel")?.id ?? ""`, &selected); err != nil || selected != "item-"+facts.Bars[0] {
		t.Errorf("after a click on the bar of item %s, the story shows %q (%v)", facts.Bars[0], selected, err)
	}
}

// richRun is a run with one of everything the picture draws: tool calls
// (one failed), a background task, a hang's silence and the kill, a
// backoff, a checkpoint, claude's API retry, results, the context filling
// and the cost growing.
func richRun() (Header, []Item, Summary) {
	t0 := time.Date(2026, 11, 27, 22, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	var items []Item
	add := func(it Item) { it.Seq = len(items) + 1; items = append(items, it) }
	text := func(s, attempt int, occ int64) {
		add(Item{Kind: KindText, Attempt: attempt, Time: at(s), Text: "working", Occupancy: occ, Window: 200_000})
	}
	call := func(from, to, attempt int, id, tool, summary string, failed bool) {
		add(Item{Kind: KindToolCall, Attempt: attempt, Time: at(from), Tool: tool, ToolID: id, Summary: summary})
		add(Item{Kind: KindToolResult, Attempt: attempt, Time: at(to), Tool: tool, ToolID: id, IsError: failed})
	}
	add(Item{Kind: event.RunStarted, Time: at(0)})
	add(Item{Kind: event.AttemptStarted, Attempt: 1, Time: at(0), Info: &Attempt{N: 1, Began: BeganNew}})
	text(3, 1, 30_000)
	call(4, 40, 1, "t1", "Bash", "go build ./...", false)
	text(41, 1, 52_000)
	call(42, 45, 1, "t2", "Read", "/src/missing.go", true)
	add(Item{Kind: event.TaskStarted, Attempt: 1, Time: at(46), Task: "bg1", Summary: "make test"})
	text(50, 1, 80_000)
	add(Item{Kind: event.APIRetry, Attempt: 1, Time: at(60), Reason: "529 overloaded", BackoffMS: 2000})
	add(Item{Kind: KindResult, Attempt: 1, Time: at(90), Subtype: "success", CostUSD: 0.31, RunCostUSD: 0.31})
	add(Item{Kind: event.TaskFinished, Attempt: 1, Time: at(150), Task: "bg1", Summary: "make test"})
	call(152, 160, 1, "t3", "Bash", "go test ./...", false)
	add(Item{Kind: event.HangDetected, Attempt: 1, Time: at(400), SilenceMS: 240_000, Doing: "while writing text"})
	add(Item{Kind: event.KillSent, Attempt: 1, Time: at(400), Reason: "hang", GraceMS: 10_000})
	add(Item{Kind: event.TreeGone, Attempt: 1, Time: at(401), Termed: 2, TookMS: 900})
	add(Item{Kind: event.AttemptEnded, Attempt: 1, Time: at(401), Info: &Attempt{N: 1, Outcome: "hang", CostUSD: 0.31}})
	add(Item{Kind: event.RetryDecided, Attempt: 1, Time: at(401), Action: "resume", BackoffMS: 15_000})
	add(Item{Kind: event.AttemptStarted, Attempt: 2, Time: at(416), Info: &Attempt{N: 2, Began: BeganResume}})
	text(420, 2, 120_000)
	call(421, 470, 2, "t4", "Bash", "go test ./... -run TestX", false)
	text(472, 2, 182_000)
	add(Item{Kind: event.Checkpoint, Attempt: 2, Time: at(473), Occupancy: 182_000, Window: 200_000})
	add(Item{Kind: KindResult, Attempt: 2, Time: at(540), Subtype: "success", CostUSD: 0.52, RunCostUSD: 0.83})
	add(Item{Kind: event.AttemptEnded, Attempt: 2, Time: at(541), Info: &Attempt{N: 2, Outcome: "success", CostUSD: 0.52}})
	add(Item{Kind: event.RunFinished, Time: at(541), Outcome: "success", RunCostUSD: 0.83})
	zero := 0
	return Header{Issue: "issue-49", RunID: "20261127T220000Z-abcdef", Timed: true},
		items, Summary{Outcome: "success", ExitCode: &zero, Started: at(0), Ended: at(541), CostUSD: 0.83,
			Attempts: []Attempt{{N: 1}, {N: 2}}, ToolCalls: 4, Results: 2, Items: len(items)}
}

// The time line has a legend for what it draws (each swatch the colour of
// the shapes it names), and the context line a scale; no label of the
// picture is cut or overlaps another. A screenshot goes to the tests'
// artifacts (headless.ArtifactDir) for a person to look at (issue 49).
func TestPictureLegendAndScaleInABrowser(t *testing.T) {
	h, items, s := richRun()
	var out bytes.Buffer
	render(t, NewHTML(&out), h, items, s)
	file := filepath.Join(t.TempDir(), "show.html")
	if err := os.WriteFile(file, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, p := headless.OpenFor(t, "file://"+file, time.Minute)
	headless.SaveScreenshot(ctx, t, p, 1200, 700, "picture")
	headless.SaveScreenshot(ctx, t, p, 640, 900, "narrow")
	if errs := p.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}

	// Each entry of the legend, its swatch's colours, and those of a shape
	// of its class on the time line.
	var entries []struct {
		Class, Text                 string
		Shapes                      int
		Fill, Stroke, Bg, Border    string
		Image                       string
		ShapeOpacity, SwatchOpacity string
	}
	if err := p.Eval(ctx, `[...document.querySelectorAll(".legend li")].map(li => {
		const sw = li.querySelector(".sw");
		const cls = [...sw.classList].find(c => c.startsWith("sw-")).slice(3).split("-");
		const shapes = [...document.querySelectorAll("svg rect." + cls.join("."))].filter(r => r.classList.length === cls.length);
		const s = shapes.length ? getComputedStyle(shapes[0]) : {}, k = getComputedStyle(sw);
		return {class: cls.join(" "), text: li.textContent, shapes: shapes.length, fill: s.fill || "", stroke: s.stroke || "",
			bg: k.backgroundColor, border: k.borderTopColor, image: k.backgroundImage,
			shapeOpacity: s.opacity || "", swatchOpacity: k.opacity};
	})`, &entries); err != nil {
		t.Fatal(err)
	}
	classes := map[string]bool{}
	for _, e := range entries {
		classes[e.Class] = true
		switch {
		case e.Shapes == 0:
			t.Errorf("the legend names %q (%s), which is not drawn", e.Class, e.Text)
		case e.Class == "lane":
			if e.Border != e.Stroke {
				t.Errorf("%s: swatch border %s, the lanes' outline %s", e.Text, e.Border, e.Stroke)
			}
		case e.Class == "silence":
			if e.Border != e.Stroke || !strings.Contains(e.Image, "repeating-linear-gradient") {
				t.Errorf("%s: swatch %s %s, the hang's hatching stroke %s", e.Text, e.Border, e.Image, e.Stroke)
			}
		default:
			if e.Bg != e.Fill || e.SwatchOpacity != e.ShapeOpacity {
				t.Errorf("%s: swatch %s (opacity %s), its shapes %s (opacity %s)", e.Text, e.Bg, e.SwatchOpacity, e.Fill, e.ShapeOpacity)
			}
		}
	}
	for _, c := range []string{"lane", "bar", "bar err", "bar task", "silence", "wait", "mark", "mark bad", "mark good"} {
		if !classes[c] {
			t.Errorf("the legend lacks %q: %+v", c, entries)
		}
	}

	// The context line's scale, and no text of the picture cut by its
	// edges or over another.
	var pic struct {
		Scale, Titles []string
		Boxes         []struct{ X, Y, W, H float64 }
		Width, Height float64
		LegendOut     int
	}
	if err := p.Eval(ctx, `(() => {
		const svg = document.querySelector("svg"), vb = svg.viewBox.baseVal;
		const texts = [...svg.querySelectorAll("text")];
		const pic = document.querySelector("#picture").getBoundingClientRect();
		return {scale: [...svg.querySelectorAll("text.scale")].map(t => t.textContent),
			titles: [...svg.querySelectorAll("text.chart-title")].map(t => t.textContent),
			boxes: texts.map(t => { const b = t.getBBox(); return {x: b.x, y: b.y, w: b.width, h: b.height}; }),
			width: vb.width, height: vb.height,
			legendOut: [...document.querySelectorAll(".legend li")].filter(li => { const r = li.getBoundingClientRect();
				return r.left < pic.left || r.right > pic.right; }).length};
	})()`, &pic); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pic.Scale[:3], []string{"0%", "50%", "100%"}) || len(pic.Titles) != 2 || !strings.Contains(pic.Titles[0], "200k-token window") {
		t.Errorf("the context line's scale %q, titles %q", pic.Scale, pic.Titles)
	}
	for i, a := range pic.Boxes {
		if a.X < 0 || a.Y < 0 || a.X+a.W > pic.Width || a.Y+a.H > pic.Height {
			t.Errorf("text %d (%+v) is cut by the picture's edge (%gx%g)", i, a, pic.Width, pic.Height)
		}
		for j, b := range pic.Boxes[i+1:] {
			if a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H {
				t.Errorf("texts %d (%+v) and %d (%+v) overlap", i, a, i+1+j, b)
			}
		}
	}
	if pic.LegendOut > 0 {
		t.Errorf("%d legend entries stand out of the picture", pic.LegendOut)
	}
}
