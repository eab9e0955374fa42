package attempt

// Ending is how an attempt ended, as the run's decisions (internal/run) see
// it: the one word for it. Classify decides it from the stream, the
// StopReason and the CLI's exit; run.Next turns it into the next step, and
// an Ending that retrying cannot fix into the run's outcome (the one
// mapping between the two words: docs/design.md §D13). Its String is an
// attempt's "outcome" in the --json report and the attempt_ended event.
type Ending int

const (
	Success         Ending = iota // result success, is_error false
	Hang                          // silent past idle_timeout or tool_timeout; tree killed
	Crash                         // died without a result line (or with a line cut short)
	ResumeNotFound                // --resume answered "No conversation found"
	ErrorResult                   // an error result retrying cannot fix
	MaxTurns                      // result error_max_turns
	Auth                          // 401/403, or api_retry reporting authentication_failed
	RateLimit                     // 429 after the CLI's own retries, or a rejected rate-limit event
	EarlyExit                     // the CLI exited before its init line: bad arguments, broken install
	SessionTimeout                // session_timeout elapsed
	Interrupted                   // malarun got a shutdown signal
	BudgetExceeded                // the CLI stopped at the --max-budget-usd malarun gave it
	ContextPressure               // malarun stopped the attempt: the context window is nearly full
	ContextFull                   // the CLI says the context is full (prompt too long, blocking limit)
	APIError                      // a transient API or model failure the CLI gave up on (5xx, 529, aborted stream)
	Unreachable                   // the API cannot be reached and never was in this run: a name, a port, a certificate
	StartupFailed                 // the CLI refused to start for a cause that can pass (its startup_failure_reason): tried again
	PromptLost                    // a success without the model: the prompt never reached it (num_turns 0); sent again
)

// String is the report's spelling (schema version 1: hyphenated).
func (e Ending) String() string {
	return [...]string{"success", "hang", "crash", "resume-not-found", "error-result", "max-turns",
		"auth", "rate-limit", "early-exit", "session-timeout", "interrupted", "budget-exceeded", "context-pressure", "context-full", "api-error", "api-unreachable",
		"startup-failed", "prompt-lost"}[e]
}
