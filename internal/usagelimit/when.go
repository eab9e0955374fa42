package usagelimit

import (
	"errors"
	"strings"
	"time"
)

// when is a reset as the CLI prints it: a wall-clock time to the minute,
// maybe a date, maybe a zone. The CLI builds it with JavaScript's
// toLocaleString("en-US", {hour12: true, timeZone}) and lower-cases the
// AM/PM: "4:05pm", "4pm" (minutes left out when zero), "Nov 28, 4pm"
// (more than 24 hours away), "Jan 3, 2027, 4pm" (another year), each
// followed by " (<IANA zone>)" when the CLI names the zone.
type when struct {
	hasDate      bool
	year         int // 0: not printed, so this year or the next
	month        time.Month
	day          int
	hour, minute int    // 24-hour clock
	zone         string // "" when the text names none
	n            int    // bytes of the text this reading used
}

// parseWhen reads a reset at the start of s (after "resets ").
func parseWhen(s string) (when, bool) {
	var w when
	p := parser{s: s}
	p.literalFold("at ")
	if m, ok := p.month(); ok {
		w.hasDate, w.month = true, m
		if !p.literal(" ") {
			return when{}, false
		}
		d, ok := p.number(1, 2)
		if !ok || d < 1 || d > 31 {
			return when{}, false
		}
		w.day = d
		p.dateTimeSeparator()
		if y, ok := p.number(4, 4); ok {
			w.year = y
			p.dateTimeSeparator()
		}
	}
	h, ok := p.number(1, 2)
	if !ok || h < 1 || h > 12 {
		return when{}, false
	}
	if p.literal(":") {
		if w.minute, ok = p.number(2, 2); !ok || w.minute > 59 {
			return when{}, false
		}
	}
	p.space()
	switch {
	case p.literalFold("am"):
		w.hour = h % 12 // 12am is midnight
	case p.literalFold("pm"):
		w.hour = h%12 + 12 // 12pm is noon
	default:
		return when{}, false
	}
	if p.i < len(s) && isLetter(s[p.i]) {
		return when{}, false // "4pmx" is some other word
	}
	w.n = p.i
	if z, ok := p.zone(); ok {
		w.zone, w.n = z, p.i
	}
	return w, true
}

// resolve turns the wall-clock reading into an instant in loc: the
// earliest occurrence at or after now-pastSlack, plus a minute for the
// seconds the CLI cut off, and never before now. It fails when no
// occurrence lies within MaxAhead.
func (w when) resolve(now time.Time, loc *time.Location) (time.Time, bool) {
	earliest := now.Add(-pastSlack)
	var best time.Time
	consider := func(y int, m time.Month, d int) {
		for _, t := range wallInstants(y, m, d, w.hour, w.minute, loc) {
			if !t.Before(earliest) && (best.IsZero() || t.Before(best)) {
				best = t
			}
		}
	}
	local := now.In(loc)
	switch {
	case w.hasDate && w.year != 0:
		consider(w.year, w.month, w.day)
	case w.hasDate:
		// The CLI prints the year only when it is not the current one, but
		// "now" here is a moment after the CLI's now: try around it.
		for y := local.Year() - 1; y <= local.Year()+1; y++ {
			consider(y, w.month, w.day)
		}
	default:
		// No date: the CLI printed a reset less than 24 hours away. From
		// yesterday (a reset a few minutes before midnight, read after it)
		// to the day after tomorrow (tomorrow's time may not exist: DST).
		for k := -1; k <= 2; k++ {
			// Noon, so that adding days never lands in a DST gap.
			d := time.Date(local.Year(), local.Month(), local.Day()+k, 12, 0, 0, 0, loc)
			consider(d.Year(), d.Month(), d.Day())
		}
	}
	if best.IsZero() {
		return time.Time{}, false
	}
	at := best.Add(time.Minute)
	if at.Before(now) {
		at = now
	}
	if at.After(now.Add(MaxAhead)) {
		return time.Time{}, false
	}
	return at, true
}

// wallInstants are the instants whose wall clock in loc reads y-m-d h:min:
// none on a day the clocks skip that time (spring forward), two when they
// pass it twice (fall back), one otherwise. time.Date alone picks one of
// the two without saying which, and normalises a skipped time to another.
func wallInstants(y int, m time.Month, d, h, minute int, loc *time.Location) []time.Time {
	t := time.Date(y, m, d, h, minute, 0, 0, loc)
	var out []time.Time
	for _, delta := range [...]time.Duration{-2 * time.Hour, -time.Hour, -30 * time.Minute, 0, 30 * time.Minute, time.Hour, 2 * time.Hour} {
		c := t.Add(delta)
		cy, cm, cd := c.Date()
		ch, cmin, cs := c.Clock()
		if cy == y && cm == m && cd == d && ch == h && cmin == minute && cs == 0 && !containsTime(out, c) {
			out = append(out, c)
		}
	}
	return out
}

func containsTime(ts []time.Time, t time.Time) bool {
	for _, x := range ts {
		if x.Equal(t) {
			return true
		}
	}
	return false
}

// loadZone resolves a zone name from the CLI's text. The name was checked
// by parser.zone (letters, digits, '_', '+', '-', '/'), and LoadLocation
// refuses ".." and absolute paths, so text cannot point it at a file.
func loadZone(name string) (*time.Location, error) {
	if name == "Local" {
		return nil, errors.New("the CLI never prints Local; it is not a zone")
	}
	return time.LoadLocation(name)
}

// parser reads tokens from the front of s; a failed read consumes nothing.
type parser struct {
	s string
	i int
}

func (p *parser) literal(lit string) bool {
	if strings.HasPrefix(p.s[p.i:], lit) {
		p.i += len(lit)
		return true
	}
	return false
}

func (p *parser) literalFold(lit string) bool {
	if len(p.s)-p.i >= len(lit) && equalFoldASCII(p.s[p.i:p.i+len(lit)], lit) {
		p.i += len(lit)
		return true
	}
	return false
}

// number reads lo to hi ASCII digits, and fails when more follow.
func (p *parser) number(lo, hi int) (int, bool) {
	v, ok := p.number64(lo, hi)
	return int(v), ok
}

// number64 is number for up to 18 digits, whatever the size of int.
func (p *parser) number64(lo, hi int) (int64, bool) {
	n, v := 0, int64(0)
	for n < hi && p.i+n < len(p.s) && isDigit(p.s[p.i+n]) {
		v = v*10 + int64(p.s[p.i+n]-'0')
		n++
	}
	if n < lo || p.i+n < len(p.s) && isDigit(p.s[p.i+n]) {
		return 0, false
	}
	p.i += n
	return v, true
}

// space skips the one space ICU may put before AM/PM: a plain space, a
// narrow no-break space (U+202F, newer ICU) or a no-break space (U+00A0).
func (p *parser) space() {
	_ = p.literal(" ") || p.literal("\u202f") || p.literal("\u00a0")
}

// dateTimeSeparator skips what ICU puts between a date and a time, or
// between a day and a year: ", ", " at " or ", at ".
func (p *parser) dateTimeSeparator() {
	p.literal(",")
	p.space()
	p.literalFold("at ")
}

const monthNames = "janfebmaraprmayjunjulaugsepoctnovdec"

// month reads a three-letter English month abbreviation.
func (p *parser) month() (time.Month, bool) {
	if len(p.s)-p.i < 3 {
		return 0, false
	}
	for m := 0; m < 12; m++ {
		if equalFoldASCII(p.s[p.i:p.i+3], monthNames[3*m:3*m+3]) {
			p.i += 3
			return time.Month(m + 1), true
		}
	}
	return 0, false
}

// zone reads " (<zone>)" where zone looks like an IANA name.
func (p *parser) zone() (string, bool) {
	start := p.i
	if !p.literal(" (") {
		return "", false
	}
	j := p.i
	for j < len(p.s) && j-p.i <= 64 && isZoneByte(p.s[j]) {
		j++
	}
	if j == p.i || j-p.i > 64 || j >= len(p.s) || p.s[j] != ')' {
		p.i = start
		return "", false
	}
	z := p.s[p.i:j]
	p.i = j + 1
	return z, true
}

func isZoneByte(c byte) bool {
	return isLetter(c) || isDigit(c) || c == '_' || c == '+' || c == '-' || c == '/'
}

func isLetter(c byte) bool { return 'a' <= lowerASCII(c) && lowerASCII(c) <= 'z' }
