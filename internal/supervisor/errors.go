package supervisor

import (
	"os"

	"github.com/malarun/malarun/internal/outcome"
)

// RunError is the error Run returns when a run fails: its outcome (which
// the command line turns into an exit code, one table in cmd/malarun), a
// sentence for the user, and for outcome.Interrupted the signal that
// caused it. errors.Is(err, outcome.X) asks why a run failed. The rest of
// the end (a usage limit's reset) is in the report (event.Report).
type RunError struct {
	Kind   outcome.Outcome
	Detail string
	Signal os.Signal
	// Headline, when set, names the refusal in place of the outcome's
	// words ("the prompt changed", not "configuration error").
	Headline string
}

func (e *RunError) Error() string {
	head := e.Kind.Error()
	if e.Headline != "" {
		head = e.Headline
	}
	if e.Detail == "" {
		return head
	}
	return head + ": " + e.Detail
}

func (e *RunError) Unwrap() error { return e.Kind }
