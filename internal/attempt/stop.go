package attempt

// StopReason says why an attempt's process stopped.
type StopReason int

const (
	// StopNone: the process has not been told to stop (yet).
	StopNone StopReason = iota
	// StopExited: the CLI exited on its own; only leftovers of its tree are ended.
	StopExited
	// StopHang: silent past idle_timeout or tool_timeout; malarun killed it.
	StopHang
	// StopLingered: alive past result_exit_timeout after its final result with
	// no background task running; killed, the result kept.
	StopLingered
	// StopAuth: api_retry reported a 401; killed instead of sitting through
	// ten retries of a request that cannot succeed.
	StopAuth
	// StopInterrupted: malarun got a shutdown signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) or its context ended.
	StopInterrupted
	// StopSessionTimeout: session_timeout elapsed.
	StopSessionTimeout
	// StopPressure: the context window is nearly full; stopped at a safe point.
	StopPressure
	// StopBackgroundTimeout: background tasks still ran background_timeout
	// after the result that left them running.
	StopBackgroundTimeout
	// StopUsageLimit: the CLI announced (api_retry for a 429) that it would
	// sleep longer than what is left of limit_wait before retrying; killed,
	// and the run stops with exit 75 and the end of that sleep as retry_at.
	StopUsageLimit
	// StopUnreachable: before the run ever talked to the API, the CLI could not
	// reach it for a reason retrying cannot fix (a name not found, a port
	// closed, a certificate refused: §D17); killed at the first sign.
	StopUnreachable
)

// String is the name the --json report uses for how an attempt ended
// (schema version 1; background-timeout is new in it).
func (e StopReason) String() string {
	return [...]string{"none", "exited", "hang", "lingered", "auth", "interrupted", "session-timeout", "context-pressure", "background-timeout", "usage-limit", "api-unreachable"}[e]
}

// Grace says which grace period a stop gets.
type Grace int

const (
	// KillGrace (kill_grace): malarun decided the process must go.
	KillGrace Grace = iota
	// ShutdownGrace (shutdown_grace): the user asked malarun to stop.
	ShutdownGrace
)
