package attempt

import (
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/stream"
)

// Every terminal_reason and result subtype the CLI documents
// (docs/design.md §F21), and invented ones, has a decided outcome.
func TestEveryTerminalReasonHasAnOutcome(t *testing.T) {
	result := func(subtype, reason string, status int, text string) *stream.Event {
		return &stream.Event{Type: "result", Subtype: subtype, IsError: true, TerminalReason: reason, APIErrorStatus: status, Result: text}
	}
	cases := []struct {
		r       *stream.Event
		stop    StopReason
		want    Ending
		unknown bool
	}{
		{result("error_during_execution", "completed", 0, "boom"), StopExited, ErrorResult, false},
		{result("error_max_turns", "max_turns", 0, ""), StopExited, MaxTurns, false},
		{result("error_during_execution", "max_turns", 0, ""), StopExited, MaxTurns, false},
		{result("error_during_execution", "tool_deferred", 0, ""), StopExited, ErrorResult, false},
		{result("error_during_execution", "aborted_streaming", 0, ""), StopExited, APIError, false},
		{result("error_during_execution", "aborted_tools", 0, ""), StopExited, APIError, false},
		{result("error_during_execution", "aborted_streaming", 0, ""), StopHang, Hang, false}, // malarun's own ending wins
		{result("error_during_execution", "hook_stopped", 0, ""), StopExited, ErrorResult, false},
		{result("error_during_execution", "stop_hook_prevented", 0, ""), StopExited, ErrorResult, false},
		{result("error_during_execution", "background_requested", 0, ""), StopExited, ErrorResult, false},
		{result("success", "blocking_limit", 0, "Prompt is too long"), StopExited, ContextFull, false},
		{result("error_during_execution", "rapid_refill_breaker", 0, ""), StopExited, ContextFull, false},
		{result("error_during_execution", "prompt_too_long", 400, ""), StopExited, ContextFull, false},
		{result("error_during_execution", "image_error", 400, ""), StopExited, ContextFull, false},
		{result("error_during_execution", "model_error", 0, ""), StopExited, APIError, false},
		{result("success", "api_error", 529, "Overloaded"), StopExited, APIError, false},
		{result("success", "api_error", 500, ""), StopExited, APIError, false},
		{result("success", "api_error", 0, "Connection error"), StopExited, APIError, false},
		{result("success", "api_error", 400, "invalid_request_error"), StopExited, ErrorResult, false},
		{result("success", "api_error", 401, ""), StopExited, Auth, false},
		{result("success", "api_error", 403, ""), StopExited, Auth, false},
		{result("success", "api_error", 429, "You've hit your 5-hour limit · resets 4:57pm (UTC)"), StopExited, RateLimit, false},
		{result("success", "api_error", 413, ""), StopExited, ContextFull, false},
		// 2.1.197's usage limit: terminal_reason completed, the status says it.
		{result("success", "completed", 429, "You've hit your session limit · resets 9:30pm (UTC)"), StopExited, RateLimit, false},
		{result("error_during_execution", "malformed_tool_use_exhausted", 0, ""), StopExited, APIError, false},
		{result("error_max_budget_usd", "budget_exhausted", 0, ""), StopExited, BudgetExceeded, false},
		{result("error_during_execution", "budget_exhausted", 0, ""), StopExited, BudgetExceeded, false},
		{result("error_max_structured_output_retries", "structured_output_retry_exhausted", 0, ""), StopExited, ErrorResult, false},
		{result("error_during_execution", "structured_output_retry_exhausted", 0, ""), StopExited, ErrorResult, false},
		{result("error_during_execution", "tool_deferred_unavailable", 0, ""), StopExited, ErrorResult, false},
		{result("error_during_execution", "turn_setup_failed", 0, ""), StopExited, ErrorResult, false},
		{result("success", "", 0, "Claude AI usage limit reached|1749924000"), StopExited, RateLimit, false},
		// The server's throttle, not the account's limit (both pinned CLIs' words, §F34): resumed later.
		{result("success", "api_error", 429, "API Error: Server is temporarily limiting requests (not your usage limit) · this may be a temporary capacity issue"), StopExited, APIError, false},
		{result("success", "", 529, ""), StopExited, APIError, false}, // a CLI before terminal_reason
		// Invented by a newer CLI: exit 1, and the raw value is reported.
		{result("error_during_execution", "quantum_decoherence", 0, ""), StopExited, ErrorResult, true},
		{result("error_exotic", "completed", 0, ""), StopExited, ErrorResult, true},
	}
	for _, c := range cases {
		a := Ended{Machine: &State{stopped: c.stop, hangLimit: 1}, Log: &Log{Result: c.r, SawInit: true}}
		kind, reason := Classify(a)
		if kind != c.want {
			t.Errorf("%s/%s/%d ended %v: %v, want %v (%s)", c.r.Subtype, c.r.TerminalReason, c.r.APIErrorStatus, c.stop, kind, c.want, reason)
		}
		if got := strings.Contains(reason, "unknown"); got != c.unknown {
			t.Errorf("%s/%s: reason %q; unknown value reported: %v, want %v", c.r.Subtype, c.r.TerminalReason, reason, got, c.unknown)
		}
		if c.unknown && !strings.Contains(reason, c.r.TerminalReason) {
			t.Errorf("the reason %q does not quote the raw value", reason)
		}
	}
	// Every value the docs list is in the table: none falls to "unknown".
	for _, reason := range []string{"completed", "max_turns", "tool_deferred", "aborted_streaming", "aborted_tools", "hook_stopped",
		"stop_hook_prevented", "background_requested", "blocking_limit", "rapid_refill_breaker", "prompt_too_long", "image_error",
		"model_error", "api_error", "malformed_tool_use_exhausted", "budget_exhausted", "structured_output_retry_exhausted",
		"tool_deferred_unavailable", "turn_setup_failed"} {
		if _, ok := byTerminalReason[reason]; !ok {
			t.Errorf("terminal_reason %q is not in the table", reason)
		}
	}
}

// A success is decided by is_error and subtype alone; a later error result
// overrides an earlier success, and a background timeout is never a success.
func TestTheLastResultDecidesTheAttempt(t *testing.T) {
	ok := &stream.Event{Type: "result", Subtype: "success", TerminalReason: "whatever_new"}
	a := Ended{Machine: &State{stopped: StopExited, lastOK: true, stood: true}, Log: &Log{Result: ok}}
	if k, _ := Classify(a); k != Success {
		t.Errorf("success with an unknown terminal_reason: %v", k)
	}
	a.Log.Result = &stream.Event{Type: "result", Subtype: "error_during_execution", IsError: true, TerminalReason: "api_error", APIErrorStatus: 529}
	if k, _ := Classify(a); k != APIError {
		t.Errorf("a later 529 after a success: %v, want api-error", k)
	}
	a = Ended{Machine: &State{stopped: StopBackgroundTimeout, cutTasks: []stream.Task{{ID: "b1", Description: "the build"}}}, Log: &Log{Result: ok}}
	if k, reason := Classify(a); k != Hang || !strings.Contains(reason, "b1 (the build)") {
		t.Errorf("background timeout after success: %v %q", k, reason)
	}
}

// The limit an attempt reports, from the event, the result's api_error
// (2.1.332) and the text: a rejected window paid by usage credits is no
// limit, a model that needs credits is not waitable whatever the text.
func TestLimitOfAnAttempt(t *testing.T) {
	now := time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)
	rejected := func(typ string, overage bool) *stream.Event {
		return &stream.Event{Type: "rate_limit_event", RateLimitStatus: "rejected", RateLimitType: typ, ResetsAt: now.Add(time.Hour).Unix(), RateLimitUsingOverage: overage}
	}
	m := New(Limits{}, now)
	for _, c := range []struct {
		name     string
		lines    []*stream.Event
		limited  bool
		waitable bool
	}{
		{"a 5-hour limit", []*stream.Event{rejected("five_hour", false),
			{Type: "result", Subtype: "success", IsError: true, APIErrorStatus: 429, Result: "You've hit your 5-hour limit · resets 1pm (UTC)", APIError: "usage_limit_reached"}}, true, true},
		{"a window paid by credits", []*stream.Event{rejected("five_hour", true)}, false, false},
		{"a model that needs credits", []*stream.Event{
			{Type: "result", Subtype: "success", IsError: true, APIErrorStatus: 429, Result: "Mythos requires usage credits. Switch to another model to continue.", APIError: "model_requires_usage_credits"}}, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log Log
			for _, ev := range c.lines {
				log.Observe(*ev)
			}
			if (log.RateLimit != nil) != (c.lines[0].Type == "rate_limit_event" && !c.lines[0].RateLimitUsingOverage) {
				t.Errorf("the log kept the event: %v", log.RateLimit != nil)
			}
			l := LimitOf(m, &log, now, time.UTC)
			if c.limited && l.Waitable != c.waitable {
				t.Errorf("waitable %v, want %v (%+v)", l.Waitable, c.waitable, l)
			}
		})
	}
}
