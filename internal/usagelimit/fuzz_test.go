package usagelimit

import (
	"testing"
	"time"
)

// FuzzFromText: whatever the text and the moment, the parser never panics,
// and a reset it finds lies between now and now+MaxAhead (the stated
// contract is at least now-pastSlack; the parser promises more: a reset
// just past is "now"). An unknown reset always comes with a reason.
func FuzzFromText(f *testing.F) {
	zones := []*time.Location{nil, time.UTC, mustZone(f, "Europe/Paris"), mustZone(f, "America/New_York"),
		mustZone(f, "Australia/Lord_Howe"), mustZone(f, "Pacific/Kiritimati")}
	for _, s := range []string{
		"You've hit your 5-hour limit · resets 4:57pm (UTC)",
		"You've hit your limit · resets 2am (Europe/Paris)",
		"resets 12am",
		"resets 12:30pm (America/New_York) · progress saved",
		"Claude AI usage limit reached|1795363511",
		"You've hit your weekly limit · resets Nov 28, 4pm (Europe/Paris)",
		"resets Jan 3, 2027, 4:30pm (UTC)",
		"resets Nov 28 at 4:05\u202fPM (Australia/Lord_Howe)",
		"You've hit your monthly spend limit · resets Dec 1",
		"resets 2:30am (Europe/Paris)",
		"resets 4pm (Mars/Olympus)",
		"resets resets resets 1",
	} {
		for i, now := range []int64{1795363511, 1774746000, 1792886400} { // Nov 22, spring and fall DST days 2026
			f.Add(s, now, uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, text string, nowUnix int64, zone uint8) {
		if nowUnix < 0 || nowUnix > 7e9 { // 1970 to 2191: keep date arithmetic in range
			nowUnix = 1795363511 + nowUnix%(1<<30)
			if nowUnix < 0 {
				nowUnix = -nowUnix
			}
		}
		now := time.Unix(nowUnix, 0)
		l := FromText(text, now, zones[int(zone)%len(zones)])
		if l.Known() && (l.RetryAt.Before(now) || l.RetryAt.After(now.Add(MaxAhead))) {
			t.Fatalf("%q at %v: reset %v outside [now, now+%v]", text, now.UTC(), l.RetryAt.UTC(), MaxAhead)
		}
		if !l.Known() && l.Reason == "" {
			t.Fatalf("%q: unknown reset without a reason", text)
		}
		if !l.Waitable && l.Reason == "" {
			t.Fatalf("%q: not waitable without a reason", text)
		}
	})
}
