package ui

import (
	"fmt"
	"strings"
	"time"
)

// ShortSession is the first 8 characters of a session id, as people quote
// it. Ids are UUIDs, but one read back from a record or the CLI could be
// anything: it is cleaned (see Clean).
func ShortSession(id string) string {
	if len(id) > 8 {
		id = id[:8]
	}
	return Clean(id, 0)
}

// Tokens renders a token count compactly: 999, 12.3k, 200k, 1M, 1.5M.
func Tokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/1e3)) + "k"
	default:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/1e6)) + "M"
	}
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

// Occupancy renders context occupancy: "63% of 200k", or "12.3k tokens"
// while the window is not known.
func Occupancy(occ, window int64) string {
	if window <= 0 {
		return Tokens(occ) + " tokens"
	}
	return fmt.Sprintf("%d%% of %s", occ*100/window, Tokens(window))
}

// Cost renders dollars: four decimals below $1 (runs often cost cents), two above.
func Cost(usd float64) string {
	if usd < 1 {
		return fmt.Sprintf("$%.4f", usd)
	}
	return fmt.Sprintf("$%.2f", usd)
}

// Duration renders a duration to the second ("4m12s"), or to the
// millisecond under a second.
func Duration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// fit cuts s to at most width terminal columns, with an ellipsis when cut.
// s must be clean (see Clean): every rune counts as one column, or two for
// the East Asian wide ranges.
func fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if Width(s) <= width {
		return s
	}
	var b strings.Builder
	cols := 0
	for _, r := range s {
		w := runeWidth(r)
		if cols+w > width-1 {
			break
		}
		b.WriteRune(r)
		cols += w
	}
	return b.String() + "…"
}

// Width is the number of terminal columns s takes.
func Width(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

// runeWidth is a rune's width in columns: 2 for the common wide ranges
// (CJK, Hangul, full-width forms, emoji), else 1. Good enough to keep a
// status line from wrapping; exactness is not needed.
func runeWidth(r rune) int {
	switch {
	case r >= 0x1100 && r <= 0x115F,
		r >= 0x2E80 && r <= 0xA4CF,
		r >= 0xAC00 && r <= 0xD7A3,
		r >= 0xF900 && r <= 0xFAFF,
		r >= 0xFE30 && r <= 0xFE4F,
		r >= 0xFF00 && r <= 0xFF60,
		r >= 0xFFE0 && r <= 0xFFE6,
		r >= 0x1F300 && r <= 0x1FAFF,
		r >= 0x20000 && r <= 0x3FFFD:
		return 2
	}
	return 1
}
