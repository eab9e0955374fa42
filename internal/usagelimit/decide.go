package usagelimit

import (
	"fmt"
	"time"
)

// MaxJitter caps the random delay added after a reset.
const MaxJitter = 60 * time.Second

// Jitter is a random delay, uniform in [0, min(MaxJitter, 5% of wait)],
// added after a reset so that the malaruns of one account, all stopped by
// the same limit, do not all send their first request in the same second.
// rnd returns values in [0, 1), like math/rand/v2's Float64.
func Jitter(wait time.Duration, rnd func() float64) time.Duration {
	if wait <= 0 {
		return 0
	}
	limit := min(MaxJitter, wait/20)
	f := rnd()
	if !(f >= 0) { // also NaN
		f = 0
	}
	return time.Duration(min(f, 1) * float64(limit))
}

// Budget is the run's limit_wait: how long, in all, it may sleep waiting
// for usage limits to reset, across every limit it meets.
type Budget struct {
	Total time.Duration // limit_wait; 0: never wait
	Used  time.Duration // slept so far
}

// Left is what remains of the budget, never negative.
func (b Budget) Left() time.Duration { return max(0, b.Total-b.Used) }

// Spend records a wait that happened. A wait cut short by a signal or
// the session deadline ends the run, so it is never spent.
func (b *Budget) Spend(d time.Duration) {
	if d > 0 {
		b.Used += d
	}
}

// Action is what to do about a limit.
type Action int

const (
	// Wait: sleep until Decision.Until, then resume the session.
	Wait Action = iota
	// Stop: give up for now with exit 75 (EX_TEMPFAIL); Decision.RetryAt
	// says when trying again makes sense (zero: unknown).
	Stop
	// Continue: (RetryDelay only) let the CLI's own retry run.
	Continue
)

func (a Action) String() string {
	switch a {
	case Wait:
		return "wait"
	case Stop:
		return "stop"
	case Continue:
		return "continue"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Decision is what Decide or RetryDelay chose, and why.
type Decision struct {
	Action  Action
	Until   time.Time // Wait: when to resume (the reset plus jitter)
	RetryAt time.Time // Stop: when a new run may pass (zero: unknown); Wait: the reset itself
	Reason  string    // Stop: why malarun is not waiting; Wait: what it waits for
}

// Decide chooses between waiting for a limit to reset and stopping with
// exit 75. It waits only when waiting can help (the limit is waitable),
// the reset is known, and the whole sleep fits in budgetLeft: the jitter
// is cut down to fit rather than overrunning the budget. A reset already
// past is waited for with no delay.
func Decide(now time.Time, l Limit, budgetLeft time.Duration, rnd func() float64) Decision {
	name := typeOrLimit(l.Type)
	switch {
	case !l.Waitable:
		return Decision{Action: Stop, RetryAt: l.RetryAt, Reason: orDefault(l.Reason, "waiting for the "+name+" to reset fixes nothing")}
	case !l.Known():
		return Decision{Action: Stop, Reason: orDefault(l.Reason, "claude did not say when the "+name+" resets")}
	}
	base := max(0, l.RetryAt.Sub(now))
	if base > budgetLeft {
		return Decision{Action: Stop, RetryAt: l.RetryAt, Reason: fmt.Sprintf(
			"the %s resets at %s, in %s, beyond what is left of limit_wait (%s)",
			name, l.RetryAt.UTC().Format(time.RFC3339), roundDuration(base), roundDuration(budgetLeft))}
	}
	wait := base + min(Jitter(base, rnd), budgetLeft-base)
	return Decision{Action: Wait, Until: now.Add(wait), RetryAt: l.RetryAt, Reason: fmt.Sprintf(
		"the %s resets at %s; waiting %s", name, l.RetryAt.UTC().Format(time.RFC3339), roundDuration(wait))}
}

// CLIWaits accounts for the CLI's own sleeps through a usage limit in one
// attempt (CLAUDE_CODE_RETRY_WATCHDOG=1: api_retry lines for a 429). The
// CLI announces a sleep again every 30 s with the time left (docs/design.md
// §F19), so the sleeps are a union of intervals, not a sum of delays.
type CLIWaits struct {
	Spent time.Duration // the sleeps let run, which limit_wait pays for
	until time.Time     // when the last sleep let run ends
}

// Judge takes one api_retry for a 429: the CLI is about to sleep delayMS.
// Only the part after the sleep already let run is new; when it does not
// fit in what is left of budgetLeft (limit_wait as the attempt started),
// malarun stops the attempt and exits 75, with the end of the CLI's sleep as
// the time to try again. Otherwise the CLI sleeps, and that part is Spent.
func (w *CLIWaits) Judge(now time.Time, delayMS int64, budgetLeft time.Duration) Decision {
	delay := Delay(delayMS)
	if delay <= 0 {
		return Decision{Action: Continue}
	}
	end := now.Add(delay)
	extra := end.Sub(now)
	if w.until.After(now) {
		extra = end.Sub(w.until)
	}
	if extra <= 0 {
		return Decision{Action: Continue, Reason: "claude is still waiting, until " + end.UTC().Format(time.RFC3339)}
	}
	if left := max(0, budgetLeft-w.Spent); extra > left {
		return Decision{Action: Stop, RetryAt: end, Reason: fmt.Sprintf(
			"claude would wait %s before retrying (until %s), beyond what is left of limit_wait (%s)",
			roundDuration(delay), end.UTC().Format(time.RFC3339), roundDuration(left))}
	}
	w.Spent += extra
	w.until = end
	return Decision{Action: Continue, Reason: "claude retries by itself in " + roundDuration(delay)}
}

// Delay is an api_retry line's retry_delay_ms as a duration, capped at
// MaxAhead before converting: a huge delay must not overflow into a
// negative one.
func Delay(delayMS int64) time.Duration {
	return time.Duration(max(0, min(delayMS, int64(MaxAhead/time.Millisecond)))) * time.Millisecond
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// roundDuration keeps messages readable: whole seconds.
func roundDuration(d time.Duration) string { return d.Round(time.Second).String() }
