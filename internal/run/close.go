package run

import (
	"time"

	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/record"
)

// Closing is how a run's end is recorded (docs/design.md §D7, §D10,
// §D13): an interrupted, stopped or waiting run stays resumable and costs
// no reclaim, so cancelled CI jobs never poison an issue, and an
// orchestrator's retry of exit 3, 75 or 124 continues the work.
type Closing struct {
	Status record.Status
	// Reason is the error's sentence ("" on success).
	Reason string
	// RetryAt and LimitType: the usage limit the run waits for (zero: none).
	RetryAt   time.Time
	LimitType string
	// KeepReclaims: the run was interrupted, which is no malarun's death
	// nor its end: the count of deaths in a row stands. Otherwise it is
	// back to 0.
	KeepReclaims bool
	// ClearInFlight: the run succeeded, so no call or task is cut off.
	ClearInFlight bool
}

// Ending is what Close decides from: the run's outcome ("" for success),
// its sentence, the limit a rate-limit error carries, and the state.
type Ending struct {
	Outcome   outcome.Outcome
	Reason    string
	RetryAt   time.Time
	LimitType string
}

// Close decides how the end of a run is recorded.
func Close(s State, e Ending) Closing {
	c := Closing{Status: record.StatusFor(e.Outcome), Reason: e.Reason}
	switch {
	case e.Outcome == outcome.RateLimit:
		// The session is kept for the next run; retry_at says when.
		c.Status, c.RetryAt, c.LimitType = record.Waiting, e.RetryAt, e.LimitType
	case e.Outcome == outcome.Interrupted && s.Waiting():
		// Stopped during a limit wait: still waiting for the same reset.
		c.Status, c.RetryAt, c.LimitType = record.Waiting, s.RetryAt, s.LimitType
	}
	c.ClearInFlight = e.Outcome == outcome.Success
	c.KeepReclaims = e.Outcome == outcome.Interrupted
	return c
}
