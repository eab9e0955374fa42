package fleet

import (
	"errors"
	"io"
	"path/filepath"
	"time"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/statefile"
	"github.com/malarun/malarun/internal/timeline"
)

// maxTimelineBytes bounds how much of one run's timeline is read: a real
// one is kilobytes (a line entry per message of the CLI, a few hundred
// bytes each); a planted sparse file of gigabytes is read no further.
const maxTimelineBytes = 64 << 20

// readTimeline adds to is what the run folder's timeline says malarun did:
// hangs and their phase, crashes, limit waits, context restarts,
// background tasks, claude's API retries, and how its last malarun ended.
// A missing timeline (a run recorded before malarun kept one) adds
// nothing; damaged lines are skipped (timeline.Reader).
func readTimeline(runDir string, is *Issue) error {
	f, err := statefile.Open(filepath.Join(runDir, timeline.FileName))
	if err != nil {
		if errors.Is(err, io.EOF) || isNotExist(err) {
			return nil
		}
		return err
	}
	defer f.Close()
	rd := timeline.NewReader(io.LimitReader(f, maxTimelineBytes))
	rd.SkipLines = true
	var lastLimit time.Time
	for {
		e, err := rd.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		note(is, &e, &lastLimit)
	}
}

// note adds one decision of the timeline to is. A usage limit is counted
// once per reset it waited for: a malarun that waits says limit_wait, one
// that exits 75 says so on its finished line, and the next malarun that
// meets the same limit before its reset says it again.
func note(is *Issue, e *timeline.Entry, lastLimit *time.Time) {
	r := &is.Rescues
	switch event.Kind(e.Event) {
	case event.HangDetected:
		if r.Hangs == nil {
			r.Hangs = map[string]int{}
		}
		phase := e.Phase
		if phase == "" {
			phase = "unknown" // a timeline written before phases (issue 38)
		}
		r.Hangs[phase]++
	case event.AttemptEnded:
		if e.Outcome == "crash" {
			r.Crashes++
		}
	case event.LimitWait:
		countLimit(r, e.RetryAt, lastLimit)
	case event.Restart:
		r.Restarts++
	case event.TaskStarted:
		r.Tasks++
	case event.APIRetry:
		r.APIRetries++
	case event.RunStarted:
		// A malarun runs the run again: the last one's end is past. A run
		// that goes on has no exit yet (one that ended has its record's).
		is.Outcome, is.Ended = "", time.Time{}
		if is.Status == "processing" || is.Status == "orphaned" {
			is.ExitCode, is.HasExit = 0, false
		}
	case event.RunFinished:
		is.Outcome, is.Ended = e.Outcome, e.Time
		if e.ExitCode != nil {
			is.ExitCode, is.HasExit = *e.ExitCode, true
		}
		if t := e.Tokens; t != nil {
			is.Tokens = addTokens(is.Tokens, *t)
		}
		if e.Outcome == "rate_limit" {
			countLimit(r, e.RetryAt, lastLimit)
		}
	}
}

func countLimit(r *Rescues, retryAt time.Time, last *time.Time) {
	if retryAt.IsZero() || !retryAt.Equal(*last) {
		r.LimitWaits++
	}
	*last = retryAt
}

// addTokens sums token counts, saturating: they come from files.
func addTokens(a, b timeline.Tokens) timeline.Tokens {
	return timeline.Tokens{Input: satAdd(a.Input, b.Input), Output: satAdd(a.Output, b.Output),
		CacheCreationInput: satAdd(a.CacheCreationInput, b.CacheCreationInput), CacheReadInput: satAdd(a.CacheReadInput, b.CacheReadInput)}
}

func satAdd(a, b int64) int64 {
	if a < 0 {
		a = 0
	}
	if b < 0 {
		b = 0
	}
	if a > (1<<63-1)-b {
		return 1<<63 - 1
	}
	return a + b
}
