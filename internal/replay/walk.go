package replay

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/statefile"
	"github.com/malarun/malarun/internal/timeline"
)

// Source is the run to tell.
type Source struct {
	Issue  string
	RunDir string
	// Status is the record's, when RunDir is the issue's current run.
	Status string
	// Attempt, when not 0, is the one attempt to tell.
	Attempt int
	// Follow, when set, is asked whenever the story has caught up with
	// what the run has written: it waits a little and says whether the run
	// ended (stop is then why). The story then tells what came last and ends.
	Follow func() (stop string, err error)
	// Now is the clock that times the calls still running while a run is
	// followed (nil: time.Now).
	Now func() time.Time
}

// Tell tells the story of src's run to r. It reads the run folder's
// timeline and transcripts as streams: memory does not grow with them.
func Tell(src Source, r Renderer) (Summary, error) {
	w := &walk{src: src, r: r, attempts: map[int]*attemptReader{}, running: map[string]*runningCall{}}
	if w.src.Now == nil {
		w.src.Now = time.Now
	}
	defer w.close()
	tl, err := statefile.Open(filepath.Join(src.RunDir, timeline.FileName))
	switch {
	case err == nil:
		defer tl.Close()
		w.tl = timeline.NewReader(tl)
	case errors.Is(err, os.ErrNotExist):
	default:
		return Summary{}, fmt.Errorf("read the run's timeline: %w", err)
	}
	if _, err := os.Stat(src.RunDir); err != nil {
		return Summary{}, err
	}
	if src.Attempt != 0 {
		ns, err := AttemptNumbers(src.RunDir)
		if err != nil {
			return Summary{}, err
		}
		if !slices.Contains(ns, src.Attempt) && src.Follow == nil {
			return Summary{}, fmt.Errorf("run %s has no attempt %d (its attempts: %v)", filepath.Base(src.RunDir), src.Attempt, ns)
		}
	}
	h := Header{Version: version, Issue: src.Issue, RunID: filepath.Base(src.RunDir), RunDir: src.RunDir, Status: src.Status,
		Timed: w.tl != nil, Following: src.Follow != nil, Attempt: src.Attempt}
	if err := r.Begin(h); err != nil {
		return Summary{}, err
	}
	if w.tl == nil {
		if src.Follow != nil {
			return Summary{}, errors.New("this run has no timeline (it was recorded before malarun kept one), so it cannot be followed")
		}
		err = w.untimed()
	} else {
		err = w.timed()
	}
	if err != nil {
		return w.sum, err
	}
	w.sum.Items = w.seq
	if w.tl != nil {
		w.sum.DamagedTimeline = w.tl.Damaged
	}
	for _, n := range w.order {
		if a := w.attempts[n].info; src.Attempt == 0 || n == src.Attempt {
			w.sum.Attempts = append(w.sum.Attempts, a)
		}
	}
	if src.Attempt != 0 && len(w.sum.Attempts) == 1 {
		// The run's outcome stays (it is why one looks at an attempt); cost
		// and tokens are the attempt's.
		w.sum.CostUSD, w.sum.Tokens = w.sum.Attempts[0].CostUSD, w.sum.Attempts[0].Tokens
	}
	return w.sum, r.End(w.sum)
}

// walk is one telling of a story.
type walk struct {
	src      Source
	r        Renderer
	tl       *timeline.Reader
	seq      int
	sum      Summary
	attempts map[int]*attemptReader
	order    []int // attempt numbers in the order they began
	current  int   // the attempt last started: decisions without one belong to it
	// began is how the next attempt begins, from the decision before it.
	began   string
	runCost float64 // the cost of the attempts that ended, and of the current one so far
	window  int64   // the context window last known
	// running are the tool calls told and not answered yet, while a run is
	// followed (running.go).
	running map[string]*runningCall
}

func (w *walk) close() {
	for _, a := range w.attempts {
		a.close()
	}
}

// emit numbers an item and gives it to the renderer, unless it belongs to
// an attempt that was not asked for.
func (w *walk) emit(it *Item) error {
	if w.src.Attempt != 0 && it.Attempt != w.src.Attempt {
		return nil
	}
	w.seq++
	it.Seq = w.seq
	w.track(it)
	switch it.Kind {
	case KindToolCall:
		w.sum.ToolCalls++
	case KindResult:
		w.sum.Results++
	}
	if !it.Time.IsZero() {
		if w.sum.Started.IsZero() {
			w.sum.Started = it.Time
		}
		w.sum.Ended = it.Time
	}
	return w.r.Item(it)
}

func (w *walk) note(attempt int, format string, args ...any) error {
	return w.emit(&Item{Kind: KindNote, Attempt: attempt, Text: fmt.Sprintf(format, args...)})
}

// timed tells a run that has a timeline: its entries in order, each line
// entry bringing the transcript's lines up to the one it times.
func (w *walk) timed() error {
	for {
		e, err := w.tl.Next()
		if errors.Is(err, io.EOF) {
			if w.src.Follow == nil {
				break
			}
			if err := w.stillRunning(); err != nil {
				return err
			}
			stop, err := w.src.Follow()
			if err != nil {
				return err
			}
			if stop == "" {
				continue
			}
			w.sum.Stopped = stop
			w.src.Follow = nil // read what was written before the end, then stop
			continue
		}
		if err != nil {
			return fmt.Errorf("read the run's timeline: %w", err)
		}
		if err := w.entry(e); err != nil {
			return err
		}
	}
	// Attempts without an end in the timeline (their malarun stopped, or
	// one runs now): what their transcripts hold so far.
	for _, n := range w.order {
		if a := w.attempts[n]; !a.ended {
			if err := w.lines(a, -1, time.Time{}); err != nil {
				return err
			}
			if w.src.Status != "processing" && w.src.Status != "waiting" || n != w.current {
				if err := w.note(n, "attempt %d has no recorded end: the malarun that ran it stopped first", n); err != nil {
					return err
				}
			}
		}
	}
	return w.missingAttempts()
}

// missingAttempts tells the transcripts the timeline never named (a
// timeline cut short, or removed and made again).
func (w *walk) missingAttempts() error {
	ns, err := AttemptNumbers(w.src.RunDir)
	if err != nil {
		return err
	}
	for _, n := range ns {
		if _, ok := w.attempts[n]; ok {
			continue
		}
		if err := w.startAttempt(&Item{Kind: event.AttemptStarted, Attempt: n}, BeganUnknown); err != nil {
			return err
		}
		if err := w.note(n, "attempt %d is not in the timeline: shown without times", n); err != nil {
			return err
		}
		if err := w.lines(w.attempts[n], -1, time.Time{}); err != nil {
			return err
		}
		if err := w.endAttempt(n, time.Time{}, nil); err != nil {
			return err
		}
	}
	return nil
}

// untimed tells a run recorded before malarun kept a timeline: each
// transcript in turn, without times or malarun's decisions.
func (w *walk) untimed() error {
	ns, err := AttemptNumbers(w.src.RunDir)
	if err != nil {
		return err
	}
	for _, n := range ns {
		began := BeganUnknown
		if n == 1 {
			began = BeganNew
		}
		if err := w.startAttempt(&Item{Kind: event.AttemptStarted, Attempt: n}, began); err != nil {
			return err
		}
		if err := w.lines(w.attempts[n], -1, time.Time{}); err != nil {
			return err
		}
		if err := w.endAttempt(n, time.Time{}, nil); err != nil {
			return err
		}
	}
	return nil
}
