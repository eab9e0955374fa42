package usagelimit

import (
	"strings"
	"time"
)

// Bounds on a reset read from text. The CLI prints a reset without a date
// only when it is less than 24 hours away, and the longest window it
// knows is a week; anything outside these bounds is a misreading.
const (
	// pastSlack: a reset up to this long ago is taken as "now" (the limit
	// has just reset, or the text was printed a moment before we read it),
	// not as the same time tomorrow.
	pastSlack = 5 * time.Minute
	// MaxAhead: a reset further away than this is not trusted.
	MaxAhead = 8 * 24 * time.Hour
)

// FromText reads the limit from the text of the CLI's result line (or its
// synthetic assistant message), in the forms the CLI prints:
//
//	You've hit your 5-hour limit · resets 4:57pm (UTC)
//	You've hit your limit · resets 2am (Europe/Paris)
//	You've hit your weekly limit · resets Nov 28, 4pm (Europe/Paris) · progress saved
//	... resets 12am                                (no zone: the CLI's local zone, local)
//	Claude AI usage limit reached|1749924000       (unix seconds)
//
// A time without seconds is rounded up to the next minute, since the CLI
// cuts the seconds off. A time without a date is its next occurrence from
// now (up to pastSlack ago counts as now). Anything else gives a limit with
// an unknown reset. The result's RetryAt is zero or within [now, now+MaxAhead].
// local is the zone the CLI runs in (its TZ); nil leaves a time printed
// without a zone unknown.
func FromText(text string, now time.Time, local *time.Location) Limit {
	l := Limit{Type: typeFromText(text), Waitable: true}
	at, why := resetFromText(text, now, local)
	l.RetryAt = at
	reason, kind := stuckText(text)
	switch {
	case kind == stuckForGood:
		l.Waitable, l.Reason = false, reason
	case kind == stuckOnCredits && at.IsZero():
		// No reset named: waiting lifts nothing the text tells of, unless
		// the rate_limit_event names a plan window's reset (Merge).
		l.Waitable, l.Reason, l.LiftsAtPlanReset = false, reason, true
	}
	if l.Type == "" && kind != notStuck {
		l.Type = "spend_limit"
	}
	if at.IsZero() && l.Waitable {
		l.Reason = why
	}
	return l
}

// resetFromText finds the reset time, or says why there is none.
func resetFromText(text string, now time.Time, local *time.Location) (time.Time, string) {
	if i := indexFold(text, "usage limit reached|"); i >= 0 {
		return resetFromEpoch(text[i+len("usage limit reached|"):], now)
	}
	for rest := text; ; {
		i := indexFold(rest, "resets ")
		if i < 0 {
			return time.Time{}, "claude did not say when the limit resets"
		}
		rest = rest[i+len("resets "):]
		w, ok := parseWhen(rest)
		if !ok {
			continue // "resets" in other words; look further
		}
		loc := local
		if w.zone == "" && loc == nil {
			return time.Time{}, "the limit resets at " + strings.TrimSpace(rest[:w.n]) + " in the CLI's local time zone, which malarun was not told"
		}
		if w.zone != "" {
			z, err := loadZone(w.zone)
			if err != nil {
				// Guessing UTC (or the local zone) could be hours off either
				// way: too early burns an attempt on the same limit, too late
				// sleeps through the window. An unknown reset stops with exit
				// 75 instead, and the caller's scheduler decides.
				return time.Time{}, "the limit resets at " + strings.TrimSpace(rest[:w.n]) + ", in a time zone this malarun does not know"
			}
			loc = z
		}
		at, ok := w.resolve(now, loc)
		if !ok {
			return time.Time{}, "the limit's reset time (" + strings.TrimSpace(rest[:w.n]) + ") is not within the next 8 days"
		}
		return at, ""
	}
}

func resetFromEpoch(s string, now time.Time) (time.Time, string) {
	p := parser{s: s}
	secs, ok := p.number64(1, 12) // seconds; 12 digits reach beyond year 30000
	if !ok {
		return time.Time{}, "claude's usage-limit text has no readable reset time"
	}
	at := time.Unix(secs, 0)
	if at.Before(now.Add(-pastSlack)) || at.After(now.Add(MaxAhead)) {
		return time.Time{}, "claude's usage-limit text names a reset (" + at.UTC().Format(time.RFC3339) + ") that is not within the next 8 days"
	}
	if at.Before(now) {
		at = now
	}
	return at, ""
}

// typeFromText maps the CLI's limit names (its table of rateLimitType to
// words, 2.1.330) back to the type.
func typeFromText(text string) string {
	for _, m := range [...]struct{ words, typ string }{
		{"5-hour limit", "five_hour"},
		{"session limit", "five_hour"},
		{"weekly limit", "seven_day"},
		{"Opus limit", "seven_day_opus"},
		{"Sonnet limit", "seven_day_sonnet"},
		{"Fable limit", "seven_day_overage_included"},
		{"Fable 5 limit", "seven_day_overage_included"}, // 2.1.197's words
		{"usage credit limit", "overage"},
		{"monthly usage limit", "overage"},    // the credits' cap: "org's monthly usage limit"
		{"individual usage limit", "overage"}, // 2.1.332: a member's own cap
	} {
		if indexFold(text, m.words) >= 0 {
			return m.typ
		}
	}
	return ""
}

// stuckKind is how a limit text says waiting will not do.
type stuckKind int

const (
	notStuck stuckKind = iota
	// stuckOnCredits: the usage credits that would pay past the plan's
	// window are spent, capped or off (a spend limit, a pooled budget, a
	// seat without credits, a model that needs them): the plan window's
	// reset lifts it, and the credits' own reset when the text names it
	// ("You're out of usage credits · resets 4pm"), nothing sooner.
	stuckOnCredits
	// stuckForGood: no reset lifts it (the service is off for the org,
	// the org's usage is paused, a 1M context that needs credits): a
	// person has to act, or the run has to change.
	stuckForGood
)

// stuckText recognises the CLI's texts for spent, capped or missing
// credits and for usage a person must restore (the texts of 2.1.197 and
// 2.1.332, read from their code; docs/design.md §F34).
func stuckText(text string) (string, stuckKind) {
	for _, words := range [...]string{"disabled for your org", "usage is paused for your organization", "credits required for 1M context",
		"credits ran out before the response"} {
		if indexFold(text, words) >= 0 {
			return "claude reported that the account cannot use the API until a person acts (" + words + "); waiting fixes nothing", stuckForGood
		}
	}
	for _, words := range [...]string{"spend limit", "pooled group budget", "out of usage credits", "out of usage", "requires usage credits",
		"doesn't include usage", "usage allocation has been disabled", "usage limit is set to $0", "exceeds your group's budget",
		"monthly usage limit", "individual usage limit"} {
		if indexFold(text, words) >= 0 {
			return "claude reported a spend limit or missing usage credits; waiting fixes nothing, raise the limit or add credits", stuckOnCredits
		}
	}
	return "", notStuck
}

// indexFold is strings.Index ignoring ASCII case; offsets stay byte
// offsets of s (strings.ToLower can change the length of non-ASCII text).
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if equalFoldASCII(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

func equalFoldASCII(a, b string) bool {
	for i := 0; i < len(a); i++ {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
