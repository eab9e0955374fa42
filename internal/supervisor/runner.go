package supervisor

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/rs/zerolog"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/ctxpressure"
	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/netprobe"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/reach"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/run"
	"github.com/malarun/malarun/internal/timelinefile"
)

// runner is the state of one Run: what it is connected to, the run's
// decision state (run.State, changed only by internal/run), the record and
// what the driver needs to carry the decisions out.
type runner struct {
	cfg  Config
	deps Deps // as given, with every nil connection filled in (withDefaults)
	log  zerolog.Logger

	// policy is the configuration's limits; state the run's decisions so far.
	policy run.Policy
	state  run.State

	ctxDone <-chan struct{}
	monitor *ctxpressure.Monitor
	tmpl    prompts

	// self is this malarun's process identity, recorded as the run's
	// owner and compared with a recorded owner's.
	self    proc.Identity
	journal *journal.Journal
	records RecordWriter // where the record is saved: the journal, or a test's wrapper
	// base is the run as the plan opened it (its identity and history);
	// facts what this malarun knows of it that the run's decisions cannot
	// (runFacts). record() projects them, with state, into the record
	// saved at every transition.
	base  record.Record
	facts runFacts
	task  []byte // the run's prompt (prompt.md), kept to make a removed run folder again
	// prompts are the attempt prompts this invocation wrote, by path: a
	// fresh session reuses the one it started with (ensureRunDir).
	prompts map[string][]byte

	// warned is what the run's lines were warned about, once each (lines.go).
	warned

	// timeline is the run folder's record of decisions and receive times,
	// for malarun show (timeline.go); timelineWarned: its failure was logged.
	timeline       *timelinefile.Writer
	timelineWarned bool

	// target is the API address of the CLI's environment (§D17).
	target reach.Target

	// lockLost is closed once another malarun took the issue over (its
	// lock file was removed; journal.Journal.Lost): this run stops at once.
	lockLost <-chan struct{}

	// doing and doingLabel are the phase the last progress event told,
	// and its words.
	doing      attempt.Doing
	doingLabel string
	// taskLabels are the background tasks the last progress event named,
	// made at tasksVersion (attempt.State.RunningVersion).
	taskLabels   []string
	tasksVersion int

	// shutdown is how malarun was asked to stop (signals.go).
	shutdown
}

// withDefaults fills in the connections a caller left nil.
func (d Deps) withDefaults(log zerolog.Logger) Deps {
	if d.Probe == nil {
		d.Probe = netprobe.Probe
	}
	if d.Rand == nil {
		d.Rand = rand.Float64
	}
	if d.Claude == nil {
		s := d.Spawner
		if s == nil && d.Contain == nil {
			d.Contain = proc.NewCgroup
		}
		if s == nil {
			s = proc.NewSpawner(proc.WithGuard(d.Guard...))
		}
		d.Claude = newSpawned(s, log)
	}
	return d
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
		r.interrupt(sig, r.log, r.cfg.ShutdownGrace)
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
		r.interrupt(sig, r.log, r.cfg.ShutdownGrace)
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
