package usagelimit

import (
	"fmt"
	"time"
)

// maxJitter caps the random delay added after a reset.
const maxJitter = 60 * time.Second

// jitter is a random delay, uniform in [0, min(maxJitter, 5% of wait)],
// added after a reset so that the malaruns of one account, all stopped by
// the same limit, do not all send their first request in the same second.
// rnd returns values in [0, 1), like math/rand/v2's Float64.
func jitter(wait time.Duration, rnd func() float64) time.Duration {
	if wait <= 0 {
		return 0
	}
	limit := min(maxJitter, wait/20)
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
	wait := base + min(jitter(base, rnd), budgetLeft-base)
	return Decision{Action: Wait, Until: now.Add(wait), RetryAt: l.RetryAt, Reason: fmt.Sprintf(
		"the %s resets at %s; waiting %s", name, l.RetryAt.UTC().Format(time.RFC3339), roundDuration(wait))}
}

// CLIWaits accounts for the CLI's own sleeps through a usage limit in one
// attempt (CLAUDE_CODE_RETRY_WATCHDOG=1: api_retry lines for a 429). The
// CLI announces a sleep again every 30 s with the time left (docs/design.md
// §F19), so the sleeps are a union of intervals, not a sum of delays.
type CLIWaits struct {
	spent time.Duration // the sleeps let run, up to until
	until time.Time     // when the last sleep let run ends
}

// reannounceSlack is how much later than the sleep already let run a new
// announcement may end and still be the same sleep: the CLI counts down in
// exact 30 s steps while its timers fire a little late.
const reannounceSlack = 2 * time.Second

// Judge takes one api_retry for a 429: the CLI is about to sleep delayMS.
// Only the part after the sleep already let run is new. When that does not
// fit in what is left of budgetLeft (limit_wait as the attempt started), or
// the sleep would outlast the session deadline (zero: none), malarun stops
// the attempt and exits 75, with the end of the CLI's sleep as the time to
// try again. Otherwise the CLI sleeps.
func (w *CLIWaits) Judge(now time.Time, delayMS float64, budgetLeft time.Duration, deadline time.Time) Decision {
	delay := Delay(delayMS)
	if delay <= 0 {
		return Decision{Action: Continue}
	}
	end := now.Add(delay)
	from := now
	if w.until.After(now) {
		from = w.until
	}
	extra := end.Sub(from)
	if w.until.After(now) && extra <= reannounceSlack {
		// The same sleep, announced again: nothing new to pay for.
		w.until = later(w.until, end)
		return Decision{Action: Continue, Reason: "claude is still waiting, until " + end.UTC().Format(time.RFC3339)}
	}
	stop := func(why string) Decision {
		return Decision{Action: Stop, RetryAt: end, Reason: fmt.Sprintf("claude would wait %s before retrying (until %s), %s",
			roundDuration(delay), end.UTC().Format(time.RFC3339), why)}
	}
	if left := max(0, budgetLeft-w.spent); extra > left {
		return stop(fmt.Sprintf("beyond what is left of limit_wait (%s)", roundDuration(left)))
	}
	if !deadline.IsZero() && end.After(deadline) {
		return stop("after session_timeout ends the run")
	}
	w.spent += extra
	w.until = end
	return Decision{Action: Continue, Reason: "claude retries by itself in " + roundDuration(delay)}
}

// SpentBy is how long the CLI slept through usage limits by the time t,
// which limit_wait pays for: a sleep cut short (the CLI died, was stopped)
// is paid only for the part that passed.
func (w *CLIWaits) SpentBy(t time.Time) time.Duration {
	if w.until.After(t) {
		return max(0, w.spent-w.until.Sub(t))
	}
	return w.spent
}

// Delay is an api_retry line's retry_delay_ms (a JSON number, so a float) as
// a duration: capped at MaxAhead before converting, so a huge delay cannot
// overflow into a negative one; NaN and negative delays are none.
func Delay(delayMS float64) time.Duration {
	if !(delayMS > 0) { // NaN too
		return 0
	}
	if delayMS >= float64(MaxAhead/time.Millisecond) {
		return MaxAhead
	}
	return time.Duration(delayMS * float64(time.Millisecond))
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// roundDuration keeps messages readable: whole seconds.
func roundDuration(d time.Duration) string { return d.Round(time.Second).String() }
