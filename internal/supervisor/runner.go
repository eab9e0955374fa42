package supervisor

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/ctxpressure"
	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/reach"
	"github.com/malarun/malarun/internal/run"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/timeline"
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

	runDir  string
	ctxDone <-chan struct{}
	monitor *ctxpressure.Monitor
	// cgroup holds the run's processes (nil: none could be made).
	cgroup *proc.Cgroup
	tmpl   prompts

	// self is this malarun's process identity, recorded as the run's
	// owner and compared with a recorded owner's.
	self    proc.Identity
	journal *journal.Journal
	records RecordWriter // where the record is saved: the journal, or a test's wrapper
	// base is the run as the plan opened it (its identity and history);
	// facts what this malarun keeps of it. record() projects them, with
	// state, into the record saved at every transition.
	base  journal.Record
	facts runFacts
	task  []byte // the run's prompt (prompt.md), kept to make a removed run folder again
	// prompts are the attempt prompts this invocation wrote, by path: a
	// fresh session reuses the one it started with (ensureRunDir).
	prompts map[string][]byte

	versionWarned bool   // the CLI is older than the oldest supported: said once per run
	cliVersion    string // the CLI's version, from its last init line ("": none yet)
	// unfamiliarWarned are the kinds of line malarun did not know, said
	// once each per run (stream.Unfamiliar).
	unfamiliarWarned map[string]bool
	mcpWarned        map[stream.MCPServer]bool // MCP servers not connected, warned about once per run

	// timeline is the run folder's record of decisions and receive times,
	// for malarun show (timeline.go); timelineWarned: its failure was logged.
	timeline       *timeline.Writer
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

	interrupted os.Signal
	hurry       chan struct{} // closed by a second signal: kill at once
	hurryOnce   sync.Once
	// shutdownTimer hurries the stop once shutdown_grace has passed since the first signal.
	shutdownTimer *time.Timer
}

// withDefaults fills in the connections a caller left nil.
func (d Deps) withDefaults(log zerolog.Logger) Deps {
	if d.Probe == nil {
		d.Probe = reach.Probe
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
// has been asked to stop (a signal can come while a tree is being
// killed), nor once another malarun took the issue over.
func (r *runner) mayStart() error {
	select {
	case sig := <-r.deps.Signals:
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
