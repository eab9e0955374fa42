package ui

import (
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/record"
)

// EndWord is how a run's end is said everywhere (the end-of-run line, the
// GitHub summary, malarun show): its status as the record and `malarun
// status` say it, and the outcome after it when that says more
// ("stopped: retries_exhausted"); "" for no outcome (issue 34).
func EndWord(outcomeName string) string {
	if outcomeName == "" {
		return ""
	}
	st := string(record.StatusFor(outcome.Outcome(outcomeName)))
	if outcomeName == string(outcome.Success) || outcomeName == string(outcome.Interrupted) {
		return st
	}
	return st + ": " + outcomeName
}
