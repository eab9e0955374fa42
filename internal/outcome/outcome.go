// Package outcome names how a run ends, once. The retry machine's
// failures, the supervisor's errors, the exit code table, the --json
// report's "outcome" and the --events "finished" line all use these names,
// so a run that gave up is "retries_exhausted" wherever it is read.
package outcome

import "errors"

// Outcome is how a run ended. It is also an error: a failed run's error
// wraps its outcome, so errors.Is(err, outcome.Budget) asks why it failed.
type Outcome string

// The outcomes, one per exit code (interrupted: 128 + the signal: 129, 130, 131, 143).
// The names are the --json report's (schema version 1): never rename one.
const (
	Success Outcome = "success"
	// ErrorResult: the CLI finished with an error result that retrying cannot fix.
	ErrorResult Outcome = "error_result"
	// Usage: a usage or configuration error (a bad flag or value, a prompt
	// template that does not parse, a state_dir that names a file).
	Usage Outcome = "usage"
	// RetriesExhausted: hangs or crashes used up the retries.
	RetriesExhausted Outcome = "retries_exhausted"
	// NotSafeToRetry: tool calls with side effects happened and no session can be resumed.
	NotSafeToRetry Outcome = "not_safe_to_retry"
	// ContextExhausted: the context filled up more often than max_continuations allows.
	ContextExhausted Outcome = "context_exhausted"
	// Poisoned: the malarun died too many times in a row; not run again until --reset.
	Poisoned Outcome = "poisoned"
	// Busy: another malarun is already running this issue.
	Busy Outcome = "busy"
	// Auth: the API refused the credentials.
	Auth Outcome = "auth"
	// Budget: max_cost_usd was reached.
	Budget Outcome = "budget"
	// RateLimit: a usage or rate limit; try again later.
	RateLimit Outcome = "rate_limit"
	// SessionTimeout: session_timeout elapsed.
	SessionTimeout Outcome = "session_timeout"
	// StartFailed: the claude binary was not found or could not start.
	StartFailed Outcome = "start_failed"
	// APIUnreachable: the API cannot be reached for a reason retrying cannot
	// fix (a name not found, a port closed, a certificate refused), and no
	// request of the run had succeeded: a configuration error.
	APIUnreachable Outcome = "api_unreachable"
	// Interrupted: malarun got a shutdown signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) and stopped the run.
	Interrupted Outcome = "interrupted"
	// Error: trouble of malarun's own (a state directory it cannot write).
	Error Outcome = "error"
)

// Error is the outcome in words, for error messages.
func (o Outcome) Error() string {
	switch o {
	case Success:
		return "success"
	case ErrorResult:
		return "claude finished with an error"
	case Usage:
		return "configuration error"
	case RetriesExhausted:
		return "retries exhausted"
	case NotSafeToRetry:
		return "not safe to retry"
	case ContextExhausted:
		return "context restarts exhausted"
	case Poisoned:
		return "issue poisoned"
	case Busy:
		return "issue is already running"
	case Auth:
		return "authentication failed"
	case Budget:
		return "cost budget exhausted"
	case RateLimit:
		return "rate or usage limit reached"
	case SessionTimeout:
		return "session timeout"
	case StartFailed:
		return "claude could not start"
	case APIUnreachable:
		return "API unreachable"
	case Interrupted:
		return "interrupted"
	}
	return string(o)
}

// Of is the outcome of a run's error: Success for nil, the Outcome it
// wraps, or Error for any other error.
func Of(err error) Outcome {
	if err == nil {
		return Success
	}
	if o, ok := errors.AsType[Outcome](err); ok {
		return o
	}
	return Error
}
