package replay

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

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
