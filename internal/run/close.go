package run

import (
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/record"
)

// Ending is how the driver saw the run end, for Close: the outcome of its
// error (outcome.Of: Success for none), the error's sentence, and the
// exit code the command line gives it (cmd/malarun's table, through the
// driver: the run knows no exit code).
type Ending struct {
	Outcome  outcome.Outcome
	Reason   string
	ExitCode int
}

// Close records the run's end in its state (docs/design.md §D7, §D10,
// §D13): an interrupted, stopped or waiting run stays resumable and costs
// no reclaim, so cancelled CI jobs never poison an issue, and an
// orchestrator's retry of exit 3, 75 or 124 continues the work. The usage
// limit it stopped on (exit 75), or was stopped waiting for, stays for the
// record's retry_at; a success forgets what was cut off. Closed again (the
// record could not be saved, so the command exits with that), the last
// ending stands.
func Close(s State, e Ending) State {
	s.Outcome, s.Reason, s.ExitCode = e.Outcome, e.Reason, e.ExitCode
	s.Status = record.StatusFor(e.Outcome)
	switch {
	case e.Outcome == outcome.RateLimit:
		// The session is kept for the next run; retry_at says when (the
		// limit the run stopped on, onLimit).
	case e.Outcome == outcome.Interrupted && s.Waiting():
		// Stopped during a limit wait: still waiting for the same reset.
		s.Status = record.Waiting
	default:
		s.Limit = record.UsageLimit{}
	}
	if e.Outcome == outcome.Success {
		s.Cut = record.InFlight{}
	}
	if e.Outcome != outcome.Interrupted {
		// Interrupted is no malarun's death nor the run's end: the count
		// of deaths in a row stands. Any other end sets it back.
		s.Reclaims = 0
	}
	return s
}
