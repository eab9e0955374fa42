package supervisor

import (
	"fmt"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/usagelimit"
)

// limitOf is what an attempt said about the usage limit that stopped it:
// the CLI's own announced wait when malarun cut that short, else the
// rejected rate_limit_event (exact to the second) completed by the result
// text (the only source when the CLI printed no event).
func (r *runner) limitOf(res *attemptResult, now time.Time) usagelimit.Limit {
	if res.ending == attempt.UsageLimit {
		// Reason keeps the CLI's own words (how long it would have waited).
		l := usagelimit.Limit{RetryAt: res.cliLimit.RetryAt, Waitable: true, Reason: res.cliLimit.Reason}
		if ev := res.log.rateLimit; ev != nil {
			l.Type = ev.RateLimitType
		}
		return l
	}
	text := usagelimit.FromText(lastReply(res), now, r.childZone())
	ev := res.log.rateLimit
	if ev == nil {
		return text
	}
	fromEvent, ok := usagelimit.FromEvent(usagelimit.Event{Status: ev.RateLimitStatus, ResetsAt: ev.ResetsAt,
		RateLimitType: ev.RateLimitType, ErrorCode: ev.RateLimitErrorCode})
	if !ok {
		return text
	}
	return usagelimit.Merge(fromEvent, text)
}

// childZone is the time zone the CLI prints a reset in when it names none:
// its TZ, else this machine's local zone (the CLI runs on it too).
func (r *runner) childZone() *time.Location {
	tz, set := lookupEnv(r.cfg.Env, "TZ")
	if !set {
		return time.Local
	}
	loc, err := time.LoadLocation(strings.TrimPrefix(tz, ":"))
	if err != nil {
		return nil // a reset printed without a zone stays unknown rather than misread
	}
	return loc
}

// limitKey names the account the CLI bills, for the machine-wide file: its
// API key, else its OAuth token, with the API's address (a fake or a proxy
// API has limits of its own); "default" is the CLI's own stored login.
func (r *runner) limitKey() string {
	cred := firstNonEmpty(envValue(r.cfg.Env, "ANTHROPIC_API_KEY"), envValue(r.cfg.Env, "CLAUDE_CODE_OAUTH_TOKEN"))
	if base := envValue(r.cfg.Env, "ANTHROPIC_BASE_URL"); base != "" {
		cred += "\x00" + base
	}
	return usagelimit.Key(cred)
}

// shareLimit writes a waitable limit with a known reset where the other
// malaruns of this state directory and account will find it.
func (r *runner) shareLimit(l usagelimit.Limit) {
	if !l.Waitable || !l.Known() {
		return
	}
	if err := (usagelimit.Store{Dir: r.cfg.StateDir}).Write(r.limitKey(), l); err != nil {
		r.log.Warn().Err(err).Msg("could not share the usage limit with other malaruns")
	}
}

// pendingLimit is a limit known before any attempt starts: the record's
// own retry_at (a run that exited 75, or whose malarun died while waiting),
// or another malarun's note for this account, whichever resets later.
func (r *runner) pendingLimit(now time.Time) (usagelimit.Limit, bool) {
	var l usagelimit.Limit
	if r.rec.RetryAt.After(now) {
		l = usagelimit.Limit{RetryAt: r.rec.RetryAt, Type: r.rec.LimitType, Waitable: true}
	}
	if shared, ok := (usagelimit.Store{Dir: r.cfg.StateDir}).Read(r.limitKey(), now); ok && shared.RetryAt.After(l.RetryAt) {
		r.log.Info().Time("retry_at", shared.RetryAt).Str("limit_type", shared.Type).Msg("another malarun on this state directory met a usage limit for this account")
		l = shared
	}
	return l, l.Known()
}

// onLimit handles a usage limit: it waits for the reset when that can help
// and fits in what is left of limit_wait (and of session_timeout), and
// returns nil to resume; otherwise it returns the error that ends the run
// with exit 75, the record saying waiting with retry_at.
// why is what the attempt said, for a limit whose reset is unknown.
func (r *runner) onLimit(l usagelimit.Limit, why string, deadline time.Time) error {
	now := time.Now()
	r.shareLimit(l)
	left := r.budget.Left()
	timeoutFirst := false
	if !deadline.IsZero() && deadline.Sub(now) < left {
		left, timeoutFirst = max(0, deadline.Sub(now)), true
	}
	d := usagelimit.Decide(now, l, left, r.rnd)
	switch {
	case d.Action != usagelimit.Wait:
	case r.budget.Total == 0:
		// Even a reset already past is not waited for: limit_wait 0 means
		// exit 75 at once, and the next run (or the orchestrator) tries again.
		d = usagelimit.Decision{Action: usagelimit.Stop, RetryAt: l.RetryAt, Reason: "limit_wait is 0"}
	case !r.lastReset.IsZero() && !l.RetryAt.After(r.lastReset):
		// The API still refuses after the reset malarun waited for: waiting
		// again for the same moment would loop without spending any budget.
		d = usagelimit.Decision{Action: usagelimit.Stop, RetryAt: l.RetryAt, Reason: fmt.Sprintf(
			"the limit was still in force after its reset at %s", r.lastReset.UTC().Format(time.RFC3339))}
	}
	r.rec.RetryAt, r.rec.LimitType = d.RetryAt, l.Type
	if d.Action != usagelimit.Wait {
		reason := d.Reason
		if l.Waitable && l.Known() && l.Reason != "" {
			reason = l.Reason
		}
		if timeoutFirst && l.Waitable && l.Known() {
			reason += "; session_timeout ends the run sooner"
		}
		if !l.Known() && why != "" {
			reason += " (" + why + ")"
		}
		return &RunError{Kind: outcome.RateLimit, Detail: limitDetail(l, d.RetryAt, now) + "; " + reason, RetryAt: d.RetryAt, LimitType: l.Type}
	}
	r.lastReset = l.RetryAt
	r.rec.Status = journal.Waiting
	if err := r.save(); err != nil {
		return err
	}
	r.waiting = true
	r.log.Warn().Time("retry_at", d.RetryAt).Time("until", d.Until).Str("limit_type", l.Type).Stringer("limit_wait_left", r.budget.Left()).
		Str(AlsoEventField, string(EvLimitWait)).Msg("usage limit: waiting for the reset, then resuming the session")
	r.emit(Event{Kind: EvLimitWait, Until: d.Until, RetryAt: d.RetryAt, LimitType: l.Type, Reason: d.Reason})
	wait := time.Until(d.Until)
	if err := r.pause(wait, deadline, "for a usage limit to reset"); err != nil {
		return err // the run ends here: what it spent no longer matters
	}
	r.budget.Spend(wait)
	r.waiting = false
	r.rec.Status, r.rec.RetryAt, r.rec.LimitType = journal.Processing, time.Time{}, ""
	return r.save()
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
func limitNote(l usagelimit.Limit) string {
	what := "a usage limit"
	if l.Type != "" {
		what = fmt.Sprintf("a usage limit (%s)", l.Type)
	}
	return "Your previous request was refused because the account reached " + what +
		"; the limit has reset and nothing in your work caused it. Nothing is lost: continue where you were."
}

// lookupEnv is envValue that also says whether name is set.
func lookupEnv(env []string, name string) (string, bool) {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v, true
		}
	}
	return "", false
}
