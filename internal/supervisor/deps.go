package supervisor

import (
	"context"
	"math/rand/v2"
	"os"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/netprobe"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/run"

	"github.com/rs/zerolog"

	"github.com/malarun/malarun/internal/endpoint"
	"github.com/malarun/malarun/internal/proc"
)

// Deps are the supervisor's connections to the outside world.
type Deps struct {
	Log zerolog.Logger
	// Signals delivers the shutdown signals (SIGINT, SIGTERM, SIGHUP,
	// SIGQUIT): the first stops the run within ShutdownGrace, a second
	// kills the tree at once.
	Signals <-chan os.Signal
	// Claude starts each attempt's CLI (nil: the real one, cfg.ClaudeBin,
	// through Spawner). Tests pass a fake that plays scripted lines in fake
	// time (internal/testing/fakeclaude), so a decision is tested without a process.
	Claude Claude
	// Spawner starts the real CLI when Claude is nil; nil makes one (which
	// makes this process a child subreaper, where the kernel has one).
	Spawner *proc.Spawner
	// Contain makes the run's own cgroup, named for the run (proc.NewCgroup,
	// the default when Claude and Spawner are nil): every attempt's CLI
	// starts in it. nil, or an error: the run has none (§D28).
	Contain func(name string) (*proc.Cgroup, error)
	// Guard is the command line that runs proc.RunGuard (malarun and its
	// hidden proc.GuardCommand): on a kernel with no parent-death signal
	// (darwin), that process ends the CLI's tree if malarun is killed. Used
	// only when Claude and Spawner are nil; nil: no guard.
	Guard []string
	// ExitCode maps a run's error to the exit code the command line will
	// use, so the journal can record it; nil records 0 or 1.
	ExitCode func(error) int
	// Observer receives every Event as it happens (nil: none). It runs on
	// the supervisor's goroutine and must not block.
	Observer func(event.Event)
	// Records wraps where the record is written (nil: the journal
	// itself); tests use it to make a save fail.
	Records func(RecordWriter) RecordWriter
	// Rand is the random source of the jitter after a usage limit resets,
	// values in [0, 1) (nil: math/rand/v2).
	Rand func() float64
	// OutputFailures reports malarun's own outputs that could not be
	// written so far (stderr, the --events file: a terminal that hung up, a
	// reader that went away). The run goes on without them; each is noted
	// once in the record at its next save (nil: none are watched). It must
	// be safe to call from the supervisor's goroutine at any time.
	OutputFailures func() []record.OutputFailure
	// Traceparent is called just before attempt n's claude starts; what it
	// returns replaces TRACEPARENT and TRACESTATE in claude's environment,
	// so that claude's own telemetry joins the attempt's span ("": claude
	// gets malarun's environment unchanged). nil: none.
	Traceparent func(attempt int) (traceparent, tracestate string)
	// FlushOutputs waits, within a bound, until what malarun wrote to its
	// outputs so far is written or has failed: called once, before the
	// record's last save, so that the record knows every failure of the
	// run (nil: nothing to wait for).
	FlushOutputs func()
	// Probe looks at the API's address when the CLI gets no answer from it
	// before the run ever had one (§D17; nil: netprobe.Probe). Tests pass a
	// fake so that no DNS or network is needed.
	Probe func(context.Context, endpoint.Target) endpoint.Finding
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

// exitCode is the exit code the command line gives a run's error.
func (d Deps) exitCode(err error) int {
	if d.ExitCode != nil {
		return d.ExitCode(err)
	}
	if err == nil {
		return 0
	}
	return 1
}

// ending is how the run ended, for run.Close: the error's outcome and
// sentence, and the exit code cmd/malarun gives it.
func (d Deps) ending(err error) run.Ending {
	e := run.Ending{Outcome: outcome.Of(err), ExitCode: d.exitCode(err)}
	if err != nil {
		e.Reason = err.Error()
	}
	return e
}
