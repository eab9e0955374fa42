package replay

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/event"
)

// A long run: thousands of short tool calls, one long one among them, and
// at the end the hang and the kill that ended it. The picture keeps the
// long call and malarun's decisions whatever the number of short calls.
func TestPictureKeepsTheLongCallsAndTheEndOfALongRun(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	p := &picture{timed: true}
	seq := 0
	next := func(it Item) *Item { seq++; it.Seq = seq; it.Attempt = 1; return &it }
	at := t0
	call := func(id string, d time.Duration) {
		p.add(next(Item{Kind: KindToolCall, ToolID: id, Tool: "Bash", Time: at}))
		at = at.Add(d)
		p.add(next(Item{Kind: KindToolResult, ToolID: id, Time: at}))
	}
	for i := range 3 * maxBars {
		if i == maxBars/2 {
			call("long-one", 10*time.Minute)
			continue
		}
		call("short-"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+time.Duration(i).String(), time.Second)
	}
	p.add(next(Item{Kind: event.HangDetected, Time: at.Add(5 * time.Minute), SilenceMS: 300_000}))
	p.add(next(Item{Kind: event.KillSent, Time: at.Add(5*time.Minute + time.Second)}))

	if len(p.bars) != maxBars {
		t.Fatalf("%d bars kept, want the budget %d", len(p.bars), maxBars)
	}
	var long, silence, kill bool
	for _, s := range p.shapes() {
		long = long || s.to.Sub(s.from) == 10*time.Minute
		silence = silence || s.class == "silence"
		kill = kill || s.class == "mark bad"
	}
	if !long || !silence || !kill {
		t.Errorf("kept: the 10-minute call %v, the hang's silence %v, the kill %v; want all three", long, silence, kill)
	}
	if page := drawn(t, p); !strings.Contains(page, `class="silence"`) || !strings.Contains(page, "more items are not drawn") {
		t.Errorf("the drawing lacks the silence or the note on what is not drawn")
	}
}

// Past its budget, the decisions keep the first half and the latest ones.
func TestPictureKeepsTheFirstAndLatestDecisions(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	p := &picture{timed: true}
	for i := range 3 * maxMarks {
		p.add(&Item{Seq: i + 1, Attempt: 1, Kind: event.APIRetry, Time: t0.Add(time.Duration(i) * time.Second)})
	}
	got := p.shapes()
	if len(got) != maxMarks || got[0].seq != 1 || got[len(got)-1].seq != 3*maxMarks {
		t.Errorf("%d decisions kept, first %d, last %d; want %d, 1 and %d", len(got), got[0].seq, got[len(got)-1].seq, maxMarks, 3*maxMarks)
	}
}

// The axis's ticks stand at round times, at most six, within the span,
// each at the whole second its label shows.
func TestAxisTicks(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse("15:04:05.000", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		from, to string
		want     []string
	}{
		{"12:00:07.900", "12:00:19.100", []string{"12:00:08", "12:00:10", "12:00:12", "12:00:14", "12:00:16", "12:00:18"}},
		{"12:00:00.000", "12:00:01.000", []string{"12:00:00", "12:00:01"}},
		{"12:03:10.500", "12:09:50.000", []string{"12:04:00", "12:05:00", "12:06:00", "12:07:00", "12:08:00", "12:09:00"}},
		{"09:58:00.000", "11:30:00.000", []string{"10:00:00", "10:30:00", "11:00:00", "11:30:00"}},
	} {
		var got []string
		for _, tk := range axisTicks(at(tc.from), at(tc.to)) {
			if tk.Before(at(tc.from)) || tk.After(at(tc.to)) || tk.Nanosecond() != 0 {
				t.Errorf("%s-%s: tick %v outside the span or not on a second", tc.from, tc.to, tk)
			}
			got = append(got, tk.Format("15:04:05"))
		}
		if len(got) > 6 || len(got) < 2 {
			t.Errorf("%s-%s: %d ticks %v", tc.from, tc.to, len(got), got)
		}
		if len(tc.want) > 0 && !slices.Equal(got, tc.want) {
			t.Errorf("%s-%s: ticks %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
}

// The legend names the kinds of shape drawn and only those; the context
// chart has its scale and names the window.
func TestPictureLegendListsWhatIsDrawn(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	p := &picture{timed: true}
	p.add(&Item{Seq: 1, Attempt: 1, Kind: KindToolCall, ToolID: "a", Tool: "Bash", Time: t0})
	p.add(&Item{Seq: 2, Attempt: 1, Kind: KindToolResult, ToolID: "a", Time: t0.Add(time.Minute)})
	p.add(&Item{Seq: 3, Attempt: 1, Kind: KindText, Time: t0.Add(time.Minute), Occupancy: 50_000, Window: 400_000})
	page := drawn(t, p)
	for _, want := range []string{`class="sw sw-lane"`, `class="sw sw-bar"`, ">0%<", ">50%<", ">100%<", "400k-token window"} {
		if !strings.Contains(page, want) {
			t.Errorf("the picture lacks %s", want)
		}
	}
	for _, absent := range []string{"sw-bar-err", "sw-silence", "sw-wait", "sw-mark"} {
		if strings.Contains(page, absent) {
			t.Errorf("the legend names %s, which is not drawn", absent)
		}
	}
}

// drawn is the picture as the page draws it.
func drawn(t *testing.T, p *picture) string {
	t.Helper()
	var b bytes.Buffer
	if err := NewHTMLPages().t.ExecuteTemplate(&b, "picture", p.view()); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
