package supervisor

import (
	"strconv"
	"strings"

	"github.com/malarun/malarun/internal/environ"
	"github.com/malarun/malarun/internal/run"
)

// claudeArgs are the flags malarun owns, then the user's.
func claudeArgs(cfg Config, spec run.Attempt) []string {
	args := []string{"-p", "--output-format", "stream-json", "--verbose"}
	if cfg.PartialMessages {
		args = append(args, "--include-partial-messages")
	}
	// A hook prints nothing while it runs unless asked to (§F27): without
	// these lines a long Stop hook is a silence, taken for a hang.
	if !hasFlag(cfg.ExtraArgs, "--include-hook-events") {
		args = append(args, "--include-hook-events")
	}
	if spec.Resume {
		args = append(args, "--resume", spec.SessionID)
	} else {
		args = append(args, "--session-id", spec.SessionID)
	}
	if spec.BudgetUSD > 0 && !hasFlag(cfg.ExtraArgs, "--max-budget-usd") {
		args = append(args, "--max-budget-usd", strconv.FormatFloat(spec.BudgetUSD, 'f', -1, 64))
	}
	return append(args, cfg.ExtraArgs...)
}

// hasFlag reports whether args set flag, as "--flag value" or "--flag=value".
func hasFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == flag || strings.HasPrefix(a, flag+"=") {
			return true
		}
	}
	return false
}

// attemptEnv is claude's environment for attempt n: the run's (env), with
// the TRACEPARENT of the attempt's span when traces are exported
// (traceparent, Deps.Traceparent).
func attemptEnv(env []string, traceparent func(int) (string, string), n int) []string {
	if traceparent == nil {
		return env
	}
	tp, ts := traceparent(n)
	if tp == "" {
		return env
	}
	env = environ.Without(env, "TRACESTATE")
	return environ.With(environ.With(env, "TRACEPARENT", tp), "TRACESTATE", ts)
}
