package run

import (
	"fmt"
	"time"

	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/usagelimit"
)

// onLimit decides about a usage limit (§D10): wait for the reset when that
// can help and fits in what is left of limit_wait (and of session_timeout),
// then start then; otherwise end the run with exit 75, retry_at saying when
// trying again makes sense. why is what the attempt said, for a limit whose
// reset is unknown.
func (s State) onLimit(p Policy, l usagelimit.Limit, why string, now time.Time, d Draws, then Attempt) (State, Action) {
	met := l
	left := s.LimitWait.Left()
	timeoutFirst := false
	if !p.Deadline.IsZero() && p.Deadline.Sub(now) < left {
		left, timeoutFirst = max(0, p.Deadline.Sub(now)), true
	}
	dec := usagelimit.Decide(now, l, left, func() float64 { return d.Jitter })
	switch {
	case dec.Action != usagelimit.Wait:
	case p.LimitWait == 0:
		// Even a reset already past is not waited for: limit_wait 0 means
		// exit 75 at once, and the next run (or the orchestrator) tries again.
		dec = usagelimit.Decision{Action: usagelimit.Stop, RetryAt: l.RetryAt, Reason: "limit_wait is 0"}
	case !s.LastReset.IsZero() && !l.RetryAt.After(s.LastReset):
		// The API still refuses after the reset malarun waited for: waiting
		// again for the same moment would loop without spending any budget.
		dec = usagelimit.Decision{Action: usagelimit.Stop, RetryAt: l.RetryAt, Reason: fmt.Sprintf(
			"the limit was still in force after its reset at %s", s.LastReset.UTC().Format(time.RFC3339))}
	}
	s.Limit = record.UsageLimit{RetryAt: dec.RetryAt, LimitType: l.Type}
	if dec.Action != usagelimit.Wait {
		reason := dec.Reason
		if l.Waitable && l.Known() && l.Reason != "" {
			reason = l.Reason
		}
		if timeoutFirst && l.Waitable && l.Known() {
			reason += "; session_timeout ends the run sooner"
		}
		if !l.Known() && why != "" {
			reason += " (" + why + ")"
		}
		return s, Action{Kind: End, Outcome: outcome.RateLimit, Reason: limitDetail(l, dec.RetryAt, now) + "; " + reason, Met: &met}
	}
	s.LastReset = l.RetryAt
	s.LimitWait.Spend(dec.Until.Sub(now))
	s.Sleeping, s.Pending, s.Status = SleepLimit, then, record.Waiting
	return s, Action{Kind: Sleep, Until: dec.Until, Reason: dec.Reason, Met: &met}
}

// limitDetail names a limit and its reset for the error line, such as
// "usage limit (five_hour) until 16:57 UTC".
func limitDetail(l usagelimit.Limit, retryAt, now time.Time) string {
	s := "usage limit"
	if l.Type != "" {
		s += " (" + l.Type + ")"
	}
	if retryAt.IsZero() {
		return s
	}
	layout := "15:04 UTC"
	if ahead := retryAt.Sub(now); ahead < -time.Hour || ahead >= 20*time.Hour {
		layout = "Jan 2 15:04 UTC"
	}
	return s + " until " + retryAt.UTC().Format(layout)
}

// limitNote tells the resumed agent why its session stopped, so it does
// not look for a fault of its own.
func limitNote(limitType string) string {
	what := "a usage limit"
	if limitType != "" {
		what = fmt.Sprintf("a usage limit (%s)", limitType)
	}
	return "Your previous request was refused because the account reached " + what +
		"; the limit has reset and nothing in your work caused it. Nothing is lost: continue where you were."
}
