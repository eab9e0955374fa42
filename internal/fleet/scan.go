package fleet

import (
	"errors"
	"io/fs"
	"os"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/malarun/malarun/internal/journal"
)

// Options say which issues a scan takes.
type Options struct {
	// ValidID checks a folder's name is an issue id (supervisor's rule):
	// a folder it refuses is named among the skipped, never read.
	ValidID func(string) error
	// Since keeps the issues whose run was updated at or after it (zero:
	// every issue): "last night".
	Since time.Time
	// Now is the time the summary is made at (running runs' wall time).
	Now time.Time
}

// Scan is every issue of stateDir, sorted by id, and the folders that are
// not issues (their names as they are: callers escape them). Records are
// read without locking, each once, by as many readers as there are CPUs.
func Scan(stateDir string, o Options) ([]Issue, []string, error) {
	dirs, err := os.ReadDir(stateDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var names, skipped []string
	for _, d := range dirs {
		name := d.Name()
		if !d.IsDir() || name == "usage-limits" {
			continue
		}
		if o.ValidID != nil && o.ValidID(name) != nil {
			skipped = append(skipped, name)
			continue
		}
		names = append(names, name)
	}
	out := make([]*Issue, len(names))
	work := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), len(names))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				out[i] = readIssue(stateDir, names[i], o.Now)
			}
		}()
	}
	for i := range names {
		work <- i
	}
	close(work)
	wg.Wait()
	var issues []Issue
	for _, is := range out {
		if is == nil || !o.Since.IsZero() && is.Updated.Before(o.Since) && is.Damaged == "" && ended(is.Status) {
			continue // a run that goes on or waits is kept: its record is saved only at events
		}
		issues = append(issues, *is)
	}
	sort.Slice(issues, func(i, k int) bool { return issues[i].ID < issues[k].ID })
	return issues, skipped, nil
}

// readIssue reads one issue folder (nil: it holds no record).
func readIssue(stateDir, name string, now time.Time) *Issue {
	e, ok := journal.Read(stateDir, name)
	if !ok {
		return nil
	}
	is := &Issue{ID: name, Status: e.Word()}
	if e.Err != nil {
		is.Damaged = e.Err.Error()
		return is
	}
	r := e.Record
	is.RunID, is.Reason, is.Attempts, is.CostUSD = r.RunID, r.Reason, r.Attempts, r.CostUSD
	is.RetryAt, is.LimitType = r.RetryAt, r.LimitType
	is.Started, is.Updated = r.StartedAt, r.UpdatedAt
	is.Rescues.Reclaims = r.RunReclaims
	if r.Status != journal.Processing && r.Status != journal.Waiting {
		is.ExitCode, is.HasExit = r.ExitCode, true
	}
	if err := readTimeline(r.RunDir, is); err != nil {
		is.Damaged = "timeline: " + err.Error()
	}
	if r.Continuations > is.Rescues.Restarts {
		is.Rescues.Restarts = r.Continuations // a run recorded before its timeline
	}
	if r.Status == journal.Processing && e.Locked && !r.AttemptStartedAt.IsZero() {
		is.Running, is.RunningSince = latestAttempt(r.RunDir), r.AttemptStartedAt
		if is.Running == 0 {
			is.Running = r.Attempts + 1 // its transcript is not made yet
		}
		readRunning(r.RunDir, is, now)
	}
	return is
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
