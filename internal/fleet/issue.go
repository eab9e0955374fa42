// Package fleet sums up a state directory: what every issue's latest run
// did, for the morning after a night of runs (`malarun summary`). It reads
// each issue's record and its run's timeline as outside input (the
// statefile rules: nothing planted there can hang it, fill its memory or
// be trusted), and decides nothing: the numbers are the records'.
package fleet

import (
	"time"

	"github.com/malarun/malarun/internal/stream"
)

// Issue is what the summary knows of one issue: its record, and the
// decisions its latest run's timeline holds.
type Issue struct {
	ID string
	// Status is the word `malarun status` shows (journal.Entry.Word):
	// succeeded, failed, stopped, interrupted, waiting, processing,
	// orphaned, poisoned, damaged.
	Status string
	// Damaged is why the record could not be read ("" when it could).
	Damaged string
	RunID   string
	// RunDir is the record's run folder, Described its status in words
	// (journal.Entry.Described).
	RunDir, Described string
	// Outcome is how the run's last malarun ended (its finished line; ""
	// while none has), ExitCode the code it exited with (HasExit false:
	// none yet), Reason the record's.
	Outcome  string
	ExitCode int
	HasExit  bool
	Reason   string
	// RetryAt and LimitType: a run waiting for a usage limit's reset.
	RetryAt   time.Time
	LimitType string
	Attempts  int
	CostUSD   float64 // the run's, every malarun of it
	Tokens    stream.Tokens
	// Started and Updated are the run's start and its record's last save;
	// Ended is when its last malarun finished (zero while it runs or
	// waits).
	Started, Updated, Ended time.Time
	// Running: the attempt that runs now (0: none), since when, what
	// claude is doing (a phase: text, tool, ...; "" unknown) and when
	// malarun last read a line of it.
	Running      int
	RunningSince time.Time
	Phase        string
	Doing        string
	LastLine     time.Time
	Rescues      Rescues
	// HangLost is the time the run's hangs took: from claude's last line
	// to the next attempt's start, or to the run's end.
	HangLost time.Duration
	// NoResponseUncounted: the run's record was written by a malarun that
	// counted no request never answered (Rescues.NoResponseMS is then
	// unknown, not 0).
	NoResponseUncounted bool
}

// Rescues count what malarun did for the run beyond starting claude.
type Rescues struct {
	// Hangs by the phase claude was silent in (text, tool, ...): at most
	// phasesMax names, the rest counted as "other".
	Hangs map[string]int
	// Crashes: attempts that ended without a result (claude died).
	Crashes int
	// LimitWaits: waits for a usage limit's reset, by this malarun or as
	// an exit 75 an orchestrator ran again after.
	LimitWaits int
	// Reclaims: runs taken over after their malarun died.
	Reclaims int
	// Restarts: context restarts (a checkpoint, then a fresh session).
	Restarts int
	// Tasks: background tasks claude started.
	Tasks int
	// Retries: claude's own retries of an API request (not an api_retry
	// line malarun stopped claude on: that retry never happened).
	APIRetries int
	// NoResponses are the requests the API never answered that claude
	// asked again itself, and NoResponseMS what they cost (the attempts'
	// attempt_ended entries: docs/design.md §D36).
	NoResponses  int
	NoResponseMS int64
}

// HangCount is every hang, whatever its phase.
func (r Rescues) HangCount() int {
	n := 0
	for _, c := range r.Hangs {
		n += c
	}
	return n
}

// Wall is how long the run has taken: from its start to its last
// malarun's end; to now while an attempt runs; else (waiting, orphaned,
// damaged timeline) to its record's last save.
func (i *Issue) Wall(now time.Time) time.Duration {
	end := i.Ended
	if end.IsZero() {
		end = i.Updated
		if i.Running > 0 {
			end = now
		}
	}
	if i.Started.IsZero() || end.Before(i.Started) {
		return 0
	}
	return end.Sub(i.Started)
}
