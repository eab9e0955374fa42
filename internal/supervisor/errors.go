package supervisor

import (
	"errors"
	"os"
	"time"
)

// Why a run ended without success. The command line maps each to its exit
// code (one table, in cmd/malarun); a *RunError wraps one of these with the
// details a user needs.
var (
	// ErrErrorResult: the CLI finished with an error result that retrying cannot fix.
	ErrErrorResult = errors.New("claude finished with an error")
	// ErrRetriesExhausted: hangs or crashes used up the retries (with
	// max_attempts 1, the first hang or crash).
	ErrRetriesExhausted = errors.New("retries exhausted")
	// ErrNotSafeToRetry: tool calls happened and no session can be resumed.
	ErrNotSafeToRetry = errors.New("not safe to retry")
	// ErrAuth: the API refused the credentials.
	ErrAuth = errors.New("authentication failed")
	// ErrRateLimit: a usage or rate limit; try again later.
	ErrRateLimit = errors.New("rate or usage limit reached")
	// ErrSessionTimeout: session_timeout elapsed.
	ErrSessionTimeout = errors.New("session timeout")
	// ErrStart: the claude binary was not found or could not start.
	ErrStart = errors.New("claude could not start")
	// ErrInterrupted: malarun got SIGINT or SIGTERM and stopped the run.
	ErrInterrupted = errors.New("interrupted")
	// ErrBusy: another malarun is already running this issue.
	ErrBusy = errors.New("issue is already running")
)

// RunError is the error Run returns: the kind (one of the Err* values), a
// sentence for the user, and for ErrInterrupted the signal that caused it.
type RunError struct {
	Kind   error
	Detail string
	Signal os.Signal
	// RetryAt (ErrRateLimit) is when the usage limit resets: zero when
	// unknown, or when waiting cannot help. LimitType is its kind (five_hour, ...).
	RetryAt   time.Time
	LimitType string
}

func (e *RunError) Error() string {
	if e.Detail == "" {
		return e.Kind.Error()
	}
	return e.Kind.Error() + ": " + e.Detail
}

func (e *RunError) Unwrap() error { return e.Kind }

// ErrConfig: a usage or configuration error found when the run starts (a
// prompt template that does not parse, a state directory that cannot be made).
var ErrConfig = errors.New("configuration error")

// ErrBudget: max_cost_usd was reached.
var ErrBudget = errors.New("cost budget exhausted")

// ErrContextExhausted: the context filled up more often than max_continuations allows.
var ErrContextExhausted = errors.New("context restarts exhausted")

// ErrPoisoned: the malarun died too many times in a row; it is not
// run again until --reset.
var ErrPoisoned = errors.New("issue poisoned")
