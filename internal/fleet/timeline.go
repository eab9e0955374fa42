package fleet

import (
	"errors"
	"io"
	"path/filepath"
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/outcome"
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
	var r reading
	for {
		e, err := rd.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		r.note(is, &e)
	}
}

// reading is what note carries from one entry of a timeline to the next.
type reading struct {
	// lastLimit is the reset of the last usage limit counted.
	lastLimit time.Time
	// hangAt is when a hang was found whose lost time is not counted yet
	// (zero: none): it runs to the next attempt's start or the run's end.
	hangAt time.Time
	// retryOf is the attempt whose last entry was an api_retry (0: none).
	retryOf int
}

// maxHangLost bounds what one hang adds to the time lost: a planted
// timeline's numbers are not trusted, and no real hang outlasts a day.
const maxHangLost = 24 * time.Hour

// endHang counts the time from the pending hang's finding to at.
func (rd *reading) endHang(is *Issue, at time.Time) {
	if rd.hangAt.IsZero() {
		return
	}
	if d := at.Sub(rd.hangAt); d > 0 {
		is.HangLost += min(d, maxHangLost)
	}
	rd.hangAt = time.Time{}
}

// note adds one decision of the timeline to is. A usage limit is counted
// once per reset it waited for: a malarun that waits says limit_wait, one
// that exits 75 says so on its finished line, and the next malarun that
// meets the same limit before its reset says it again.
func (rd *reading) note(is *Issue, e *timeline.Entry) {
	r := &is.Rescues
	lastLimit := &rd.lastLimit
	if event.Kind(e.Event) == event.KillSent && rd.retryOf == e.Attempt && (e.Reason == attempt.StopAuth.String() || e.Reason == attempt.StopUsageLimit.String()) {
		// A malarun before issue 47 wrote an api_retry for a line it
		// stopped claude on (refused credentials, a usage limit claude
		// would sleep through): the retry it announced never happened.
		r.APIRetries = max(r.APIRetries-1, 0)
	}
	rd.retryOf = 0
	switch event.Kind(e.Event) {
	case event.HangDetected:
		if r.Hangs == nil {
			r.Hangs = map[string]int{}
		}
		phase := cut(e.Phase, wordMax)
		if phase == "" {
			phase = "unknown" // a timeline written before phases (issue 38)
		}
		if _, ok := r.Hangs[phase]; !ok && len(r.Hangs) >= phasesMax-1 {
			phase = otherPhase // a planted timeline's names are not kept
		}
		r.Hangs[phase]++
		rd.endHang(is, e.Time) // a hang found before the last was counted
		is.HangLost += min(max(time.Duration(e.LimitMS)*time.Millisecond, 0), maxHangLost)
		rd.hangAt = e.Time
	case event.AttemptStarted:
		rd.endHang(is, e.Time)
	case event.AttemptEnded:
		if e.Outcome == attempt.Crash.String() {
			r.Crashes++
		}
		if n := e.NoResponse; n != nil && n.Retries > 0 && n.MS >= 0 {
			r.NoResponses = min(r.NoResponses, maxCount) + min(n.Retries, maxCount) // both from files
			r.NoResponseMS = satAdd(r.NoResponseMS, n.MS)
		}
	case event.LimitWait:
		countLimit(r, e.RetryAt, lastLimit)
	case event.Restart:
		r.Restarts++
	case event.TaskStarted:
		r.Tasks++
	case event.APIRetry:
		r.APIRetries++
		rd.retryOf = e.Attempt
	case event.RunStarted:
		// A malarun runs the run again: the last one's end is past. A run
		// that goes on has no exit yet (one that ended has its record's).
		rd.hangAt = time.Time{} // its malarun died: how long it lay is not a hang's
		is.Outcome, is.Ended = "", time.Time{}
		if is.Status == "processing" || is.Status == "orphaned" {
			is.ExitCode, is.HasExit = 0, false
		}
	case event.RunFinished:
		rd.endHang(is, e.Time)
		is.Outcome, is.Ended = cut(e.Outcome, wordMax), e.Time
		if e.ExitCode != nil {
			is.ExitCode, is.HasExit = *e.ExitCode, true
		}
		if t := e.Tokens; t != nil {
			is.Tokens = is.Tokens.Add(*t) // from a file: a planted count is clamped
		}
		if e.Outcome == string(outcome.RateLimit) {
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

// maxCount bounds a count read from a timeline before it is added: a
// planted entry cannot overflow a sum of a state dir's runs.
const maxCount = 1 << 30

// satAdd sums milliseconds read from files, a negative one as 0,
// saturating. (Token counts have their own sum, stream.Tokens.Add.)
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
