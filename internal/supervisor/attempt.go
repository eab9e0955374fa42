package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/reach"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/usagelimit"
)

// attemptSpec is one claude process: which session, which prompt.
type attemptSpec struct {
	n         int
	sessionID string
	resume    bool // --resume sessionID instead of --session-id sessionID
	// checkpoint: this attempt asks for a checkpoint; context pressure is
	// not acted on (the request itself adds to the context).
	checkpoint bool
	promptPath string // the file the CLI reads on stdin
	deadline   time.Time
	// budgetUSD is what max_cost_usd leaves for this attempt (0 = no cap):
	// the CLI's own --max-budget-usd counts one process only.
	budgetUSD float64
}

// attemptResult is everything an attempt left behind.
type attemptResult struct {
	spec      attemptSpec
	log       attemptLog
	ending    attempt.Ending
	signal    os.Signal // for attempt.Interrupted
	hangLimit time.Duration
	hangTools []string // tools outstanding when the hang was detected
	// cliLimit (attempt.UsageLimit) is the CLI's own wait for a 429 that
	// was longer than what is left of limit_wait.
	cliLimit usagelimit.Decision
	// cutOff are the tool calls still outstanding when the attempt ended,
	// cutTasks the background tasks still running.
	cutOff   []stream.ToolUse
	cutTasks []attempt.Task
	// unreachable (attempt.Unreachable) is why the API cannot be reached,
	// apiAt its address as it is safe to print.
	unreachable reach.Finding
	apiAt       string
	exit        proc.Exit
	stop        proc.StopReport
	stdoutPath  string
	stderrPath  string
	stderrTail  string
	started     time.Time
	ended       time.Time
}

// stuckExitWait bounds the wait for a CLI that SIGKILL could not end.
const stuckExitWait = 5 * time.Second

// succeeded reports whether the attempt printed a successful result.
func (res *attemptResult) succeeded() bool {
	r := res.log.result
	return r != nil && r.Subtype == "success" && !r.IsError
}

// runAttempt starts one claude process and supervises it until its stream
// is read to the end and its whole tree is gone. It never returns while a
// process of the tree is alive (short of one stuck in the kernel).
func (r *runner) runAttempt(spec attemptSpec) (*attemptResult, error) {
	res := &attemptResult{
		spec:       spec,
		stdoutPath: filepath.Join(r.runDir, fmt.Sprintf("attempt-%d.jsonl", spec.n)),
		stderrPath: filepath.Join(r.runDir, fmt.Sprintf("attempt-%d.stderr", spec.n)),
		started:    time.Now(),
	}
	res.log.sessionID = spec.sessionID
	if !journal.ValidSessionID(spec.sessionID) {
		// Every id is checked where it enters (the record, malarun's own);
		// this is the last guard before it becomes an argument.
		return nil, fmt.Errorf("refusing to pass %q to claude as a session id", spec.sessionID)
	}
	if err := r.ensureRunDir(); err != nil {
		return nil, err
	}
	stdout, err := createExclusive(res.stdoutPath)
	if err != nil {
		return nil, err
	}
	defer stdout.Close()
	stderr, err := createExclusive(res.stderrPath)
	if err != nil {
		return nil, err
	}
	defer stderr.Close()
	// The transcript is opened for reading, and watched, before claude can
	// write to it: a run folder removed from now on (a tidied state
	// directory) takes the name, not the file.
	exited := make(chan struct{})
	follower, err := stream.Follow(res.stdoutPath, exited)
	if err != nil {
		return nil, fmt.Errorf("follow %s: %w", res.stdoutPath, err)
	}
	// The follower releases its inotify instance itself, in the background,
	// as soon as the CLI has exited (see Follower.Read).
	defer follower.Close()

	p, err := r.spawner.Start(proc.Spec{
		Path: r.cfg.ClaudeBin, Args: claudeArgs(r.cfg, spec), Dir: r.cfg.Cwd, Env: r.attemptEnv(spec.n),
		StdinPath: spec.promptPath, Stdout: stdout, Stderr: stderr, Marker: markerEnv + "=" + r.rec.Marker,
	})
	if err != nil {
		close(exited)
		return nil, err
	}
	if err := r.spawner.GuardError(); err != nil && !r.guardWarned {
		r.guardWarned = true
		r.log.Warn().Err(err).Msg("could not start the guard that ends claude's process tree if malarun is killed outright: such a tree lives on until the next malarun of this issue ends it")
	}
	go func() {
		<-p.Done()
		close(exited)
	}()
	if err := r.recordAttemptStart(spec, p); err != nil {
		p.Stop(r.cfg.KillGrace, r.hurry)
		return nil, err
	}
	log := r.log.With().Int("attempt", spec.n).Str("session", spec.sessionID).Logger()
	purpose := "work"
	if spec.checkpoint {
		purpose = "checkpoint"
	}
	// The event first: an observer may open an output group for the attempt.
	r.emit(Event{Kind: EvAttemptStarted, Attempt: spec.n, Session: spec.sessionID, Pid: p.Pid, Resume: spec.resume, Purpose: purpose})
	log.Info().Int("pid", p.Pid).Bool("resume", spec.resume).Str("transcript", res.stdoutPath).Msg("attempt started")

	events := make(chan stream.Event, 64)
	readErr := make(chan error, 1)
	go decodeInto(follower, events, readErr)

	m := attempt.New(attempt.Limits{
		Idle: r.cfg.IdleTimeout, Tool: r.cfg.ToolTimeout, Background: r.cfg.BackgroundTimeout,
		Linger: r.cfg.ResultExitTimeout, Deadline: spec.deadline, Checkpoint: spec.checkpoint,
		LimitWaitLeft: r.budget.Left(), Talked: r.talked,
	}, time.Now())
	// A probe of the API's address runs at most once, beside the attempt.
	probeCtx, endProbe := context.WithCancel(context.Background())
	defer endProbe()
	var probed <-chan reach.Finding
	// One timer, always set to the machine's next decision time.
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	rearm := func() {
		timer.Stop()
		if at := m.Wake(); !at.IsZero() {
			timer.Reset(time.Until(at))
		}
	}
	rearm()

	ctxDone := r.ctxDone // set to nil once seen, so a closed channel cannot spin the loop
	lockLost := r.lockLost
	var stopDone chan proc.StopReport
	// apply carries out what the machine decided.
	apply := func(eff attempt.Effects) {
		for _, tk := range eff.Started {
			log.Info().Str("task", tk.ID).Str("type", tk.Type).Str("description", tk.Description).Msg("background task started")
			r.emit(Event{Kind: EvTaskStarted, Attempt: spec.n, Session: res.log.sessionID, Task: tk.ID, Reason: taskLabel(tk)})
		}
		for _, tk := range eff.Finished {
			log.Info().Str("task", tk.ID).Msg("background task finished")
			r.emit(Event{Kind: EvTaskFinished, Attempt: spec.n, Session: res.log.sessionID, Task: tk.ID, Reason: taskLabel(tk)})
		}
		if eff.Probe {
			probed = r.startProbe(probeCtx, log)
		}
		if !eff.Stop {
			rearm()
			return
		}
		why := m.Ending()
		res.ending = why
		res.cutOff, res.cutTasks = m.CutOff()
		timer.Stop()
		grace := r.cfg.KillGrace
		if eff.Grace == attempt.ShutdownGrace {
			grace = r.cfg.ShutdownGrace
		}
		switch why {
		case attempt.Hang:
			res.hangLimit, res.hangTools = m.Hang()
			log.Warn().Stringer("silent_for", res.hangLimit).Strs("tools_running", res.hangTools).Str(AlsoEventField, string(EvHangDetected)).
				Msg("hang detected: no output within the limit")
			r.emit(Event{Kind: EvHangDetected, Attempt: spec.n, Session: res.log.sessionID, Limit: res.hangLimit, Silence: m.HangSilence(), ToolsRunning: res.hangTools,
				Reason: fmt.Sprintf("no output for %s", res.hangLimit)})
		case attempt.Lingered:
			log.Warn().Stringer("after", r.cfg.ResultExitTimeout).Msg("claude still alive after its result line")
		case attempt.BackgroundTimeout:
			log.Warn().Stringer("background_timeout", r.cfg.BackgroundTimeout).Strs("tasks", taskIDs(res.cutTasks)).Msg("background tasks still running after background_timeout")
		case attempt.UsageLimit:
			res.cliLimit = m.Limit()
			log.Warn().Time("retry_at", res.cliLimit.RetryAt).Str("why", res.cliLimit.Reason).Str(AlsoEventField, string(EvAttemptEnded)).
				Msg("claude would wait out a usage limit longer than limit_wait allows")
		case attempt.Unreachable:
			res.unreachable, res.apiAt = m.Unreachable(), r.target.ShownWithProxy()
			log.Warn().Str("api", res.apiAt).Str("code", res.unreachable.Code).Str(AlsoEventField, string(EvAttemptEnded)).
				Msg("the API cannot be reached and never was in this run: stopping")
		case attempt.Pressure:
			log.Info().Int64("occupancy", r.monitor.Occupancy()).Int64("window", r.windowTokens()).Msg("context nearly full; stopping at a safe point to checkpoint")
		}
		stopDone = make(chan proc.StopReport, 1)
		log.Info().Str("reason", why.String()).Int("pid", p.Pid).Stringer("grace", grace).Msg("stopping process tree")
		if why != attempt.Exited { // after a normal exit only leftovers are ended: tree_gone says so
			r.emit(Event{Kind: EvKillSent, Attempt: spec.n, Session: res.log.sessionID, Pid: p.Pid, Reason: why.String(), Grace: grace})
		}
		go func() { stopDone <- p.Stop(grace, r.hurry) }()
	}

	// Every way out goes through a stop (the end of the stream included), so
	// the loop ends once the stream is read and the tree is gone.
	stopped := false
	for events != nil || !stopped {
		select {
		case ev, ok := <-events:
			if !ok {
				events = nil
				// The CLI exited and its output is read: end what is left
				// of its tree (tool processes it did not wait for).
				apply(m.Step(attempt.Input{Kind: attempt.StreamEnd}, time.Now()))
				continue
			}
			r.timelineLine(spec.n, &ev, time.Now())
			other := res.log.otherSession
			res.log.observe(ev)
			if other == "" && res.log.otherSession != "" {
				log.Warn().Str("claude_session", res.log.otherSession).Msg("claude named another session than the one malarun gave it; malarun keeps its own")
			}
			res.log.warnRejected(log, ev)
			stopping := m.Ending() != attempt.None
			r.logLine(log, ev, !stopping)
			pressure := r.observeContext(log, ev)
			eff := m.Step(attempt.Input{Kind: attempt.Line, Event: ev, Pressure: pressure}, time.Now())
			if !stopping {
				// What the line did comes before what malarun does about it.
				r.emitLine(spec, res, m, ev)
				r.recordProgress(ev, m.Outstanding(), m.Running())
			}
			apply(eff)
		case <-timer.C:
			apply(m.Step(attempt.Input{Kind: attempt.Wake}, time.Now()))
		case f := <-probed:
			probed = nil
			log.Info().Str("api", r.target.Shown).Str("found", f.String()).Msg("looked at the API's address")
			apply(m.Step(attempt.Input{Kind: attempt.Probed, Finding: f}, time.Now()))
		case <-ctxDone:
			ctxDone = nil
			apply(m.Step(attempt.Input{Kind: attempt.Interrupt}, time.Now()))
		case sig := <-r.signals:
			if r.interrupt(sig) {
				res.signal = sig
				apply(m.Step(attempt.Input{Kind: attempt.Interrupt}, time.Now()))
			}
		case <-lockLost:
			// Another malarun runs the issue now (journal.Journal.Lost):
			// its claude must not work beside this one's.
			lockLost = nil
			log.Error().Msg("another malarun took the issue over; stopping this one's claude")
			apply(m.Step(attempt.Input{Kind: attempt.Interrupt}, time.Now()))
		case rep := <-stopDone:
			res.stop = rep
			stopDone = nil
			stopped = true
			log.Info().Int("termed", rep.Termed).Int("killed", rep.Killed).Ints("left", rep.Left).Stringer("took", rep.Duration).Msg("process tree gone")
			if res.ending != attempt.Exited || rep.Termed+rep.Killed > 0 {
				r.emit(Event{Kind: EvTreeGone, Attempt: spec.n, Session: res.log.sessionID, Termed: rep.Termed, Killed: rep.Killed, Took: rep.Duration})
			}
			if len(rep.Left) > 0 {
				// SIGKILL did not end them (stuck in the kernel, e.g. on a
				// dead network file system). If the CLI is among them its
				// stream never ends: stop reading rather than wait forever.
				log.Error().Ints("pids", rep.Left).Msg("processes survived SIGKILL; giving up on them")
				follower.Close()
			}
		}
	}
	if err := <-readErr; err != nil {
		log.Error().Err(err).Msg("reading the stream")
	}
	select {
	case <-p.Done():
		res.exit = p.Exit()
	case <-time.After(stuckExitWait):
		res.exit = proc.Exit{Code: -1, Err: errors.New("claude did not exit after SIGKILL")}
	}
	res.ended = time.Now()
	r.talked = r.talked || m.Talked()
	// The CLI's own sleeps through a usage limit came out of limit_wait.
	r.budget.Spend(m.CLIWaited(res.ended))
	if res.ending = m.Final(); res.ending == attempt.Interrupted && res.signal == nil {
		res.signal = r.interrupted
	}
	res.stderrTail = tailFile(res.stderrPath, stderrTailBytes)
	return res, nil
}

// decodeInto sends every event of r to out and closes it at the end of the stream.
func decodeInto(r *stream.Follower, out chan<- stream.Event, errc chan<- error) {
	defer close(out)
	d := stream.NewDecoder(r)
	for {
		ev, err := d.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			errc <- err
			return
		}
		out <- ev
	}
}

// observeContext feeds the context monitor and reports whether occupancy
// is over the threshold.
func (r *runner) observeContext(log zerolog.Logger, ev stream.Event) bool {
	o := r.monitor.Observe(ev)
	if o.MissingUsage {
		log.Warn().Msg("an assistant message came without usage: context occupancy is not tracked for it")
	}
	if o.Compacted {
		log.Info().Msg("claude compacted the conversation; occupancy is measured again from the next message")
	}
	if o.Crossed {
		w, src := r.monitor.Window()
		log.Debug().Int64("occupancy", r.monitor.Occupancy()).Int64("window", w).Str("window_source", src).Msg("context over the threshold")
	}
	return o.Crossed
}

func (r *runner) windowTokens() int64 {
	w, _ := r.monitor.Window()
	return w
}

// emitLine tells the observer what a line changed: always the live
// numbers, and tools starting and finishing, and the CLI's own retries.
func (r *runner) emitLine(spec attemptSpec, res *attemptResult, m *attempt.State, ev stream.Event) {
	base := Event{Attempt: spec.n, Session: res.log.sessionID}
	for _, tu := range ev.ToolUses {
		e := base
		e.Kind, e.Tool, e.ToolInput = EvToolStarted, tu.Name, tu.Input
		r.emit(e)
	}
	for _, id := range ev.ToolResults {
		for _, tu := range res.log.toolCalls {
			if tu.ID == id {
				e := base
				e.Kind, e.Tool = EvToolFinished, tu.Name
				r.emit(e)
			}
		}
	}
	if ev.Type == "system" && ev.Subtype == "api_retry" {
		e := base
		e.Kind, e.Reason = EvAPIRetry, fmt.Sprintf("API status %d %s (retry %d of %d)", ev.ErrorStatus, ev.Error, ev.Attempt, ev.MaxRetries)
		// At most stream.MaxRetryDelayMS (a year): the product fits a Duration.
		e.Backoff = time.Duration(ev.RetryDelayMS * float64(time.Millisecond))
		r.emit(e)
	}
	if r.observe == nil {
		return // progress is for observers only: the timeline has the line's time
	}
	e := base
	e.Kind, e.Messages, e.ToolsRunning, e.IdleDeadline = EvProgress, res.log.assistants, m.ToolsRunning(), m.Wake()
	e.Tasks = taskLabels(m.Running())
	e.Occupancy, e.Window = r.monitor.Occupancy(), r.windowTokens()
	e.CostUSD = r.costBefore + res.log.costUSD
	r.emit(e)
}

// logLine logs the lines that matter at info, the rest at debug; evented:
// emitLine reports the line's events (not while the tree is stopped).
func (r *runner) logLine(log zerolog.Logger, ev stream.Event, evented bool) {
	switch {
	case ev.Kind != stream.KindJSON:
		log.Warn().Int64("line", ev.Line).Int64("bytes", ev.Bytes).Str("kind", ev.Kind.String()).Msg("undecodable line in the stream")
	case ev.Type == "system" && ev.Subtype == "init":
		log.Info().Str("model", ev.Model).Str("claude_session", ev.SessionID).Str("claude_code_version", ev.ClaudeCodeVersion).Msg("claude started")
		if note := cliVersionNote(ev.ClaudeCodeVersion); note != "" && !r.versionWarned {
			r.versionWarned = true
			// The version is the CLI's text: a field, never in the message
			// (messages are constant; see cmd/malarun/logging.go).
			log.Warn().Str("claude_code_version", ev.ClaudeCodeVersion).Str("note", note).Msg("claude's version is outside the tested range")
		}
	case ev.Type == "system" && ev.Subtype == "api_retry":
		l := log.Warn().Int("retry", ev.Attempt).Int("max_retries", ev.MaxRetries).Int("status", ev.ErrorStatus).Str("error", ev.Error).Float64("delay_ms", ev.RetryDelayMS)
		if evented {
			l = l.Str(AlsoEventField, string(EvAPIRetry))
		}
		l.Msg("claude is retrying an API request")
	case ev.Type == "rate_limit_event":
		// allowed_warning only says how much of a window is used: logged, not acted on.
		log.Info().Str("status", ev.RateLimitStatus).Str("limit_type", ev.RateLimitType).Int64("resets_at", ev.ResetsAt).
			Str("error_code", ev.RateLimitErrorCode).Msg("claude reported its rate limit status")
	case ev.Type == "assistant":
		for _, tu := range ev.ToolUses {
			log.Info().Str("tool", tu.Name).Str("id", tu.ID).Msg("tool call")
		}
	case ev.Type == "result":
		log.Info().Str("subtype", ev.Subtype).Bool("is_error", ev.IsError).Float64("cost_usd", ev.TotalCostUSD).Str("terminal_reason", ev.TerminalReason).
			Str("origin", ev.OriginKind).Msg("result")
		if ev.IsError || ev.Subtype != "success" {
			if c := classifyResult(&ev); c.unknown != "" {
				log.Warn().Str("value", c.unknown).Msg("claude printed an error result malarun does not know; treating it as an error that retrying cannot fix (exit 1)")
			}
		}
	default:
		log.Debug().Str("type", ev.Type).Str("subtype", ev.Subtype).Msg("line")
	}
}

// createExclusive creates a file that must not exist yet: a transcript is
// never reused or overwritten.
func createExclusive(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_CLOEXEC, 0o600)
}
