package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/configkey"
	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/record"

	"github.com/rs/zerolog"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/endpoint"
	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/run"
	"github.com/malarun/malarun/internal/session"
	"github.com/malarun/malarun/internal/stream"
)

// attemptResult is everything an attempt left behind.
type attemptResult struct {
	spec    run.Attempt
	machine *attempt.State // its timing decisions, final once the tree is gone
	log     *attempt.Log   // what its stream said
	// openCalls are the names of its tool calls without a result yet, by
	// tool_use id: a result's tool_finished names its tool at the cost of
	// a lookup, however many calls the attempt made (emitLine).
	openCalls map[string]string
	stop      attempt.StopReason
	signal    os.Signal // for attempt.StopInterrupted
	// apiAt is the API's address as it is safe to print (attempt.StopUnreachable).
	apiAt      string
	exit       proc.Exit
	tree       proc.StopReport
	stdoutPath string
	stderrPath string
	stderrTail string
	started    time.Time
	ended      time.Time
	// noResponse counts the requests the API never answered that the CLI
	// asked again itself, and their cost (docs/design.md §D36).
	noResponse attempt.NoResponses
	// sessionFile is the CLI's session file as the attempt began ("": none
	// yet) and sessionFrom its length then: what the attempt adds to it is
	// read to see that its prompt reached the conversation (§F38).
	sessionFile string
	sessionFrom int64
}

// stuckExitWait bounds the wait for a CLI that SIGKILL could not end.
const stuckExitWait = 5 * time.Second

// attemptDriver runs one attempt: it feeds what happens (the stream's
// lines, the timer, a probe's finding, signals) to the attempt machine and
// carries out what the machine decides. It decides nothing itself.
type attemptDriver struct {
	r     *runner
	res   *attemptResult
	log   zerolog.Logger
	child Child
	m     *attempt.State
	lines <-chan stream.Event
	// One timer, always set to the machine's next decision time.
	timer *time.Timer
	// probed delivers the look at the API's address (one at a time); the
	// look runs under probeCtx, which ends with the attempt.
	probed   <-chan endpoint.Finding
	probeCtx context.Context
	endProbe context.CancelFunc
	// ctxDone and lockLost are set to nil once seen, so that a closed
	// channel cannot spin the loop.
	ctxDone, lockLost <-chan struct{}
	stopDone          chan proc.StopReport
	treeGone          bool
	// expectingExit: the child was told its exit is expected (ExpectExit).
	expectingExit bool
	// stalledAgents are the sub-agents claude ended as stalled, by task
	// id, said once each.
	stalledAgents map[string]bool
}

// runAttempt starts one claude process and supervises it until its stream
// is read to the end and its whole tree is gone. It never returns while a
// process of the tree is alive (short of one stuck in the kernel).
func (r *runner) runAttempt(spec run.Attempt) (*attemptResult, error) {
	res := &attemptResult{spec: spec, log: attempt.NewLog(spec.SessionID), started: time.Now(),
		stdoutPath: filepath.Join(r.rec.base.RunDir, fmt.Sprintf("attempt-%d.jsonl", spec.N)),
		stderrPath: filepath.Join(r.rec.base.RunDir, fmt.Sprintf("attempt-%d.stderr", spec.N))}
	if !record.ValidSessionID(spec.SessionID) {
		// Every id is checked where it enters (the record, malarun's own);
		// this is the last guard before it becomes an argument.
		return nil, fmt.Errorf("refusing to pass %q to claude as a session id", spec.SessionID)
	}
	if err := r.folder.ensureRunDir(); err != nil {
		return nil, err
	}
	res.sessionFile = session.Path(r.cfg.Env, spec.SessionID)
	res.sessionFrom = session.Size(res.sessionFile)
	child, err := r.deps.Claude.Start(Launch{Path: r.cfg.ClaudeBin, Args: claudeArgs(r.cfg, spec), Dir: r.cfg.Cwd,
		Env: attemptEnv(r.cfg.Env, r.deps.Traceparent, spec.N), Stdin: r.folder.promptPath(spec), Stdout: res.stdoutPath, Stderr: res.stderrPath,
		Marker: markerEnv + "=" + r.rec.base.Marker, Cgroup: r.rec.facts.cgroupInUse()})
	if err != nil {
		return nil, err
	}
	r.rec.noteCgroupRefused()
	defer child.Close()
	if err := r.rec.attemptStarted(spec, child); err != nil {
		child.Stop(r.cfg.KillGrace, r.shutdown.hurry)
		return nil, err
	}
	d := r.newAttemptDriver(res, child)
	defer d.endProbe()
	defer d.timer.Stop()
	d.loop()
	return d.finish(), nil
}

func (r *runner) newAttemptDriver(res *attemptResult, child Child) *attemptDriver {
	spec := res.spec
	d := &attemptDriver{r: r, res: res, child: child, lines: child.Lines(), ctxDone: r.ctxDone, lockLost: r.lockLost,
		log: r.log.With().Int("attempt", spec.N).Str("session", spec.SessionID).Logger()}
	d.probeCtx, d.endProbe = context.WithCancel(context.Background())
	// The event first: an observer may open an output group for the attempt.
	r.emit(event.Event{Kind: event.AttemptStarted, Attempt: spec.N, Session: spec.SessionID, Pid: child.Pid(), Resume: spec.Resume, Purpose: spec.Purpose()})
	d.log.Info().Int("pid", child.Pid()).Bool("resume", spec.Resume).Str("transcript", res.stdoutPath).Msg("attempt started")
	lim := r.attemptLimits(spec.Checkpoint)
	lim.Context = r.firstRequestTokens(res.sessionFrom)
	d.m = attempt.New(lim, time.Now())
	r.lines.taskLabels = nil // the new machine counts its tasks' changes afresh
	d.timer = time.NewTimer(time.Hour)
	d.rearm()
	return d
}

// attemptLimits are the attempt machine's limits now: the configuration's,
// with the room the run gave each phase (docs/design.md §D30).
func (r *runner) attemptLimits(checkpoint bool) attempt.Limits {
	return attempt.Limits{
		Idle: r.cfg.IdleTimeout, Tool: r.cfg.ToolTimeout, Text: r.cfg.TextTimeout, Thinking: r.cfg.ThinkingTimeout,
		ToolInput: r.cfg.ToolInputTimeout, FirstByte: r.cfg.FirstByteTimeout, Subagent: r.cfg.SubagentTimeout,
		PartialMessages: r.cfg.PartialMessages, Window: r.lines.windowTokens(),
		Room: r.state.Room, Background: r.cfg.BackgroundTimeout,
		Linger: r.cfg.ResultExitTimeout, Deadline: r.policy.Deadline, Checkpoint: checkpoint,
		LimitWaitLeft: r.state.LimitWaitLeft(), Talked: r.state.Talked, UnreachableWindow: r.cfg.UnreachableWindow,
	}
}

// rearm sets the timer to the machine's next decision time.
func (d *attemptDriver) rearm() {
	d.timer.Stop()
	if at := d.m.Wake(); !at.IsZero() {
		d.timer.Reset(time.Until(at))
	}
}

// loop waits for what happens next until the stream is read and the tree
// is gone. Every way out goes through a stop (the end of the stream
// included: tools the CLI did not wait for are ended).
func (d *attemptDriver) loop() {
	for d.lines != nil || !d.treeGone {
		select {
		case ev, ok := <-d.lines:
			if !ok {
				d.lines = nil
				d.step(attempt.Input{Kind: attempt.StreamEnd})
				continue
			}
			d.onLine(ev)
		case <-d.timer.C:
			// Consumed before Written: the CLI may write in between, and
			// the reader can never have taken more than was written.
			consumed := d.child.Consumed()
			d.step(attempt.Input{Kind: attempt.Wake, Consumed: consumed, Written: d.child.Written()})
		case f := <-d.probed:
			d.probed = nil
			d.log.Info().Str("api", d.r.target.Shown).Str("found", f.String()).Msg("looked at the API's address")
			d.step(attempt.Input{Kind: attempt.Probed, Finding: f})
		case <-d.ctxDone:
			d.ctxDone = nil
			d.step(attempt.Input{Kind: attempt.Interrupt})
		case sig := <-d.r.deps.Signals:
			if d.r.shutdown.interrupt(sig, d.r.log, d.r.cfg.ShutdownGrace) {
				d.res.signal = sig
				d.step(attempt.Input{Kind: attempt.Interrupt})
			}
		case <-d.lockLost:
			// Another malarun runs the issue now (journal.Journal.Lost):
			// its claude must not work beside this one's.
			d.lockLost = nil
			d.log.Error().Msg("another malarun took the issue over; stopping this one's claude")
			d.step(attempt.Input{Kind: attempt.Interrupt})
		case rep := <-d.stopDone:
			d.onTreeGone(rep)
		}
	}
}

// onLine takes in one line of the stream: its time in the timeline, the
// log, the context's occupancy, then the machine's decision.
func (d *attemptDriver) onLine(ev stream.Event) {
	r, res := d.r, d.res
	r.folder.timelineLine(res.spec.N, &ev, time.Now())
	other := res.log.OtherSession
	res.log.Observe(ev)
	if other == "" && res.log.OtherSession != "" {
		d.log.Warn().Str("claude_session", res.log.OtherSession).Msg("claude named another session than the one malarun gave it; malarun keeps its own")
	}
	for _, rj := range res.log.NewRejects(ev) {
		d.log.Warn().Str("field", rj.Field).Str("raw", rj.Raw).Int64("line", ev.Line).Msg("claude printed an out-of-range number; it is ignored")
	}
	stopping := d.m.StopReason() != attempt.StopNone
	now := time.Now()
	res.noResponse.Observe(&ev, now)
	if ev.Type == "system" && ev.Status == "failed" && strings.HasPrefix(ev.Summary, "Agent stalled") && !d.stalledAgents[ev.TaskID] {
		// The CLI's own limit on a silent sub-agent (which malarun sets:
		// attempt.CLIVars) ended one; its main agent goes on (§D33).
		// task_updated says it, and 2.1.332's task_notification again.
		if d.stalledAgents == nil {
			d.stalledAgents = map[string]bool{}
		}
		d.stalledAgents[ev.TaskID] = true
		d.log.Warn().Str("task", ev.TaskID).Str("why", ev.Summary).Msg("claude ended a sub-agent whose stream was silent for subagent_timeout; its main agent goes on without its work")
	}
	pressure := r.lines.observeContext(d.log, ev)
	eff := d.m.Step(attempt.Input{Kind: attempt.Line, Event: ev, Pressure: pressure}, now)
	// A retry the CLI announces on a line malarun stops it for (refused
	// credentials, a usage limit it would sleep through) never happens:
	// it is not one of claude's retries.
	l := lineNote{evented: !stopping, stopsHere: eff.Stop && !stopping}
	r.lines.logLine(d.log, ev, l)
	if !stopping {
		// What the line did comes before what malarun does about it.
		r.lines.emitLine(res, d.m, ev, l, r.state.CostUSD)
		r.rec.progress(ev, d.m)
	}
	d.apply(eff)
}

// step feeds the machine one input and carries out its decision.
func (d *attemptDriver) step(in attempt.Input) { d.apply(d.m.Step(in, time.Now())) }

// apply carries out what the machine decided.
func (d *attemptDriver) apply(eff attempt.Effects) {
	n, session := d.res.spec.N, d.res.log.SessionID
	for _, tk := range eff.Started {
		d.log.Info().Str("task", tk.ID).Str("type", tk.Type).Str("description", tk.Description).Msg("background task started")
		d.r.emit(event.Event{Kind: event.TaskStarted, Attempt: n, Session: session, Task: tk.ID, Reason: attempt.TaskLabel(tk)})
	}
	for _, tk := range eff.Finished {
		d.log.Info().Str("task", tk.ID).Msg("background task finished")
		d.r.emit(event.Event{Kind: event.TaskFinished, Attempt: n, Session: session, Task: tk.ID, Reason: attempt.TaskLabel(tk)})
	}
	if eff.Probe {
		d.startProbe()
	}
	if soon := d.m.ExpectsExit(); soon != d.expectingExit {
		d.expectingExit = soon
		d.child.ExpectExit(soon)
	}
	if !eff.Stop {
		d.rearm()
		return
	}
	d.timer.Stop()
	// From here on the stream is the dying CLI's last words (§D35).
	d.res.log.Stopped(d.m.StopAt())
	d.stopTree(eff.Grace)
}

// startProbe looks at the API's address beside the attempt: the CLI goes
// on with its own retries meanwhile, and the loop receives the finding (at
// most one; the channel never blocks the probe). The probe ends with the
// attempt (probeCtx).
func (d *attemptDriver) startProbe() {
	t := d.r.target
	d.log.Info().Str("api", t.Shown).Str("proxy", t.Proxy).
		Msg("claude got no answer from the API, and none yet in this run: looking at the address")
	out := make(chan endpoint.Finding, 1)
	go func() { out <- d.r.deps.Probe(d.probeCtx, t) }()
	d.probed = out
}

// stopTree says why the machine stopped the attempt and ends its tree in
// the background: the loop goes on reading the stream meanwhile.
func (d *attemptDriver) stopTree(g attempt.Grace) {
	why := d.m.StopReason()
	grace := d.r.cfg.KillGrace
	if g == attempt.ShutdownGrace {
		grace = d.r.cfg.ShutdownGrace
	}
	d.logStop(why)
	pid := d.child.Pid()
	d.log.Info().Str("reason", why.String()).Int("pid", pid).Stringer("grace", grace).Msg("stopping process tree")
	if why != attempt.StopExited { // after a normal exit only leftovers are ended: tree_gone says so
		d.r.emit(event.Event{Kind: event.KillSent, Attempt: d.res.spec.N, Session: d.res.log.SessionID, Pid: pid, Reason: why.String(), Grace: grace})
	}
	d.stopDone = make(chan proc.StopReport, 1)
	go func() { d.stopDone <- d.child.Stop(grace, d.r.shutdown.hurry) }()
}

// logStop logs the cause of a stop, and for a hang emits hang_detected.
func (d *attemptDriver) logStop(why attempt.StopReason) {
	cfg := d.r.cfg
	switch why {
	case attempt.StopHang:
		limit, tools := d.m.Hang()
		doing := d.m.HangPhase()
		d.log.Warn().Stringer("silent_for", limit).Str("phase", doing.Phase.String()).Str("doing", doing.Label()).Strs("tools_running", tools).
			Str(event.AlsoField, string(event.HangDetected)).Msg("hang detected: no output within the limit")
		d.r.emit(event.Event{Kind: event.HangDetected, Attempt: d.res.spec.N, Session: d.res.log.SessionID, Limit: limit, Silence: d.m.HangSilence(),
			ToolsRunning: tools, Phase: doing.Phase.String(), Doing: doing.Label(), Reason: fmt.Sprintf("no output for %s", limit)})
	case attempt.StopLingered:
		d.log.Warn().Stringer("after", cfg.ResultExitTimeout).Msg("claude still alive after its result line")
	case attempt.StopBackgroundTimeout:
		_, tasks := d.m.CutOff()
		d.log.Warn().Stringer(configkey.BackgroundTimeout, cfg.BackgroundTimeout).Strs("tasks", taskIDs(tasks)).Msg("background tasks still running after background_timeout")
	case attempt.StopUsageLimit:
		l := d.m.Limit()
		d.log.Warn().Time("retry_at", l.RetryAt).Str("why", l.Reason).Str(event.AlsoField, string(event.AttemptEnded)).
			Msg("claude would wait out a usage limit longer than limit_wait allows")
	case attempt.StopUnreachable:
		d.res.apiAt = d.r.target.ShownWithProxy()
		d.log.Warn().Str("api", d.res.apiAt).Str("code", d.m.Unreachable().Code).Str(event.AlsoField, string(event.AttemptEnded)).
			Msg("the API cannot be reached and never was in this run: stopping")
	case attempt.StopPressure:
		d.log.Info().Int64("occupancy", d.r.lines.monitor.Occupancy()).Int64("window", d.r.lines.windowTokens()).Msg("context nearly full; stopping at a safe point to checkpoint")
	}
}

// onTreeGone ends the loop's wait for the stop.
func (d *attemptDriver) onTreeGone(rep proc.StopReport) {
	d.res.tree, d.stopDone, d.treeGone = rep, nil, true
	d.log.Info().Int("termed", rep.Termed).Int("killed", rep.Killed).Ints("left", rep.Left).Stringer("took", rep.Duration).Msg("process tree gone")
	if d.m.StopReason() != attempt.StopExited || rep.Termed+rep.Killed > 0 {
		d.r.emit(event.Event{Kind: event.TreeGone, Attempt: d.res.spec.N, Session: d.res.log.SessionID, Termed: rep.Termed, Killed: rep.Killed, Took: rep.Duration})
	}
	if len(rep.Escaped) > 0 {
		// Root can move a process out of the run's group; while malarun
		// lives the subreaper and the marker still find it (docs/platforms.md).
		d.log.Warn().Ints("pids", rep.Escaped).Msg("processes of the run had left its cgroup; found by the subreaper or the run's marker, and ended")
	}
	if len(rep.Left) > 0 {
		// SIGKILL did not end them (stuck in the kernel, e.g. on a dead
		// network file system). If the CLI is among them its stream never
		// ends: stop reading rather than wait forever.
		d.log.Error().Ints("pids", rep.Left).Msg("processes survived SIGKILL; giving up on them")
		d.child.Abandon()
	}
}

// finish completes the result once the stream is read and the tree gone.
func (d *attemptDriver) finish() *attemptResult {
	res := d.res
	if err := d.child.ReadErr(); err != nil {
		d.log.Error().Err(err).Msg("reading the stream")
	}
	select {
	case <-d.child.Done():
		res.exit = d.child.Exit()
	case <-time.After(stuckExitWait):
		res.exit = proc.Exit{Code: -1, Err: errors.New("claude did not exit after SIGKILL")}
	}
	res.ended = time.Now()
	res.noResponse.End(res.ended)
	if d.m.FinalStop() == attempt.StopHang && d.m.HangPhase().FirstByte {
		// A request never answered, found by malarun: the resume asks again.
		res.noResponse.Found(d.m.HangSilence())
	}
	res.machine = d.m
	if res.stop = d.m.FinalStop(); res.stop == attempt.StopInterrupted && res.signal == nil {
		res.signal = d.r.shutdown.interrupted
	}
	res.stderrTail = tailFile(res.stderrPath, stderrTailBytes)
	return res
}

// firstRequestTokens is about how many tokens an attempt's first request
// carries, for its first byte's allowance (docs/design.md §D33): the
// session's context as last measured, or where this malarun has not
// measured it (a resumed run, a new process) the session file's size
// (sessionBytes, what the CLI will send again, and more), and the prompt,
// at 4 bytes a token. The machine caps it at the window.
func (r *runner) firstRequestTokens(sessionBytes int64) int64 {
	context := r.lines.monitor.Occupancy()
	if context == 0 {
		context = sessionBytes / 4
	}
	return context + int64(len(r.cfg.Prompt))/4
}
