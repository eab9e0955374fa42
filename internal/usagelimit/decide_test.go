package usagelimit

import (
	"math"
	"strings"
	"testing"
	"time"
)

func fixed(f float64) func() float64 { return func() float64 { return f } }

func TestJitter(t *testing.T) {
	cases := []struct {
		name string
		wait time.Duration
		rnd  float64
		want time.Duration
	}{
		{"no wait, no jitter", 0, 0.9, 0},
		{"negative wait", -time.Hour, 0.9, 0},
		{"5% of a short wait", 10 * time.Minute, 1, 30 * time.Second},
		{"half of 5%", 10 * time.Minute, 0.5, 15 * time.Second},
		{"capped at 60s", 5 * time.Hour, 1, 60 * time.Second},
		{"capped, quarter", 5 * time.Hour, 0.25, 15 * time.Second},
		{"zero draw", 5 * time.Hour, 0, 0},
		{"draw above 1 is clamped", 5 * time.Hour, 7, 60 * time.Second},
		{"negative draw is clamped", 5 * time.Hour, -1, 0},
		{"NaN draw is zero", 5 * time.Hour, math.NaN(), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := jitter(c.wait, fixed(c.rnd)); got != c.want {
				t.Errorf("Jitter(%v, %v) = %v, want %v", c.wait, c.rnd, got, c.want)
			}
		})
	}
}

// TestJitterIsUniform: the draws are spread over the whole range, not
// bunched at one end (a rounding or scaling slip would show here).
func TestJitterIsUniform(t *testing.T) {
	const n = 1000
	var buckets [10]int
	for i := range n {
		draw := (float64(i) + 0.5) / n // an even sweep of [0, 1)
		j := jitter(time.Hour, fixed(draw))
		if j < 0 || j > maxJitter {
			t.Fatalf("jitter %v outside [0, %v]", j, maxJitter)
		}
		buckets[int(j*10/maxJitter)]++
	}
	for i, b := range buckets {
		if b != n/10 {
			t.Errorf("bucket %d has %d draws, want %d: %v", i, b, n/10, buckets)
		}
	}
}

func TestBudget(t *testing.T) {
	b := Budget{Total: time.Hour}
	if b.Left() != time.Hour {
		t.Fatalf("fresh budget left %v", b.Left())
	}
	b.Spend(40 * time.Minute)
	b.Spend(-time.Minute) // a clock step back spends nothing
	if b.Left() != 20*time.Minute {
		t.Errorf("after 40m: left %v", b.Left())
	}
	b.Spend(30 * time.Minute)
	if b.Left() != 0 || b.Used != 70*time.Minute {
		t.Errorf("overspent: left %v used %v", b.Left(), b.Used)
	}
	if (Budget{}).Left() != 0 {
		t.Errorf("zero budget has time left")
	}
}

func TestDecide(t *testing.T) {
	now := utc(2026, 11, 22, 15, 5, 11)
	reset := utc(2026, 11, 22, 16, 5, 11) // one hour away: jitter up to 60s
	cases := []struct {
		name    string
		limit   Limit
		left    time.Duration
		rnd     float64
		action  Action
		until   time.Time
		retryAt time.Time
		reason  string
	}{
		{"known reset within budget: wait until reset plus jitter",
			Limit{RetryAt: reset, Type: "five_hour", Waitable: true}, 2 * time.Hour, 0.5,
			Wait, reset.Add(30 * time.Second), reset, "waiting 1h0m30s"},
		{"no jitter draw",
			Limit{RetryAt: reset, Type: "five_hour", Waitable: true}, 2 * time.Hour, 0,
			Wait, reset, reset, "five_hour limit resets"},
		{"jitter cut to fit the budget",
			Limit{RetryAt: reset, Waitable: true}, time.Hour + 10*time.Second, 0.99,
			Wait, reset.Add(10 * time.Second), reset, "waiting"},
		{"exactly the budget",
			Limit{RetryAt: reset, Waitable: true}, time.Hour, 0.99,
			Wait, reset, reset, "waiting 1h0m0s"},
		{"a second beyond the budget: stop",
			Limit{RetryAt: reset, Type: "five_hour", Waitable: true}, time.Hour - time.Second, 0,
			Stop, time.Time{}, reset, "beyond what is left of limit_wait (59m59s)"},
		{"no budget: stop",
			Limit{RetryAt: reset, Type: "seven_day", Waitable: true}, 0, 0,
			Stop, time.Time{}, reset, "seven_day limit resets at 2026-11-22T16:05:11Z, in 1h0m0s"},
		{"reset already past: go now",
			Limit{RetryAt: now.Add(-time.Minute), Waitable: true}, 0, 0.9,
			Wait, now, now.Add(-time.Minute), "waiting 0s"},
		{"unknown reset: stop",
			Limit{Type: "five_hour", Waitable: true}, 10 * time.Hour, 0,
			Stop, time.Time{}, time.Time{}, "did not say when the five_hour limit resets"},
		{"unknown reset keeps its reason",
			Limit{Waitable: true, Reason: "in a time zone this malarun does not know"}, 10 * time.Hour, 0,
			Stop, time.Time{}, time.Time{}, "time zone"},
		{"not waitable: stop even with budget",
			Limit{RetryAt: reset, Reason: "the account needs usage credits"}, 10 * time.Hour, 0,
			Stop, time.Time{}, reset, "needs usage credits"},
		{"not waitable without a reason still says why",
			Limit{Type: "overage"}, 10 * time.Hour, 0,
			Stop, time.Time{}, time.Time{}, "fixes nothing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Decide(now, c.limit, c.left, fixed(c.rnd))
			if d.Action != c.action || !d.Until.Equal(c.until) || !d.RetryAt.Equal(c.retryAt) {
				t.Errorf("got %v until %v retry %v, want %v until %v retry %v", d.Action, d.Until, d.RetryAt, c.action, c.until, c.retryAt)
			}
			if !strings.Contains(d.Reason, c.reason) {
				t.Errorf("reason %q, want one with %q", d.Reason, c.reason)
			}
			if d.Action == Wait && d.Until.Sub(now) > c.left && c.limit.RetryAt.After(now) {
				t.Errorf("waits %v, beyond the %v left", d.Until.Sub(now), c.left)
			}
		})
	}
}

// TestRepeatedLimitsShareOneBudget plays a run meeting three 5-hour limits
// under limit_wait=6h: the first two waits fit, the third does not.
func TestRepeatedLimitsShareOneBudget(t *testing.T) {
	now := utc(2026, 6, 10, 0, 0, 0)
	b := Budget{Total: 6 * time.Hour}
	var actions []Action
	for range 3 {
		l := Limit{RetryAt: now.Add(150 * time.Minute), Type: "five_hour", Waitable: true}
		d := Decide(now, l, b.Left(), fixed(1))
		actions = append(actions, d.Action)
		if d.Action != Wait {
			break
		}
		b.Spend(d.Until.Sub(now))
		now = d.Until.Add(5 * time.Minute) // the resumed attempt runs a while
	}
	want := []Action{Wait, Wait, Stop}
	if len(actions) != len(want) || actions[0] != want[0] || actions[1] != want[1] || actions[2] != want[2] {
		t.Errorf("actions %v, want %v", actions, want)
	}
	if b.Used != 2*(150*time.Minute+maxJitter) {
		t.Errorf("used %v", b.Used)
	}
}

func TestCLIWaits(t *testing.T) {
	now := utc(2026, 6, 10, 12, 0, 0)
	type line struct {
		at      time.Duration // after now
		delayMS float64
		action  Action
		retryAt time.Time
		reason  string
	}
	cases := []struct {
		name     string
		left     time.Duration
		deadline time.Time
		lines    []line
		spent    time.Duration // by an hour after now
	}{
		{"no delay", 0, time.Time{}, []line{{0, 0, Continue, time.Time{}, ""}}, 0},
		{"negative delay", 0, time.Time{}, []line{{0, -5, Continue, time.Time{}, ""}}, 0},
		{"NaN delay", 0, time.Time{}, []line{{0, math.NaN(), Continue, time.Time{}, ""}}, 0},
		{"within budget", time.Minute, time.Time{}, []line{{0, 30_000, Continue, time.Time{}, "retries by itself in 30s"}}, 30 * time.Second},
		{"exactly the budget", time.Minute, time.Time{}, []line{{0, 60_000, Continue, time.Time{}, "1m0s"}}, time.Minute},
		{"beyond budget", time.Minute, time.Time{}, []line{{0, 60_001, Stop, now.Add(60_001 * time.Millisecond), "beyond what is left of limit_wait (1m0s)"}}, 0},
		{"no budget", 0, time.Time{}, []line{{0, 1, Stop, now.Add(time.Millisecond), "claude would wait"}}, 0},
		{"absurd delay does not overflow", time.Hour, time.Time{}, []line{{0, 1e19, Stop, now.Add(MaxAhead), "claude would wait"}}, 0},
		{"past the session deadline", time.Hour, now.Add(time.Minute), []line{{0, 90_000, Stop, now.Add(90 * time.Second), "after session_timeout ends the run"}}, 0},
		// 2.1.330 re-announces its sleep every 30 s with the time left:
		// one sleep, counted once.
		{"a re-announced sleep counts once", 3 * time.Minute, time.Time{}, []line{
			{0, 117_575, Continue, time.Time{}, "in 1m58s"},
			{30 * time.Second, 87_575, Continue, time.Time{}, "still waiting"},
			{60 * time.Second, 57_575, Continue, time.Time{}, "still waiting"},
		}, 117_575 * time.Millisecond},
		// Its timers fire a little late: each step ends a few ms after the
		// sleep already let run, which a budget of exactly the sleep still covers.
		{"a re-announcement drifting late is the same sleep", time.Minute, time.Time{}, []line{
			{0, 60_000, Continue, time.Time{}, ""},
			{30*time.Second + 5*time.Millisecond, 30_000, Continue, time.Time{}, "still waiting"},
			{60*time.Second + 10*time.Millisecond, 0, Continue, time.Time{}, ""},
		}, time.Minute},
		{"sleeps one after another add up", 25 * time.Minute, time.Time{}, []line{
			{0, 600_000, Continue, time.Time{}, ""},
			{10 * time.Minute, 600_000, Continue, time.Time{}, ""},
			{20 * time.Minute, 600_000, Stop, now.Add(30 * time.Minute), "beyond what is left of limit_wait (5m0s)"},
		}, 20 * time.Minute},
		{"a longer re-announcement pays only for the extension", 15 * time.Minute, time.Time{}, []line{
			{0, 600_000, Continue, time.Time{}, ""},
			{time.Minute, 600_000, Continue, time.Time{}, ""},
		}, 11 * time.Minute},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var w CLIWaits
			for i, l := range c.lines {
				d := w.Judge(now.Add(l.at), l.delayMS, c.left, c.deadline)
				if d.Action != l.action || !d.RetryAt.Equal(l.retryAt) || !d.Until.IsZero() {
					t.Errorf("line %d: got %v retry %v until %v, want %v retry %v", i, d.Action, d.RetryAt, d.Until, l.action, l.retryAt)
				}
				if !strings.Contains(d.Reason, l.reason) {
					t.Errorf("line %d: reason %q, want one with %q", i, d.Reason, l.reason)
				}
			}
			if got := w.SpentBy(now.Add(time.Hour)); got != c.spent {
				t.Errorf("spent %v, want %v", got, c.spent)
			}
		})
	}
}

// A sleep cut short is paid for only as far as it went.
func TestCLIWaitsSpentBy(t *testing.T) {
	now := utc(2026, 6, 10, 12, 0, 0)
	var w CLIWaits
	w.Judge(now, 600_000, time.Hour, time.Time{})
	for _, c := range []struct {
		at, want time.Duration
	}{{0, 0}, {4 * time.Minute, 4 * time.Minute}, {10 * time.Minute, 10 * time.Minute}, {time.Hour, 10 * time.Minute}} {
		if got := w.SpentBy(now.Add(c.at)); got != c.want {
			t.Errorf("spent by +%v: %v, want %v", c.at, got, c.want)
		}
	}
}

func TestActionString(t *testing.T) {
	for a, want := range map[Action]string{Wait: "wait", Stop: "stop", Continue: "continue", Action(9): "Action(9)"} {
		if a.String() != want {
			t.Errorf("%d: %q, want %q", int(a), a.String(), want)
		}
	}
}
