package usagelimit

import (
	"fmt"
	"time"
)

// Limit is what is known about one usage or rate limit.
type Limit struct {
	// RetryAt is the earliest time a new request can pass; zero when unknown.
	RetryAt time.Time
	// Type is the CLI's rateLimitType (five_hour, seven_day, seven_day_opus,
	// seven_day_sonnet, seven_day_overage_included, overage), "spend_limit"
	// for a spend cap named only in text, or "" when nothing said.
	Type string
	// Waitable is false when waiting for the reset cannot let the run go
	// on: the account needs credits, or a spend cap is reached.
	Waitable bool
	// Reason says, in words a user can act on, why the limit is not
	// waitable or why its reset is unknown; "" otherwise.
	Reason string
	// LiftsAtPlanReset: not waitable as the text tells it (credits spent
	// or capped, no reset named), but a plan window's reset lifts it: a
	// rate_limit_event that names the window and its reset makes it
	// waitable (Merge).
	LiftsAtPlanReset bool
}

// Known reports whether the reset time is known.
func (l Limit) Known() bool { return !l.RetryAt.IsZero() }

// Event is the part of a rate_limit_event's rate_limit_info that matters
// here (docs/design.md §F19).
type Event struct {
	Status string // allowed, allowed_warning, rejected
	// ResetsAt is in unix seconds; 0 when absent. The stream decoder keeps
	// only [stream.minResetsAt, stream.maxResetsAt] (years 2000 to 2099):
	// a millisecond value would make a RetryAt that record.json could not
	// encode (years past 9999).
	ResetsAt      int64
	RateLimitType string
	ErrorCode     string // credits_required when the API's 429 body said so
	// UsingOverage: the window is used up but usage credits pay, so the
	// request passed (isUsingOverage): not a stop.
	UsingOverage bool
	// APIError is the result's api_error (2.1.332): the CLI's own name for
	// the cause, some of which no reset clears.
	APIError string
}

// FromEvent reads a rate_limit_event. ok is false when the event is not a
// limit that stopped a request: "allowed" and "allowed_warning" only say
// how much of a window is used (the caller may log them). An error code
// that waiting cannot clear makes a limit whatever the status says, since
// the CLI sets it only from a refused request's body.
func FromEvent(ev Event) (l Limit, ok bool) {
	code := ev.ErrorCode
	if _, stuck := notWaitable(ev.APIError); stuck {
		code = ev.APIError
	}
	if reason, stuck := notWaitable(code); stuck && !(code == "credits_required" && ev.RateLimitType == "seven_day_overage_included") {
		l = Limit{Type: ev.RateLimitType, Reason: reason}
		if ev.ResetsAt > 0 {
			l.RetryAt = time.Unix(ev.ResetsAt, 0)
		}
		return l, true
	}
	if ev.Status != "rejected" || ev.UsingOverage {
		return Limit{}, false
	}
	l = Limit{Type: ev.RateLimitType, Waitable: true}
	if ev.ResetsAt > 0 {
		l.RetryAt = time.Unix(ev.ResetsAt, 0)
	} else {
		l.Reason = "claude reported a rejected " + typeOrLimit(ev.RateLimitType) + " without a reset time"
	}
	return l, true
}

// notWaitable names the error codes that no reset clears. credits_required
// is the rate_limit_info errorCode, its one value in both pinned CLIs (a
// 429 whose body carries it: a model or context that needs usage credits;
// only Fable's included weekly allowance, seven_day_overage_included,
// comes back at its reset); the others are 2.1.332's api_error values for
// a model or a long context that runs on credits the account does not
// have, or a model switch nobody could consent to in -p (§F34).
func notWaitable(code string) (reason string, stuck bool) {
	switch code {
	case "consent_unanswered", "no_allowed_fallback", "model_substitution_disabled":
		return fmt.Sprintf("the model now runs on usage credits and claude may not switch to it or to another (%s); waiting fixes nothing, pick another model (--model) or allow the credits", code), true
	case "credits_required", "model_requires_usage_credits", "long_context_credits_required":
		return fmt.Sprintf("the account needs usage credits (%s); waiting for a limit to reset fixes nothing, add credits or change the model", code), true
	}
	return "", false
}

func typeOrLimit(t string) string {
	if t == "" {
		return "limit"
	}
	return t + " limit"
}

// Merge combines what two sources said about the same refusal, usually
// the rate_limit_event (primary: its reset is exact to the second) and the
// result text (fallback). Either one saying waiting cannot help wins.
func Merge(primary, fallback Limit) Limit {
	out := primary
	if !out.Known() {
		out.RetryAt = fallback.RetryAt
	}
	if out.Type == "" {
		out.Type = fallback.Type
	}
	switch {
	case !primary.Waitable:
	case !fallback.Waitable && fallback.LiftsAtPlanReset && primary.Known() && planWindow(primary.Type):
		// Credits are spent or capped, but the request was refused by a
		// plan window that resets at a known time: it passes then.
		out.Reason = ""
	case !fallback.Waitable:
		out.Waitable, out.Reason = false, fallback.Reason
	case out.Known():
		out.Reason = ""
	case out.Reason == "":
		out.Reason = fallback.Reason
	}
	return out
}

// planWindow reports a plan's own usage window (not the credits' cap):
// its reset lets requests pass again without credits.
func planWindow(typ string) bool {
	switch typ {
	case "five_hour", "seven_day", "seven_day_opus", "seven_day_sonnet", "seven_day_overage_included":
		return true
	}
	return false
}
