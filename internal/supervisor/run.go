// Package supervisor runs one issue under supervision. It carries out what
// internal/run and internal/attempt decide: it spawns the CLI for each
// attempt (through the Claude seam), follows its stream, keeps the one
// timer the attempt machine asks for, kills the whole process tree when
// told to, waits when told to, keeps the record and reports how the run
// ended. It decides nothing itself (docs/design.md §D23).
package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/malarun/malarun/internal/claudesettings"
	"github.com/malarun/malarun/internal/configkey"
	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/record"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/endpoint"
	"github.com/malarun/malarun/internal/environ"
	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/run"
)

// RecordWriter saves the issue's record: Save durably (at transitions),
// SaveQuick without fsync (progress within an attempt).
type RecordWriter interface {
	Save(record.Record) error
	SaveQuick(record.Record) error
}

// Run supervises cfg.IssueID until it succeeds or fails. The error is nil
// only when claude reported success; otherwise it is a *RunError or a
// plain error for trouble of malarun's own (state directory, files).
func Run(ctx context.Context, cfg Config, deps Deps) (event.Report, error) {
	if err := cfg.Validate(); err != nil {
		return event.Report{}, &RunError{Kind: outcome.Usage, Detail: err.Error()}
	}
	tmpl, err := loadPrompts(cfg.PromptsDir)
	if err != nil {
		return event.Report{}, &RunError{Kind: outcome.Usage, Detail: err.Error()}
	}
	started := time.Now()
	log := deps.Log.With().Str("issue", cfg.IssueID).Logger()
	r := newRunner(cfg, deps, log, tmpl, started)
	r.ctxDone, r.self = ctx.Done(), proc.Self()
	host, _ := os.Hostname()
	if err := r.acquire(host, started); err != nil {
		return event.Report{}, err
	}
	defer r.rec.journal.Release()
	r.deps = deps.withDefaults(log)
	warnConfig(r.cfg, r.log)
	pl, err := (&planner{cfg: r.cfg, log: r.log, self: r.self, exitCode: r.deps.exitCode}).makePlan(r.rec.journal, started)
	if err != nil {
		return event.Report{}, err
	}
	if err := r.open(pl, host, started); err != nil {
		return event.Report{}, err
	}
	rep, err := r.loop(pl, started)
	return r.close(pl, rep, err, started)
}

// acquire takes the issue's lock: one malarun per issue (§D7).
func (r *runner) acquire(host string, started time.Time) error {
	j, err := journal.Acquire(r.cfg.StateDir, r.cfg.IssueID, journal.Holder(os.Getpid(), host, started.UTC().Format(time.RFC3339)))
	if err != nil {
		var busy *journal.BusyError
		if errors.As(err, &busy) {
			return &RunError{Kind: outcome.Busy, Detail: busy.Error()}
		}
		return stateDirError(r.cfg.StateDir, err)
	}
	r.rec.journal, r.lockLost, r.rec.records = j, j.Lost(), j
	j.OnBentSave(func(err error) {
		r.log.Warn().Err(err).Msg("another process changed the issue's folder during a save of its record; that save was written as a file of its own")
	})
	if r.deps.Records != nil {
		r.rec.records = r.deps.Records(j)
	}
	return nil
}

// open takes the plan's record as this malarun's: its owner, processing,
// the run's folder, working directory, HOME and marker.
func (r *runner) open(pl *plan, host string, started time.Time) error {
	r.rec.base, r.folder.dir = pl.rec, pl.rec.RunDir
	// The record names the trace of the malarun that last ran the issue
	// with traces on; a continued run links to it, and this one's takes
	// its place.
	var previousTrace record.TraceRef
	if pl.begin.Continued {
		previousTrace = r.rec.base.Trace
	}
	trace := r.rec.base.Trace
	if !r.cfg.Trace.IsZero() {
		trace = r.cfg.Trace
	}
	// The run as this malarun takes it: processing, until Begin decides.
	r.state = run.Taken(pl.begin)
	r.rec.facts = openFacts(r.rec.base, record.Owner{Pid: r.self.Pid, Host: host, StartedAt: started,
		StartTime: r.self.StartTime, BootID: r.self.BootID, PidNS: r.self.PidNS}, trace)
	r.cfg.Cwd = r.rec.base.Cwd
	r.cfg.Env = environ.With(r.cfg.Env, "HOME", r.rec.base.Home)
	r.cfg.Env = environ.With(r.cfg.Env, markerEnv, r.rec.base.Marker)
	r.cfg.Env = cliLimits(r.cfg, r.log, r.cfg.Env)
	// claude then says why it refused to start (docs/design.md §D36).
	r.cfg.Env = attempt.StartupEnv(r.cfg.Env)
	r.rec.contain(r.deps.Contain)
	settings, _ := claudesettings.Find(r.cfg.Env, r.cfg.Cwd, endpoint.AddressVars())
	r.target = endpoint.TargetOf(r.cfg.Env, r.cfg.Cwd, settings)
	if hasFlag(r.cfg.ExtraArgs, "--settings") {
		// Settings given on the command line may set the address too
		// (claudesettings): no look.
		r.target = endpoint.Target{Settings: "--settings", Shown: "the address claude's --settings may set"}
	}
	if err := r.rec.save(); err != nil {
		r.rec.releaseCgroup() // no record names it, and close will not run
		return err
	}
	r.log.Info().Str("run_dir", r.rec.base.RunDir).Str("prompt", r.cfg.PromptSource).Bool("continued", pl.begin.Continued).Msg("run started")
	r.emit(event.Event{Kind: event.RunStarted, RunDir: r.rec.base.RunDir, Continued: pl.begin.Continued, Session: r.rec.base.SessionID, PreviousTrace: previousTrace})
	return nil
}

// close records how the run ended and completes the report.
func (r *runner) close(pl *plan, rep event.Report, err error, started time.Time) (event.Report, error) {
	if r.shutdown.shutdownTimer != nil {
		r.shutdown.shutdownTimer.Stop()
	}
	r.rec.releaseCgroup()
	if serr := r.finishRecord(err); serr != nil {
		err = serr
	}
	rep = r.rec.endReport(rep, pl, started)
	r.emit(finishedEvent(&r.state, rep))
	r.folder.timeline.Close()
	return rep, err
}

// finishRecord records how the run ended (run.Close). A record that cannot
// be saved is an error of its own: the exit code must not say the run
// ended cleanly while record.json still says processing (the next
// invocation would reclaim a finished run).
func (r *runner) finishRecord(err error) error {
	r.state = run.Close(r.state, r.deps.ending(err))
	r.rec.facts.attempt = nil
	if r.deps.FlushOutputs != nil {
		r.deps.FlushOutputs() // the last save notes every output that failed
	}
	serr := r.rec.save()
	if serr == nil {
		return nil
	}
	if !errors.Is(serr, outcome.Busy) { // busy: the record is another malarun's to write now
		ended := "succeeded"
		if err != nil {
			ended = "ended: " + err.Error()
		}
		serr = fmt.Errorf("the run %s, but %w; record.json may still say %q, so fix the state directory before running issue %s again",
			ended, serr, record.Processing, r.cfg.IssueID)
	}
	// The command exits with this error: it is how the run ends, for the
	// report and the finished event.
	r.state = run.Close(r.state, r.deps.ending(serr))
	return serr
}

// cliLimits is env with the CLI's own stream limits turned off
// (attempt.CLIVars, docs/design.md §D30), so that malarun's allowance for
// each phase decides when a silent stream is dead; a user's own value
// wins, with a warning where it lets the CLI give up sooner. So does a
// value in claude's settings files, which the CLI lets override its
// environment.
func cliLimits(cfg Config, log zerolog.Logger, env []string) []string {
	if !cfg.PartialMessages {
		// Without partial messages malarun sees no phase: the CLI's
		// watchdogs are the only ones that know a stream from a tool.
		return env
	}
	// The configuration's limits: the room a run gives a phase grows
	// malarun's own allowances, not what the CLI is given at the start.
	lim := attempt.Limits{Idle: cfg.IdleTimeout, Tool: cfg.ToolTimeout, Text: cfg.TextTimeout,
		Thinking: cfg.ThinkingTimeout, ToolInput: cfg.ToolInputTimeout, Subagent: cfg.SubagentTimeout}
	out, warns := attempt.CLIEnv(env, lim)
	for _, w := range warns {
		log.Warn().Str("why", w).Msg("claude's environment sets one of its own stream limits, which gives up on a silent stream sooner than malarun would")
	}
	var names []string
	for _, v := range attempt.CLIVars(lim) {
		names = append(names, v.Name)
	}
	if f, name := claudesettings.Find(out, cfg.Cwd, append(names, "CLAUDE_STREAM_IDLE_TIMEOUT_MS")); f != "" && name != "" {
		log.Warn().Str("settings", f).Str("variable", name).Msg("claude's settings file sets a variable of its own stream limits, which overrides what malarun gives claude: claude may give up on a stream malarun would let run, and ask again for the whole reply")
	}
	return out
}

// warnConfig logs what in the environment or configuration can hurt a run.
func warnConfig(cfg Config, log zerolog.Logger) {
	if environ.Get(cfg.Env, "DISABLE_AUTO_COMPACT") != "" {
		log.Warn().Msg("DISABLE_AUTO_COMPACT is set: the CLI refuses requests at 90% of its window, so checkpoint requests may fail; malarun falls back to a fresh session with the original task")
	}
	if cfg.SessionTimeout > 0 && cfg.LimitWait > cfg.SessionTimeout {
		log.Warn().Stringer(configkey.LimitWait, cfg.LimitWait).Stringer(configkey.SessionTimeout, cfg.SessionTimeout).
			Msg("limit_wait is longer than session_timeout, which bounds the whole run: a wait past it is not taken (exit 75 with the reset); raise session_timeout, or set it to 0")
	}
	if !cfg.PartialMessages && cfg.IdleTimeout < 15*time.Minute {
		log.Warn().Stringer(configkey.IdleTimeout, cfg.IdleTimeout).Msg("partial_messages is off: a long reply prints nothing until it is complete, so a short idle_timeout can kill a healthy run")
	}
}
