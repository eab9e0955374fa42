package fleet

import (
	"fmt"
	"strings"
	"time"
)

// The charts' scales: round steps that fit the span, from milliseconds
// (a fleet of fake runs) to days (a week of nights), so that every tick
// and every bucket of a short fleet reads differently from the next.

// roundSteps are the steps a scale may take, smallest first.
func roundSteps() []time.Duration {
	ms, s, m, h := time.Millisecond, time.Second, time.Minute, time.Hour
	return []time.Duration{ms, 2 * ms, 5 * ms, 10 * ms, 20 * ms, 50 * ms, 100 * ms, 200 * ms, 500 * ms,
		s, 2 * s, 5 * s, 10 * s, 15 * s, 30 * s, m, 2 * m, 5 * m, 10 * m, 15 * m, 30 * m,
		h, 2 * h, 3 * h, 6 * h, 12 * h, 24 * h, 48 * h, 7 * 24 * h}
}

// tick is a time on a time line's axis and its label.
type tick struct {
	at    time.Time
	label string
}

// axisTicks are the times from t0 to t1 at the smallest round step that
// gives at most most of them, each on a whole step of UTC time (a tick at
// 07.9 s labelled ":07" would stand under the wrong second), labelled as
// precisely as the step needs and no more: 22:00:05.250 for 250 ms steps,
// 22:00:05 for seconds, 22:00 for minutes and hours, Nov 27 for days, and
// the date with the time on a span that crosses days. No two labels are
// the same.
func axisTicks(t0, t1 time.Time, most int) []tick {
	t0, t1 = t0.UTC(), t1.UTC()
	steps := roundSteps()
	step := steps[len(steps)-1]
	for _, s := range steps {
		if int(t1.Sub(t0.Truncate(s))/s) < most {
			step = s
			break
		}
	}
	layout := tickLayout(step, t1.Sub(t0))
	var out []tick
	first := t0.Truncate(step) // time's zero is a UTC midnight: steps land on round UTC times
	if first.Before(t0) {
		first = first.Add(step)
	}
	for t := first; !t.After(t1) && len(out) < most; t = t.Add(step) {
		out = append(out, tick{t, t.Format(layout)})
	}
	return out
}

// tickLayout is the time layout that tells ticks step apart on a span.
func tickLayout(step, span time.Duration) string {
	day := 24 * time.Hour
	switch {
	case step >= day:
		return "Jan 2"
	case step < 10*time.Millisecond:
		return "15:04:05.000"
	case step < 100*time.Millisecond:
		return "15:04:05.00"
	case step < time.Second:
		return "15:04:05.0"
	case step < time.Minute:
		return "15:04:05"
	case span > 20*time.Hour:
		return "Jan 2 15:04"
	}
	return "15:04"
}

// bucket is a bar of the histogram: the runs that took from lo up to hi.
type bucket struct {
	lo, hi time.Duration
	count  int
	// open: the last bucket of a spread past the widest step holds every
	// run from lo up.
	open bool
}

// durationBuckets spread values over at most most buckets of one round
// width, from the round step below the shortest to the one above the
// longest: a fleet of 20-second runs gets buckets of seconds, a night of
// hours buckets of hours. All values equal: one bucket around them.
func durationBuckets(values []time.Duration, most int) []bucket {
	if len(values) == 0 {
		return nil
	}
	lo, hi := values[0], values[0]
	for _, v := range values {
		lo, hi = min(lo, max(v, 0)), max(hi, v)
	}
	lo = max(lo, 0)
	steps := roundSteps()
	width := steps[len(steps)-1]
	for _, s := range steps {
		if int(hi/s)-int(lo/s)+1 <= most {
			width = s
			break
		}
	}
	start := lo.Truncate(width)
	n := min(int((hi-start)/width)+1, most)
	out := make([]bucket, n)
	for i := range out {
		out[i] = bucket{lo: start + time.Duration(i)*width, hi: start + time.Duration(i+1)*width}
	}
	out[n-1].open = hi >= out[n-1].hi // past the widest step: the last holds the rest
	for _, v := range values {
		i := min(max(int((max(v, 0)-start)/width), 0), n-1)
		out[i].count++
	}
	return out
}

// label is a bucket's span in short words: "10s-20s", "1h30m-2h".
func (b bucket) label() string {
	if b.open {
		return "≥ " + shortDuration(b.lo)
	}
	return shortDuration(b.lo) + "–" + shortDuration(b.hi)
}

// shortDuration is a duration without its zero parts: 2h, 1m30s, 250ms.
func shortDuration(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	if d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	if d%time.Second != 0 {
		return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", d.Seconds()), "0"), ".") + "s"
	}
	var b strings.Builder
	if h := d / time.Hour; h > 0 {
		fmt.Fprintf(&b, "%dh", h)
	}
	if m := d % time.Hour / time.Minute; m > 0 {
		fmt.Fprintf(&b, "%dm", m)
	}
	if s := d % time.Minute / time.Second; s > 0 {
		fmt.Fprintf(&b, "%ds", s)
	}
	return b.String()
}
