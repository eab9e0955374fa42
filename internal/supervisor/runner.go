package supervisor

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/malarun/malarun/internal/ctxpressure"
	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/reach"
	"github.com/malarun/malarun/internal/timeline"
	"github.com/malarun/malarun/internal/usagelimit"
)

// runner is the state of one Run.
type runner struct {
	cfg     Config
	log     zerolog.Logger
	spawner *proc.Spawner
	// guardWarned: the guard's failure to start (darwin) is logged once.
	guardWarned bool
	runDir      string
	signals     <-chan os.Signal
	ctxDone     <-chan struct{}
	monitor     *ctxpressure.Monitor

	// self is this malarun's process identity, recorded as the run's
	// owner and compared with a recorded owner's.
	self       proc.Identity
	journal    *journal.Journal
	records    RecordWriter   // where the record is saved: the journal, or a test's wrapper
	rec        journal.Record // the issue's record, saved at every transition
	checkpoint string         // the last checkpoint of this run
	task       []byte         // the run's prompt (prompt.md), kept to make a removed run folder again
	// prompts are the attempt prompts this invocation wrote, by path: a
	// fresh session reuses the one it started with (ensureRunDir).
	prompts    map[string][]byte
	exitCodeOf func(error) int
	observe    func(Event)
	costBefore float64 // the run's cost before the current attempt
	// sideEffectFree is the set of side_effect_free_tools.
	sideEffectFree map[string]bool

	// budget is limit_wait, spent by every wait for a usage limit of the run;
	// rnd is the jitter's random source; waiting: a limit wait is under way
	// (a signal now leaves the record waiting, with its retry_at).
	// lastReset is the last reset waited for: a limit that resets no later is a loop.
	budget    usagelimit.Budget
	rnd       func() float64
	waiting   bool
	lastReset time.Time

	// after is the timer of the waits between attempts (Deps.After).
	after func(time.Duration) <-chan time.Time

	versionWarned bool // the CLI's version was outside the tested range: said once per run

	// timeline is the run folder's record of decisions and receive times,
	// for malarun show (timeline.go); timelineWarned: its failure was logged.
	timeline       *timeline.Writer
	timelineWarned bool

	// target is the API address of the CLI's environment; probe looks at
	// it (Deps.Probe); talked: the run has had an answer from the API, so
	// a connection failure is transient (§D17).
	target reach.Target
	probe  func(context.Context, reach.Target) reach.Finding
	talked bool

	// outputFailures are malarun's outputs that failed (Deps.OutputFailures);
	// notedOutputs, those already in the record.
	outputFailures func() []journal.OutputFailure
	flushOutputs   func()
	traceparent    func(attempt int) (traceparent, tracestate string)
	notedOutputs   map[string]bool

	// lockLost is closed once another malarun took the issue over (its
	// lock file was removed; journal.Journal.Lost): this run stops at once.
	lockLost <-chan struct{}

	interrupted os.Signal
	hurry       chan struct{} // closed by a second signal: kill at once
	hurryOnce   sync.Once
	// shutdownTimer hurries the stop once shutdown_grace has passed since the first signal.
	shutdownTimer *time.Timer
}

// interrupt handles a shutdown signal. It reports true for the first signal
// (stop gracefully); any later one closes hurry (kill the tree now).
func (r *runner) interrupt(sig os.Signal) bool {
	if r.interrupted == nil {
		r.interrupted = sig
		r.log.Warn().Str("signal", sig.String()).Stringer("shutdown_grace", r.cfg.ShutdownGrace).Msg("stopping the run; a second signal kills it at once")
		// Whatever is being stopped, and for whatever reason, the tree is
		// killed once shutdown_grace is over: CI runners kill malarun soon.
		r.shutdownTimer = time.AfterFunc(r.cfg.ShutdownGrace, func() { r.hurryNow("shutdown_grace is over") })
		return true
	}
	r.hurryNow("second signal " + sig.String())
	return false
}

// hurryNow makes every stop in progress or to come skip the rest of its grace.
func (r *runner) hurryNow(why string) {
	r.hurryOnce.Do(func() {
		r.log.Warn().Str("why", why).Msg("killing the process tree now")
		close(r.hurry)
	})
}

// mayStart says whether another claude may be started: not once malarun
// has been asked to stop, nor past the session deadline (both can pass
// while a tree is being killed, and a backoff of 0 does not look).
func (r *runner) mayStart(deadline time.Time) error {
	select {
	case sig := <-r.signals:
		r.interrupt(sig)
	default:
	}
	if r.interrupted != nil {
		return &RunError{Kind: outcome.Interrupted, Signal: r.interrupted, Detail: "stopped before the next attempt; the run can be resumed"}
	}
	select {
	case <-r.lockLost:
		return r.lostError()
	default:
	}
	if !deadline.IsZero() && !time.Now().Before(deadline) {
		return &RunError{Kind: outcome.SessionTimeout, Detail: "session_timeout elapsed before the next attempt"}
	}
	return nil
}

// backoff waits before the next attempt.
func (r *runner) backoff(d time.Duration, deadline time.Time) error {
	if d <= 0 {
		return nil
	}
	r.log.Info().Stringer("backoff", d).Msg("waiting before the next attempt")
	return r.pause(d, deadline, "to retry")
}

// pause waits d between attempts (a backoff, a usage limit's reset). No
// process runs, so there is no idle timer: a signal or the session deadline
// ends the wait, and the run, at once. what says what was waited for, in
// the errors ("to retry").
func (r *runner) pause(d time.Duration, deadline time.Time, what string) error {
	var deadlineC <-chan time.Time
	if !deadline.IsZero() {
		dt := time.NewTimer(time.Until(deadline))
		defer dt.Stop()
		deadlineC = dt.C
	}
	wake := r.after
	if wake == nil {
		t := time.NewTimer(d)
		defer t.Stop()
		wake = func(time.Duration) <-chan time.Time { return t.C }
	}
	stopped := "stopped while waiting " + what + "; the run can be resumed"
	select {
	case <-wake(d):
		return nil
	case <-deadlineC:
		return &RunError{Kind: outcome.SessionTimeout, Detail: "session_timeout elapsed while waiting " + what}
	case <-r.ctxDone:
		return &RunError{Kind: outcome.Interrupted, Detail: stopped}
	case sig := <-r.signals:
		r.interrupt(sig)
		return &RunError{Kind: outcome.Interrupted, Signal: sig, Detail: stopped}
	case <-r.lockLost:
		return r.lostError()
	}
}

// lostError ends a run whose issue another malarun took over: exit 7, and
// the record is left to that one.
func (r *runner) lostError() error {
	return &RunError{Kind: outcome.Busy, Detail: fmt.Sprintf(
		"another malarun took issue %s over after its lock file was removed; this one stopped", r.cfg.IssueID)}
}
