package fleet

import (
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/testing/statesynth"
)

// TestHostileStateDirsStayBounded: issue 49's hostile state directories,
// scaled down for the unit tests (1,000 issues with ten 1 MB reasons, a
// timeline of 6,000 distinct phases; the full size, 20,000 issues with
// ten 10 MB reasons and 300,000 phases, is BenchmarkSummaryHostile in
// cmd/malarun: make bench-summary). Before the bounds, the phases alone
// made the Markdown over 1 MiB here (14 MB at full size). Each form stays under its bound, the phases are counted under at
// most phasesMax names, and every reason is cut.
func TestHostileStateDirsStayBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("!!! SKIPPING TestHostileStateDirsStayBounded under -short (make check): a 1,000-issue hostile state dir, 9 s under -race; make test runs it !!!")
	}
	dir := t.TempDir()
	if err := statesynth.HostileStateDir(dir, statesynth.Hostile{Issues: 1000, BigReasons: 10, ReasonBytes: 1 << 20, Phases: 6000}); err != nil {
		t.Fatal(err)
	}
	sc, err := Scan(dir, Options{ValidID: validID, Now: nightNow})
	if err != nil {
		t.Fatal(err)
	}
	s := Summarize(dir, sc, time.Time{}, nightNow)
	if s.Rescues.Hangs != 6000 || len(s.Rescues.HangsByPhase) > phasesMax || s.Rescues.HangsByPhase[otherPhase] < 6000-phasesMax {
		t.Errorf("%d hangs under %d phase names (other: %d); want all 6,000 under at most %d", s.Rescues.Hangs, len(s.Rescues.HangsByPhase),
			s.Rescues.HangsByPhase[otherPhase], phasesMax)
	}
	for phase := range s.Rescues.HangsByPhase {
		if len(phase) > wordMax {
			t.Errorf("a phase name of %d bytes, over %d: %.60q", len(phase), wordMax, phase)
		}
	}
	for _, r := range s.Rows {
		if len(r.Reason) > reasonMax {
			t.Fatalf("%s's reason is %d bytes, over %d", r.Issue, len(r.Reason), reasonMax)
		}
	}
	link := func(issue string) string { return "issues/" + issue + ".html" }
	for _, form := range []struct {
		name  string
		bound int
		write func(*countingWriter) error
	}{
		{"text", textBound, func(w *countingWriter) error { return WriteText(w, &s) }},
		{"md", mdBound, func(w *countingWriter) error { return WriteMarkdown(w, &s) }},
		{"json", jsonBound, func(w *countingWriter) error { return WriteJSON(w, &s, 1) }},
		{"html index", htmlBound, func(w *countingWriter) error { return WriteHTML(w, &s, link) }},
	} {
		var c countingWriter
		if err := form.write(&c); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes", form.name, c.n)
		if c.n > form.bound {
			t.Errorf("%s: %d bytes, over its bound of %d", form.name, c.n, form.bound)
		}
	}
	var text strings.Builder
	WriteText(&text, &s)
	if !strings.Contains(text.String(), "in other 5977, 00000000") {
		t.Errorf("the text form does not count the other phases' hangs as one:\n%.600s", text.String())
	}
}
