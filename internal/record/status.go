package record

import "github.com/malarun/malarun/internal/outcome"

// StatusFor is the status a run ends with for its outcome: the one word
// `malarun status`, `malarun show`, the report and the summary all use for
// it (issue 34). A run stopped by a usage limit while it waited for one is
// still waiting (the supervisor knows that case; StatusFor does not).
func StatusFor(o outcome.Outcome) Status {
	switch o {
	case outcome.Success:
		return Succeeded
	case outcome.RateLimit:
		return Waiting
	case outcome.Interrupted:
		return Interrupted
	case outcome.RetriesExhausted, outcome.SessionTimeout:
		return Stopped
	}
	return Failed
}
