package supervisor

import (
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/malarun/malarun/internal/ctxpressure"
	"github.com/malarun/malarun/internal/endpoint"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/run"
	"github.com/malarun/malarun/internal/stream"
)

// runner drives one Run: it carries out the run's decisions (run.State,
// changed only by internal/run) with the processes, timers and signals
// they need. What it keeps beside them is split by role, each a type of
// its own with its own file: the record (recordKeeper, record.go), the run
// folder's files (runFolder, rundir.go), what the lines told (lineProgress,
// lines.go), how malarun was asked to stop (shutdown, signals.go); the
// plan it starts from is made by a planner (plan.go).
type runner struct {
	cfg  Config
	deps Deps // as given, with every nil connection filled in (withDefaults)
	log  zerolog.Logger

	// policy is the configuration's limits; state the run's decisions so far.
	policy run.Policy
	state  run.State

	ctxDone <-chan struct{}

	// self is this malarun's process identity, recorded as the run's
	// owner and compared with a recorded owner's.
	self proc.Identity

	rec    recordKeeper
	folder runFolder
	lines  lineProgress

	// target is the API address of the CLI's environment (§D17).
	target endpoint.Target

	// lockLost is closed once another malarun took the issue over (its
	// lock file was removed; journal.Journal.Lost): this run stops at once.
	lockLost <-chan struct{}

	shutdown shutdown
}

// newRunner is a runner for cfg, its roles wired to it, before the run's
// lock is taken (acquire) and its record opened (open).
func newRunner(cfg Config, deps Deps, log zerolog.Logger, tmpl prompts, started time.Time) *runner {
	r := &runner{cfg: cfg, deps: deps, log: log, policy: cfg.runPolicy(started), shutdown: shutdown{hurry: make(chan struct{})}}
	r.rec = recordKeeper{log: log, issue: cfg.IssueID, state: &r.state, sideEffectFree: r.policy.SideEffectFree, outputFailures: deps.OutputFailures}
	r.folder = runFolder{log: log, issue: cfg.IssueID, tmpl: tmpl}
	r.lines = lineProgress{monitor: ctxpressure.New(int64(cfg.ContextLimit), cfg.ContextThreshold), emit: r.emit, observed: deps.Observer != nil,
		warned: warned{mcpWarned: map[stream.MCPServer]bool{}, unfamiliarWarned: map[string]bool{}}}
	return r
}

// draws are the random values the run's next step may use.
func (r *runner) draws() run.Draws {
	return run.Draws{NewSession: newSessionID(), Jitter: r.deps.Rand()}
}

// mayStart says whether another claude may be started: not once malarun
// has been asked to stop (a signal can come while a tree is being
// killed), nor once another malarun took the issue over.
func (r *runner) mayStart() error {
	select {
	case sig := <-r.deps.Signals:
		r.shutdown.interrupt(sig, r.log, r.cfg.ShutdownGrace)
	default:
	}
	if r.shutdown.interrupted != nil {
		return &RunError{Kind: outcome.Interrupted, Signal: r.shutdown.interrupted, Detail: "stopped before the next attempt; the run can be resumed"}
	}
	select {
	case <-r.lockLost:
		return r.lostError()
	default:
	}
	return nil
}

// pause sleeps until a run.Sleep action's time (a backoff, a usage
// limit's reset; internal/run has already cut it at the session
// deadline). No process runs, so there is no idle timer: a signal ends
// the wait, and the run, at once. what says what is waited for ("to retry").
func (r *runner) pause(until time.Time, what string) error {
	t := time.NewTimer(time.Until(until))
	defer t.Stop()
	stopped := "stopped while waiting " + what + "; the run can be resumed"
	select {
	case <-t.C:
		return nil
	case <-r.ctxDone:
		return &RunError{Kind: outcome.Interrupted, Detail: stopped}
	case sig := <-r.deps.Signals:
		r.shutdown.interrupt(sig, r.log, r.cfg.ShutdownGrace)
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
