package attempt

import (
	"fmt"
	"strings"

	"github.com/malarun/malarun/internal/stream"
)

// The decided Ending of every error result the CLI can print. Success is
// decided before this table, by is_error and subtype alone (docs/design.md §F10):
// a result with is_error false and subtype success is a success whatever
// its terminal_reason says. Everything here has is_error true or an error
// subtype. The CLI's docs list these values up to 2.1.240 (docs/design.md §F21);
// a value that is not here is reported as it came (exit 1, and a warning)
// instead of being guessed at.

// bySubtype decides the result subtypes that say what happened on their own.
var bySubtype = map[string]Ending{
	// The CLI stopped at --max-turns: more turns are the user's call.
	"error_max_turns": MaxTurns,
	// The CLI stopped at the --max-budget-usd malarun gave it: exit 9.
	"error_max_budget_usd": BudgetExceeded,
	// The CLI already retried the answer against the user's schema; asking
	// the same again repeats the failure.
	"error_max_structured_output_retries": ErrorResult,
}

// byTerminalReason decides the rest by terminal_reason. api_error is
// decided by its status (byAPIStatus); "" (an older CLI) by status and text.
var byTerminalReason = map[string]Ending{
	// A finished turn with is_error true: decided by status and text below.
	"completed": ErrorResult,
	// --max-turns reached.
	"max_turns": MaxTurns,
	// The stream or a tool was cut (a dropped connection, a killed tool):
	// the session holds the work, so resume it. If malarun itself stopped
	// the CLI (a hang, a signal), malarun's own stop wins (see byResult).
	"aborted_streaming": APIError,
	"aborted_tools":     APIError,
	// The model failed to answer, or kept producing malformed tool calls:
	// another turn is a new sample and the session keeps the work.
	"model_error":                  APIError,
	"malformed_tool_use_exhausted": APIError,
	// Decided by api_error_status.
	"api_error": APIError,
	// The conversation no longer fits, or holds what the API refuses (an
	// image): it stays in the history, so never resume into it; a new
	// session from a checkpoint or the task (the fresh-session path).
	"blocking_limit":       ContextFull,
	"prompt_too_long":      ContextFull,
	"rapid_refill_breaker": ContextFull,
	"image_error":          ContextFull,
	// The CLI's own budget stop (--max-budget-usd): exit 9.
	"budget_exhausted": BudgetExceeded,
	// The user's hooks or settings ended the turn on purpose, or the CLI
	// could not set a turn up (its configuration): the same again gives the
	// same answer.
	"hook_stopped":                      ErrorResult,
	"stop_hook_prevented":               ErrorResult,
	"tool_deferred":                     ErrorResult,
	"tool_deferred_unavailable":         ErrorResult,
	"background_requested":              ErrorResult,
	"structured_output_retry_exhausted": ErrorResult,
	"turn_setup_failed":                 ErrorResult,
}

// byAPIStatus decides an api_error (or a result without terminal_reason)
// by the HTTP status the API answered.
func byAPIStatus(status int) Ending {
	switch {
	case status == 401 || status == 403:
		return Auth // the credentials are refused: exit 8
	case status == 429:
		return RateLimit // a usage or rate limit: exit 75
	case status == 413:
		return ContextFull // the request is too large to send again
	case status == 0 || status == 529 || status >= 500:
		// Overloaded, a server error, or no answer at all: transient, and
		// the CLI has already retried; resume the session later.
		return APIError
	}
	return ErrorResult // any other 4xx: the request itself is wrong
}

// resultClass is the table's decision for one error result.
type resultClass struct {
	ending Ending
	// unknown is the value the table does not know ("" when it knew all),
	// for a warning: the CLI has changed.
	unknown string
}

// classifyResult decides an error result by the table.
func classifyResult(r *stream.Event) resultClass {
	if r.StartupFailureReason != "" {
		e, _, unknown := byStartup(r)
		return resultClass{ending: e, unknown: unknown}
	}
	for _, e := range r.Errors {
		if strings.Contains(e, "No conversation found") {
			return resultClass{ending: ResumeNotFound}
		}
	}
	if contextFull(r.Result, r.TerminalReason) {
		return resultClass{ending: ContextFull}
	}
	if k, ok := bySubtype[r.Subtype]; ok {
		return resultClass{ending: k}
	}
	if r.Subtype != "success" && r.Subtype != "error_during_execution" && r.Subtype != "" {
		return resultClass{ending: ErrorResult, unknown: fmt.Sprintf("subtype %q", r.Subtype)}
	}
	if isThrottleText(r.Result) {
		// A 429 without the account's limit headers: the server's own
		// throttle, gone in seconds or minutes (2.1.332 retries it
		// itself, 2.1.197 does not): resumed like an overloaded API, not
		// an account limit with no reset (§F34).
		return resultClass{ending: APIError}
	}
	if isUsageLimitText(r.Result) {
		return resultClass{ending: RateLimit}
	}
	switch k, ok := byTerminalReason[r.TerminalReason]; {
	case r.TerminalReason == "" || r.TerminalReason == "api_error" || r.TerminalReason == "completed":
		if r.APIErrorStatus != 0 || r.TerminalReason == "api_error" {
			return resultClass{ending: byAPIStatus(r.APIErrorStatus)}
		}
		return resultClass{ending: ErrorResult}
	case ok:
		if k == APIError && r.APIErrorStatus != 0 {
			// An aborted or failed turn that still got a status: the status says more.
			return resultClass{ending: byAPIStatus(r.APIErrorStatus)}
		}
		return resultClass{ending: k}
	}
	return resultClass{ending: ErrorResult, unknown: fmt.Sprintf("terminal_reason %q", r.TerminalReason)}
}

// UnknownResult names what of an error result the table does not know
// ("" when it knows it all), for a warning as the line comes: the CLI has
// changed.
func UnknownResult(r *stream.Event) string { return classifyResult(r).unknown }

// isUsageLimitText recognises the CLI's usage-limit texts, such as
// "Claude AI usage limit reached|1749924000" and
// "You've hit your limit · resets 2am (Europe/Paris)", in any case.
func isUsageLimitText(s string) bool {
	return containsFold(s, "usage limit reached") || containsFold(s, "hit your limit")
}

// isThrottleText recognises both pinned CLIs' text for a 429 that is not
// the account's limit: "API Error: Server is temporarily limiting requests
// (not your usage limit) · ...".
func isThrottleText(s string) bool { return containsFold(s, "(not your usage limit)") }

// containsFold reports whether s holds sub, ASCII letters compared
// without case (sub is lower-case ASCII). It allocates nothing: a result's
// text can be megabytes.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		j := 0
		for j < len(sub) && lowerASCII(s[i+j]) == sub[j] {
			j++
		}
		if j == len(sub) {
			return true
		}
	}
	return false
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// contextFull recognises the CLI saying the conversation no longer fits:
// the API's 400 "prompt is too long", the CLI's own refusal at its blocking
// limit (docs/design.md §F14), or compaction that keeps failing.
func contextFull(result, terminalReason string) bool {
	switch terminalReason {
	case "blocking_limit", "prompt_too_long":
		return true
	}
	return strings.Contains(result, "Prompt is too long") || strings.Contains(result, "Autocompact is thrashing")
}
