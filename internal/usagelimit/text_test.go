package usagelimit

import (
	"fmt"
	"testing"
	"time"
)

func mustZone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("zone %s: %v (time/tzdata should embed it)", name, err)
	}
	return loc
}

func utc(y int, m time.Month, d, h, min, s int) time.Time {
	return time.Date(y, m, d, h, min, s, 0, time.UTC)
}

func TestFromText(t *testing.T) {
	paris := mustZone(t, "Europe/Paris")
	june := utc(2026, 6, 10, 12, 0, 0) // 14:00 in Paris (CEST, UTC+2)
	cases := []struct {
		name   string
		text   string
		now    time.Time
		local  *time.Location
		want   Limit
		reason string // a word the reason must contain ("" = no reason)
	}{
		// The forms the CLI prints; a time without seconds gains a minute.
		{"5-hour limit in UTC", "You've hit your 5-hour limit · resets 4:57pm (UTC)", june, paris,
			Limit{RetryAt: utc(2026, 6, 10, 16, 58, 0), Type: "five_hour", Waitable: true}, ""},
		{"named zone, tomorrow", "You've hit your limit · resets 2am (Europe/Paris)", june, time.UTC,
			Limit{RetryAt: utc(2026, 6, 11, 0, 1, 0), Waitable: true}, ""},
		{"no zone: the local one", "You've hit your limit · resets 2am", june, paris,
			Limit{RetryAt: utc(2026, 6, 11, 0, 1, 0), Waitable: true}, ""},
		{"12am is midnight", "resets 12am", june, time.UTC,
			Limit{RetryAt: utc(2026, 6, 11, 0, 1, 0), Waitable: true}, ""},
		{"12pm is noon", "resets 12pm", utc(2026, 6, 10, 11, 0, 0), time.UTC,
			Limit{RetryAt: utc(2026, 6, 10, 12, 1, 0), Waitable: true}, ""},
		{"12:30am", "resets 12:30am (UTC)", june, time.UTC,
			Limit{RetryAt: utc(2026, 6, 11, 0, 31, 0), Waitable: true}, ""},
		{"12:30pm", "resets 12:30pm (UTC)", june, time.UTC,
			Limit{RetryAt: utc(2026, 6, 10, 12, 31, 0), Waitable: true}, ""},
		{"resets at", "usage limit resets at 4pm", june, time.UTC,
			Limit{RetryAt: utc(2026, 6, 10, 16, 1, 0), Waitable: true}, ""},
		{"narrow no-break space before PM", "resets 4:05\u202fPM (UTC)", june, paris,
			Limit{RetryAt: utc(2026, 6, 10, 16, 6, 0), Waitable: true}, ""},
		{"trailing words", "You've hit your 5-hour limit · resets 4:05pm (UTC) · progress saved", june, paris,
			Limit{RetryAt: utc(2026, 6, 10, 16, 6, 0), Type: "five_hour", Waitable: true}, ""},
		{"second resets is the time", "Plan resets soon · resets 4pm (UTC)", june, paris,
			Limit{RetryAt: utc(2026, 6, 10, 16, 1, 0), Waitable: true}, ""},
		{"etc zone", "resets 4pm (Etc/GMT-2)", june, time.UTC,
			Limit{RetryAt: utc(2026, 6, 10, 14, 1, 0), Waitable: true}, ""},

		// A time just past is now (the limit has just reset); further past is tomorrow.
		{"3 minutes past: now", "resets 12pm (UTC)", utc(2026, 6, 10, 12, 3, 0), paris,
			Limit{RetryAt: utc(2026, 6, 10, 12, 3, 0), Waitable: true}, ""},
		{"within its minute: end of the minute", "resets 12pm (UTC)", utc(2026, 6, 10, 12, 0, 30), paris,
			Limit{RetryAt: utc(2026, 6, 10, 12, 1, 0), Waitable: true}, ""},
		{"exactly 5 minutes past: now", "resets 12pm (UTC)", utc(2026, 6, 10, 12, 5, 0), paris,
			Limit{RetryAt: utc(2026, 6, 10, 12, 5, 0), Waitable: true}, ""},
		{"6 minutes past: tomorrow", "resets 12pm (UTC)", utc(2026, 6, 10, 12, 6, 0), paris,
			Limit{RetryAt: utc(2026, 6, 11, 12, 1, 0), Waitable: true}, ""},
		{"just before midnight, read just after", "resets 11:59pm (UTC)", utc(2026, 6, 11, 0, 2, 0), paris,
			Limit{RetryAt: utc(2026, 6, 11, 0, 2, 0), Waitable: true}, ""},

		// With a date (more than 24 hours away).
		{"weekly limit with a date", "You've hit your weekly limit · resets Nov 28, 4pm (Europe/Paris)", utc(2026, 11, 22, 15, 5, 0), time.UTC,
			Limit{RetryAt: utc(2026, 11, 28, 15, 1, 0), Type: "seven_day", Waitable: true}, ""},
		{"date at time", "resets Nov 28 at 4:30pm (UTC)", utc(2026, 11, 22, 15, 5, 0), paris,
			Limit{RetryAt: utc(2026, 11, 28, 16, 31, 0), Waitable: true}, ""},
		{"date with a year", "resets Jan 3, 2027, 4:30pm (UTC)", utc(2026, 12, 30, 12, 0, 0), paris,
			Limit{RetryAt: utc(2027, 1, 3, 16, 31, 0), Waitable: true}, ""},
		{"date without year across new year", "resets Jan 2, 9am (UTC)", utc(2026, 12, 30, 12, 0, 0), paris,
			Limit{RetryAt: utc(2027, 1, 2, 9, 1, 0), Waitable: true}, ""},
		{"date too far", "resets Dec 25, 4pm (UTC)", utc(2026, 11, 22, 15, 5, 0), paris,
			Limit{Waitable: true}, "8 days"},
		{"date that does not exist", "resets Feb 30, 4pm (UTC)", utc(2026, 2, 25, 0, 0, 0), paris,
			Limit{Waitable: true}, "8 days"},
		{"date without a time", "resets Nov 28", utc(2026, 11, 22, 15, 5, 0), paris,
			Limit{Waitable: true}, "did not say"},

		// The old epoch form: exact, no rounding.
		{"epoch", fmt.Sprintf("Claude AI usage limit reached|%d", utc(2026, 6, 10, 14, 0, 0).Unix()), june, paris,
			Limit{RetryAt: utc(2026, 6, 10, 14, 0, 0), Waitable: true}, ""},
		{"epoch just past: now", fmt.Sprintf("Claude AI usage limit reached|%d", june.Add(-3*time.Minute).Unix()), june, paris,
			Limit{RetryAt: june, Waitable: true}, ""},
		{"epoch long past", fmt.Sprintf("Claude AI usage limit reached|%d", june.Add(-10*time.Minute).Unix()), june, paris,
			Limit{Waitable: true}, "8 days"},
		{"epoch too far", fmt.Sprintf("Claude AI usage limit reached|%d", june.Add(30*24*time.Hour).Unix()), june, paris,
			Limit{Waitable: true}, "8 days"},
		{"epoch missing", "Claude AI usage limit reached|", june, paris, Limit{Waitable: true}, "no readable"},
		{"epoch with 13 digits", "Claude AI usage limit reached|1749924000000", june, paris, Limit{Waitable: true}, "no readable"},

		// Unknown resets.
		{"zone this malarun does not know", "resets 4pm (Mars/Olympus_Mons)", june, paris, Limit{Waitable: true}, "time zone"},
		{"Local is not a zone", "resets 4pm (Local)", june, paris, Limit{Waitable: true}, "time zone"},
		{"api key 429", "API Error: Request rejected (429) · rate limited", june, paris, Limit{Waitable: true}, "did not say"},
		{"hour 13", "resets 13pm (UTC)", june, paris, Limit{Waitable: true}, "did not say"},
		{"hour 0", "resets 0am (UTC)", june, paris, Limit{Waitable: true}, "did not say"},
		{"one-digit minutes", "resets 4:7pm (UTC)", june, paris, Limit{Waitable: true}, "did not say"},
		{"minute 65", "resets 4:65pm (UTC)", june, paris, Limit{Waitable: true}, "did not say"},
		{"no am/pm", "resets 16:00 (UTC)", june, paris, Limit{Waitable: true}, "did not say"},
		{"another word", "resets 4pmish", june, paris, Limit{Waitable: true}, "did not say"},
		{"empty", "", june, paris, Limit{Waitable: true}, "did not say"},
		{"no zone and no local zone", "resets 4pm", june, nil, Limit{Waitable: true}, "local time zone"},
		{"named zone needs no local one", "resets 4pm (UTC)", june, nil,
			Limit{RetryAt: utc(2026, 6, 10, 16, 1, 0), Waitable: true}, ""},

		// Limit names, and limits waiting cannot fix.
		{"session limit", "You've hit your session limit · resets 4pm (UTC)", june, paris,
			Limit{RetryAt: utc(2026, 6, 10, 16, 1, 0), Type: "five_hour", Waitable: true}, ""},
		{"opus limit", "You've hit your Opus limit · resets Jun 12, 4pm (UTC)", june, paris,
			Limit{RetryAt: utc(2026, 6, 12, 16, 1, 0), Type: "seven_day_opus", Waitable: true}, ""},
		{"monthly spend limit", "You've hit your monthly spend limit · resets Jul 1", june, paris,
			Limit{Type: "spend_limit"}, "spend limit"},
		// A cap whose reset the text names within the next days is lifted
		// then (a gateway's budget, 2.1.332 rewrites its date to a time).
		{"spend limit with a time", "spend limit reached · resets Jun 12, 12am (UTC)", june, paris,
			Limit{RetryAt: utc(2026, 6, 12, 0, 1, 0), Type: "spend_limit", Waitable: true}, ""},
		{"out of credits", "You're out of usage credits. See Usage in Settings", june, paris,
			Limit{Type: "spend_limit"}, "add credits"},
		{"usage credit limit", "You've hit your usage credit limit · resets 4pm (UTC)", june, paris,
			Limit{RetryAt: utc(2026, 6, 10, 16, 1, 0), Type: "overage", Waitable: true}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkLimit(t, FromText(c.text, c.now, c.local), c.want, c.reason)
		})
	}
}

// TestFromTextAcrossDST: the reset is the next instant whose wall clock in
// the zone reads the printed time, on days when Europe/Paris skips an hour
// (2026-03-29, 02:00 CET → 03:00 CEST) or repeats one (2026-10-25,
// 03:00 CEST → 02:00 CET).
func TestFromTextAcrossDST(t *testing.T) {
	paris := mustZone(t, "Europe/Paris")
	cases := []struct {
		name string
		text string
		now  time.Time
		want time.Time
	}{
		{"spring: 3:30am comes 1h30 after 1am", "resets 3:30am (Europe/Paris)",
			utc(2026, 3, 29, 0, 0, 0), utc(2026, 3, 29, 1, 31, 0)},
		{"spring: 1:30am is still winter time", "resets 1:30am (Europe/Paris)",
			utc(2026, 3, 28, 23, 30, 0), utc(2026, 3, 29, 0, 31, 0)},
		{"spring: 2:30am does not exist that day, so the next day", "resets 2:30am (Europe/Paris)",
			utc(2026, 3, 29, 0, 0, 0), utc(2026, 3, 30, 0, 31, 0)},
		{"spring: noon the next day is summer time", "resets 12pm (Europe/Paris)",
			utc(2026, 3, 28, 12, 0, 0), utc(2026, 3, 29, 10, 1, 0)},
		{"fall: 2:30am the first time", "resets 2:30am (Europe/Paris)",
			utc(2026, 10, 24, 23, 0, 0), utc(2026, 10, 25, 0, 31, 0)},
		{"fall: 2:30am the second time, once the first has passed", "resets 2:30am (Europe/Paris)",
			utc(2026, 10, 25, 0, 50, 0), utc(2026, 10, 25, 1, 31, 0)},
		{"fall: midnight after a 25-hour day", "resets 12am (Europe/Paris)",
			utc(2026, 10, 25, 12, 0, 0), utc(2026, 10, 25, 23, 1, 0)},
		{"fall: no zone, local Paris", "resets 2:30am",
			utc(2026, 10, 25, 0, 50, 0), utc(2026, 10, 25, 1, 31, 0)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := FromText(c.text, c.now, paris)
			if !got.RetryAt.Equal(c.want) {
				t.Errorf("RetryAt %v (%v), want %v (%v)", got.RetryAt.UTC(), got.RetryAt.In(paris), c.want, c.want.In(paris))
			}
		})
	}
}

func TestWallInstants(t *testing.T) {
	paris := mustZone(t, "Europe/Paris")
	cases := []struct {
		name string
		y    int
		m    time.Month
		d, h int
		want []time.Time
	}{
		{"ordinary", 2026, 6, 10, 2, []time.Time{utc(2026, 6, 10, 0, 30, 0)}},
		{"skipped", 2026, 3, 29, 2, nil},
		{"repeated", 2026, 10, 25, 2, []time.Time{utc(2026, 10, 25, 0, 30, 0), utc(2026, 10, 25, 1, 30, 0)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := wallInstants(c.y, c.m, c.d, c.h, 30, paris)
			if len(got) != len(c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			for _, w := range c.want {
				if !containsTime(got, w) {
					t.Errorf("got %v, missing %v", got, w)
				}
			}
		})
	}
}
