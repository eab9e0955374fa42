package usagelimit

import (
	"testing"
	"time"
)

// TestEveryLimitStateOfThePinnedCLIs classifies each usage-limit and
// credit state the pinned CLIs can print, in their own words (read from
// their code, docs/design.md §F34): waitable with its reset (malarun waits
// within limit_wait, else exits 75 with retry_at), or not (exit 75
// without retry_at and a reason a person can act on). The event is the
// rate_limit_event the CLI prints beside the text (nil: none, or one that
// says nothing the text does not).
func TestEveryLimitStateOfThePinnedCLIs(t *testing.T) {
	now := utc(2026, 6, 10, 12, 0, 0)
	at4 := utc(2026, 6, 10, 16, 1, 0) // "4pm (UTC)", a minute up
	reset := utc(2026, 6, 10, 16, 0, 0)
	window := func(typ string) *Event {
		return &Event{Status: "rejected", ResetsAt: reset.Unix(), RateLimitType: typ}
	}
	cases := []struct {
		name, versions, text string
		event                *Event
		waitable             bool
		retryAt              time.Time
		typ                  string
	}{
		{"five_hour", "2.1.332", "You've hit your 5-hour limit · resets 4pm (UTC)", window("five_hour"), true, reset, "five_hour"},
		{"five_hour", "2.1.197", "You've hit your session limit · resets 4pm (UTC)", window("five_hour"), true, reset, "five_hour"},
		{"five_hour, progress saved", "2.1.332", "You've hit your 5-hour limit · resets 4pm (UTC) · progress saved", nil, true, at4, "five_hour"},
		{"seven_day", "both", "You've hit your weekly limit · resets Jun 12, 4pm (UTC)", nil, true, utc(2026, 6, 12, 16, 1, 0), "seven_day"},
		{"seven_day_opus", "both", "You've hit your Opus limit · resets 4pm (UTC)", nil, true, at4, "seven_day_opus"},
		{"seven_day_sonnet", "both", "You've hit your Sonnet limit · resets 4pm (UTC)", nil, true, at4, "seven_day_sonnet"},
		{"Fable's included allowance", "2.1.332", "You've hit your Fable limit · resets 4pm (UTC). Switch to another model to continue.", nil, true, at4, "seven_day_overage_included"},
		{"Fable's included allowance", "2.1.197", "You've reached your Fable 5 limit. /model to switch models.", window("seven_day_overage_included"), true, reset, "seven_day_overage_included"},
		{"Fable's allowance, credits_required", "both", "You've reached your Fable 5 limit.",
			&Event{Status: "rejected", ResetsAt: reset.Unix(), RateLimitType: "seven_day_overage_included", ErrorCode: "credits_required"}, true, reset, "seven_day_overage_included"},
		{"a plan window, credits out", "2.1.332", "You've hit your 5-hour limit · resets 4pm (UTC) · out of usage credits", window("five_hour"), true, reset, "five_hour"},
		{"credits out, their reset named", "both", "You're out of usage credits · resets 4pm (UTC)", nil, true, at4, "spend_limit"},
		{"spend cap, a plan window behind it", "2.1.332", "You've hit your monthly spend limit · raise it at https://claude.ai/settings/usage · your 5-hour limit resets 4pm (UTC)", nil, true, at4, "five_hour"},
		{"spend cap, the event names the window", "2.1.197", "You've hit your monthly spend limit · raise it at claude.ai/settings/usage", window("five_hour"), true, reset, "five_hour"},
		{"spend cap alone", "both", "You've hit your org's monthly spend limit · run /usage-credits to raise it, or visit claude.ai/admin-settings/usage", window("overage"), false, reset, "overage"},
		{"credits' cap, monthly", "both", "You've hit your org's monthly usage limit · resets Jul 1", nil, false, time.Time{}, "overage"},
		{"a member's own cap", "2.1.332", "You've hit your individual usage limit · resets 4pm (UTC)", nil, true, at4, "overage"},
		{"pooled group budget", "2.1.332", "You've hit your team's pooled group budget · ask your admin to raise it at https://claude.ai/admin-settings/usage", nil, false, time.Time{}, "spend_limit"},
		{"org out of usage", "both", "Your org is out of usage · add funds to continue", nil, false, time.Time{}, "spend_limit"},
		{"seat without credits", "both", "Your seat type doesn't include usage credits", nil, false, time.Time{}, "spend_limit"},
		{"seat without credits, a window behind it", "both", "Your seat type doesn't include usage credits", window("seven_day"), true, reset, "seven_day"},
		{"allocation disabled", "both", "Your usage allocation has been disabled by your admin · run /usage-credits to ask your admin for a higher limit", nil, false, time.Time{}, "spend_limit"},
		{"group at $0", "both", "Your group's usage limit is set to $0 · run /usage-credits to ask your admin for a higher limit", nil, false, time.Time{}, "spend_limit"},
		{"model needs credits", "both", "Fable 5 requires usage credits. /model to switch models.", &Event{Status: "rejected", ErrorCode: "credits_required"}, false, time.Time{}, "spend_limit"},
		{"model needs credits (api_error)", "2.1.332", "Mythos requires usage credits. Switch to another model to continue.",
			&Event{Status: "rejected", RateLimitType: "overage", APIError: "model_requires_usage_credits"}, false, time.Time{}, "overage"},
		{"1M context needs credits", "both", "API Error: Usage credits required for 1M context · turn on usage credits at claude.ai/settings/usage, or use --model to switch to standard context", nil, false, time.Time{}, "spend_limit"},
		{"1M context (api_error)", "2.1.332", "API Error: Usage credits required for 1M context", &Event{APIError: "long_context_credits_required"}, false, time.Time{}, "spend_limit"},
		{"nobody to consent to credits", "2.1.332", "Claude stopped here because Mythos now requires usage credits.", &Event{APIError: "consent_unanswered"}, false, time.Time{}, "spend_limit"},
		{"service off for the org", "both", "This service is disabled for your org", window("five_hour"), false, reset, "five_hour"},
		{"org usage paused", "2.1.332", "Usage is paused for your organization. For help, please contact support.", nil, false, time.Time{}, "spend_limit"},
		{"credits ran out mid-reply", "2.1.332", "API Error: Usage credits ran out before the response was finished.", nil, false, time.Time{}, "spend_limit"},
		{"any other refusal", "both", "You've hit your limit · resets 4pm (UTC)", window("overage"), true, reset, "overage"},
		{"a gateway's budget, dated", "2.1.332", "spend limit reached · resets Jun 12, 12am (UTC)", nil, true, utc(2026, 6, 12, 0, 1, 0), "spend_limit"},
	}
	for _, c := range cases {
		t.Run(c.name+" ("+c.versions+")", func(t *testing.T) {
			got := FromText(c.text, now, nil)
			if c.event != nil {
				if ev, ok := FromEvent(*c.event); ok {
					got = Merge(ev, got)
				}
			}
			if got.Waitable != c.waitable || !got.RetryAt.Equal(c.retryAt) || got.Type != c.typ {
				t.Errorf("%q: waitable %v, retry at %v, type %q; want %v, %v, %q (reason %q)", c.text, got.Waitable, got.RetryAt, got.Type, c.waitable, c.retryAt, c.typ, got.Reason)
			}
			if !got.Waitable && got.Reason == "" {
				t.Errorf("%q: not waitable, and no reason to tell", c.text)
			}
		})
	}
}

// TestEventsThatAreNoStop: a rejected window whose requests usage credits
// pay (isUsingOverage) refused nothing; a throttle is not an account's limit
// (the result decides that one: "not your usage limit").
func TestEventsThatAreNoStop(t *testing.T) {
	if _, ok := FromEvent(Event{Status: "rejected", ResetsAt: 1781107200, RateLimitType: "five_hour", UsingOverage: true}); ok {
		t.Error("a rejected window paid by usage credits is taken for a stop")
	}
	if _, ok := FromEvent(Event{Status: "allowed_warning", RateLimitType: "seven_day"}); ok {
		t.Error("a warning is taken for a stop")
	}
}
