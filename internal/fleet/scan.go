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
	"github.com/malarun/malarun/internal/limitstore"
	"github.com/malarun/malarun/internal/notrun"
	"github.com/malarun/malarun/internal/record"
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

// Scan is every issue of stateDir (the first maxIssues by name), sorted
// by id; the folders that are not issues and the links, named (cut and
// inert: nameMax); and the prompt files a fleet could not run. Records
// are read without locking, each once, by as many readers as there are
// CPUs.
func Scan(stateDir string, o Options) (Scanned, error) {
	var sc Scanned
	dirs, err := os.ReadDir(stateDir)
	if errors.Is(err, fs.ErrNotExist) {
		return sc, nil
	}
	if err != nil {
		return sc, err
	}
	var names []string
	for _, d := range dirs { // sorted by name
		name := d.Name()
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			// Never followed: a link could lead anywhere, and an issue's
			// folder is always a folder. Named, so that nothing is lost
			// without a word.
			addNamed(&sc.Linked, &sc.LinkedMore, name)
		case !d.IsDir() || name == limitstore.DirName || name == notrun.DirName:
		case o.ValidID != nil && o.ValidID(name) != nil:
			addNamed(&sc.Skipped, &sc.SkippedMore, name)
		case len(names) >= maxIssues:
			sc.NotRead++
		default:
			names = append(names, name)
		}
	}
	notes, unread, err := notrun.Read(stateDir)
	if err != nil {
		sc.NotRunError = cut(err.Error(), reasonMax)
	}
	for _, n := range notes {
		sc.NotRun = append(sc.NotRun, NotRun{File: cut(n.File, nameMax), Issue: cut(n.Issue, nameMax), Reason: cut(n.Reason, reasonMax),
			ExitCode: n.ExitCode, At: n.At.UTC()})
	}
	sc.NotRunUnread = unread
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
	for _, is := range out {
		if is == nil || !o.Since.IsZero() && is.Updated.Before(o.Since) && is.Damaged == "" && ended(is.Status) {
			continue // a run that goes on or waits is kept: its record is saved only at events
		}
		sc.Issues = append(sc.Issues, *is)
	}
	sort.Slice(sc.Issues, func(i, k int) bool { return sc.Issues[i].ID < sc.Issues[k].ID })
	return sc, nil
}

// addNamed keeps name (cut) in list up to jsonRows, counting the rest.
func addNamed(list *[]string, more *int, name string) {
	if len(*list) >= jsonRows {
		*more++
		return
	}
	*list = append(*list, cut(name, nameMax))
}

// noResponseRecordVersion is the record version (internal/journal) whose
// malarun first counted requests never answered (docs/record.md): a
// record before it says nothing of them, which is not none.
const noResponseRecordVersion = 9

// readIssue reads one issue folder (nil: it holds no record).
func readIssue(stateDir, name string, now time.Time) *Issue {
	e, ok := journal.Read(stateDir, name)
	if !ok {
		return nil
	}
	is := &Issue{ID: name, Status: cut(e.Word(), wordMax)}
	if e.Err != nil {
		is.Damaged = cut(e.Err.Error(), reasonMax)
		return is
	}
	r := e.Record
	is.RunDir, is.Described = r.RunDir, e.Described()
	is.RunID, is.Reason, is.Attempts, is.CostUSD = r.RunID, cut(r.Reason, reasonMax), r.Attempts, r.CostUSD
	is.RetryAt, is.LimitType = r.RetryAt, cut(r.LimitType, wordMax)
	is.Started, is.Updated = r.StartedAt, r.UpdatedAt
	is.Rescues.Reclaims = r.RunReclaims
	is.NoResponseUncounted = r.ReadVersion < noResponseRecordVersion
	if r.Status != record.Processing && r.Status != record.Waiting {
		is.ExitCode, is.HasExit = r.ExitCode, true
	}
	if err := readTimeline(r.RunDir, is); err != nil {
		is.Damaged = cut("timeline: "+err.Error(), reasonMax)
	}
	if r.Continuations > is.Rescues.Restarts {
		is.Rescues.Restarts = r.Continuations // a run recorded before its timeline
	}
	if r.Status == record.Processing && e.Locked && !r.AttemptStartedAt.IsZero() {
		is.Running, is.RunningSince = latestAttempt(r.RunDir), r.AttemptStartedAt
		if is.Running == 0 {
			is.Running = r.Attempts + 1 // its transcript is not made yet
		}
		readRunning(r.RunDir, is, now)
	}
	return is
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
