// Package supervisor runs one issue under supervision: it spawns the CLI for
// each attempt, follows its stream, enforces the idle and tool timers, kills
// the whole process tree when needed and reports how the run ended.
package supervisor

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"github.com/malarun/malarun/internal/ctxpressure"
	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/reach"
	"github.com/malarun/malarun/internal/retry"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/usagelimit"
)

// RecordWriter saves the issue's record: Save durably (at transitions),
// SaveQuick without fsync (progress within an attempt).
type RecordWriter interface {
	Save(journal.Record) error
	SaveQuick(journal.Record) error
}

// Run supervises cfg.IssueID until it succeeds or fails. The error is nil
// only when claude reported success; otherwise it is a *RunError or a
// plain error for trouble of malarun's own (state directory, files).
func Run(ctx context.Context, cfg Config, deps Deps) (Report, error) {
	if err := cfg.Validate(); err != nil {
		return Report{}, &RunError{Kind: outcome.Usage, Detail: err.Error()}
	}
	tmpl, err := loadPrompts(cfg.PromptsDir)
	if err != nil {
		return Report{}, &RunError{Kind: outcome.Usage, Detail: err.Error()}
	}
	started := time.Now()
	r := &runner{
		cfg: cfg, log: deps.Log.With().Str("issue", cfg.IssueID).Logger(), spawner: deps.Spawner, signals: deps.Signals,
		ctxDone: ctx.Done(), hurry: make(chan struct{}), exitCodeOf: deps.ExitCode, observe: deps.Observer,
		monitor:        ctxpressure.New(int64(cfg.ContextLimit), cfg.ContextThreshold),
		sideEffectFree: cfg.retryPolicy().SideEffectFree,
		budget:         usagelimit.Budget{Total: cfg.LimitWait}, rnd: deps.Rand, after: deps.After,
		self: proc.Self(), outputFailures: deps.OutputFailures, flushOutputs: deps.FlushOutputs, traceparent: deps.Traceparent,
		probe: deps.Probe,
	}
	if r.probe == nil {
		r.probe = reach.Probe
	}
	if r.rnd == nil {
		r.rnd = rand.Float64
	}
	host, _ := os.Hostname()
	r.journal, err = journal.Acquire(cfg.StateDir, cfg.IssueID, journal.Holder(os.Getpid(), host, started.UTC().Format(time.RFC3339)))
	if err != nil {
		var busy *journal.BusyError
		if errors.As(err, &busy) {
			return Report{}, &RunError{Kind: outcome.Busy, Detail: busy.Error()}
		}
		return Report{}, stateDirError(cfg.StateDir, err)
	}
	defer r.journal.Release()
	r.lockLost = r.journal.Lost()
	r.records = r.journal
	if deps.Records != nil {
		r.records = deps.Records(r.journal)
	}
	if r.spawner == nil {
		r.spawner = proc.NewSpawner(proc.WithGuard(deps.Guard...))
	}
	r.warnings()

	pl, err := r.makePlan(r.journal, started)
	if err != nil {
		return Report{}, err
	}
	r.rec = pl.rec
	// The record names the trace of the malarun that last ran the issue
	// with traces on; a continued run links to it, and this one's takes
	// its place.
	var previousTrace journal.TraceRef
	if pl.resumed {
		previousTrace = r.rec.Trace
	}
	if !cfg.Trace.IsZero() {
		r.rec.Trace = cfg.Trace
	}
	r.rec.Owner = journal.Owner{Pid: r.self.Pid, Host: host, StartedAt: started,
		StartTime: r.self.StartTime, BootID: r.self.BootID, PidNS: r.self.PidNS}
	r.rec.Status, r.rec.ExitCode, r.rec.Reason = journal.Processing, 0, ""
	r.runDir = r.rec.RunDir
	r.cfg.Cwd = r.rec.Cwd
	r.cfg.Env = withEnv(r.cfg.Env, "HOME", r.rec.Home)
	r.cfg.Env = withEnv(r.cfg.Env, markerEnv, r.rec.Marker)
	r.checkpoint = r.rec.Checkpoint
	r.target = reach.TargetOf(r.cfg.Env, r.cfg.Cwd)
	r.talked = talkedInRecord(r.rec)
	if err := r.save(); err != nil {
		return Report{}, err
	}
	r.log.Info().Str("run_dir", r.runDir).Str("prompt", cfg.PromptSource).Bool("continued", pl.resumed).Msg("run started")
	r.emit(Event{Kind: EvRunStarted, RunDir: r.runDir, Continued: pl.resumed, Session: r.rec.SessionID, PreviousTrace: previousTrace})

	rep, err := r.loop(pl, tmpl, deps, started)
	if r.shutdownTimer != nil {
		r.shutdownTimer.Stop()
	}
	if serr := r.finishRecord(err); serr != nil {
		err = serr
	}
	rep.Issue, rep.Record, rep.Started, rep.Duration = cfg.IssueID, filepath.Join(r.journal.Dir(), journal.RecordFile), started, time.Since(started)
	rep.Sessions, rep.Continuations = r.rec.Sessions, r.rec.Continuations
	rep.Reclaims, rep.Reclaimed = r.rec.RunReclaims, pl.reclaimed
	var re *RunError
	if errors.As(err, &re) && errors.Is(err, outcome.RateLimit) {
		rep.RetryAt, rep.LimitType = re.RetryAt, re.LimitType
	}
	fin := Event{Kind: EvRunFinished, Outcome: string(outcome.Of(err)), CostUSD: rep.CostUSD, Session: rep.SessionID, ExitCode: r.exitCode(err),
		RetryAt: rep.RetryAt, LimitType: rep.LimitType}
	if err != nil {
		fin.Reason = err.Error()
	}
	r.emit(fin)
	r.timeline.Close()
	return rep, err
}

// loop runs attempts until the retry machine says done or fail.
func (r *runner) loop(pl *plan, tmpl prompts, deps Deps, started time.Time) (Report, error) {
	cfg := r.cfg
	// The run's attempts so far: those of the malaruns before this one.
	rep := Report{RunDir: r.runDir, Attempts: pl.state.Attempts}
	var deadline time.Time
	if cfg.SessionTimeout > 0 {
		deadline = started.Add(cfg.SessionTimeout)
	}
	task, err := os.ReadFile(pl.prompt)
	if err != nil {
		return rep, fmt.Errorf("read the run's prompt: %w", err)
	}
	r.task = task
	policy := cfg.retryPolicy()
	state := pl.state
	spec := pl.first
	spec.deadline = deadline
	// sessionPrompt is what the current session started with: a fresh
	// start repeats it (the task, or a continuation's checkpoint).
	sessionPrompt := pl.prompt
	if pl.resumed {
		data := promptData{IssueID: cfg.IssueID, Task: string(task), Checkpoint: r.checkpoint,
			Interrupted: callsOfRecord(r.rec.Running), Tasks: tasksOfRecord(r.rec.Tasks), Reason: "the previous malarun stopped before the run ended"}
		if pl.limited != nil {
			data.LimitNote = limitNote(*pl.limited)
		}
		t := tmpl.resume
		if !spec.resume {
			t = tmpl.fallback
			if r.checkpoint != "" {
				t = tmpl.continuation
			} else if n := len(state.SideEffects); n > 0 {
				return rep, &RunError{Kind: outcome.NotSafeToRetry, Detail: "the recorded run has no session to resume, and a fresh start would repeat tool calls with side effects"}
			}
		}
		if spec.promptPath, err = r.writePrompt(t, data, spec.n); err != nil {
			return rep, err
		}
		if !spec.resume {
			sessionPrompt = spec.promptPath
		}
	}
	// A limit known before the first attempt (the record's retry_at, or
	// another malarun's) is waited out, or stops the run, without calling the API.
	if l, ok := r.pendingLimit(time.Now()); ok {
		if err := r.onLimit(l, "", deadline); err != nil {
			return rep, err
		}
	} else {
		r.rec.RetryAt, r.rec.LimitType = time.Time{}, ""
	}
	for {
		if err := r.mayStart(deadline); err != nil {
			return rep, err
		}
		if cfg.MaxCostUSD > 0 {
			spec.budgetUSD = cfg.MaxCostUSD - state.CostUSD
			if spec.budgetUSD <= 0 {
				return rep, &RunError{Kind: outcome.Budget, Detail: fmt.Sprintf("the run has cost $%.4f, at or above max_cost_usd $%.4f", state.CostUSD, cfg.MaxCostUSD)}
			}
		}
		r.costBefore = state.CostUSD
		res, err := r.runAttempt(spec)
		if err != nil {
			var se *proc.StartError
			if errors.As(err, &se) {
				return rep, &RunError{Kind: outcome.StartFailed, Detail: fmt.Sprintf("%s (claude_bin %q)", se.Err, cfg.ClaudeBin)}
			}
			return rep, err
		}
		outcome := outcomeOf(res)
		var action retry.Action
		state, action = retry.Next(policy, state, outcome)
		rep.Attempts = state.Attempts
		rep.SessionID = outcome.SessionID
		rep.CostUSD = state.CostUSD // finite: see recordDecision
		r.log.Info().Int("attempt", spec.n).Str("outcome", outcome.Kind.String()).Str("reason", outcome.Reason).
			Str("action", action.Kind.String()).Str("session", action.SessionID).Stringer("backoff", action.Backoff).
			Int("idle_retries", state.IdleRetries).Msg("retry decision")
		rep.History = append(rep.History, attemptReport(spec, res, outcome))
		for _, rr := range res.log.results {
			rep.Usage = addUsage(rep.Usage, rr.Usage) // bounded counts, saturating sum
		}
		if res.log.cliVersion != "" {
			rep.ClaudeCodeVersion = res.log.cliVersion
		}
		r.emit(Event{Kind: EvAttemptEnded, Attempt: spec.n, Session: outcome.SessionID, Outcome: outcome.Kind.String(), Ending: res.ending.String(),
			Reason: outcome.Reason, ExitCode: res.exit.Code, ClaudeCodeVersion: res.log.cliVersion})
		limited := outcome.Kind == retry.RateLimit && action.Kind == retry.Fail
		if !limited {
			// A usage limit is decided below: limit_wait or finished says what came of it.
			r.emit(Event{Kind: EvRetryDecided, Attempt: spec.n, Session: action.SessionID, Action: action.Kind.String(), Reason: action.Reason, Backoff: action.Backoff})
		}
		switch {
		case action.Kind == retry.Continue && spec.checkpoint:
			r.checkpoint = ctxpressure.ExtractCheckpoint(lastReply(res))
		case action.Kind == retry.Fallback:
			r.checkpoint = "" // the new session starts from the task, not an older checkpoint
		}
		r.recordDecision(state, res)
		if action.Kind != retry.Done && action.Kind != retry.Fail {
			// A run that ends here is saved once, by finishRecord.
			if err := r.save(); err != nil {
				return rep, err
			}
		}

		if limited {
			l := r.limitOf(res, time.Now())
			if err := r.onLimit(l, outcome.Reason, deadline); err != nil {
				r.log.Info().Err(err).Int("attempts", rep.Attempts).Msg("run stopped on a usage limit")
				return rep, err
			}
			// A limit wait is not a retry: the limited attempt uses none of
			// max_attempts, and no idle-retry count went up (the retry
			// machine saw a final outcome). The session exists even if the
			// refused request was its first, so it is resumed.
			state.AttemptsAtStart++
			next := attemptSpec{n: spec.n + 1, sessionID: firstNonEmpty(state.SessionID, spec.sessionID), resume: true, deadline: deadline}
			data := promptData{IssueID: cfg.IssueID, Reason: outcome.Reason, Task: string(task), Checkpoint: r.checkpoint,
				Interrupted: toolCalls(res.cutOff), Tasks: res.cutTasks, LimitNote: limitNote(l)}
			t := tmpl.resume
			if spec.checkpoint {
				// The checkpoint was refused, not written: ask again.
				next.checkpoint, state.Checkpointing, t = true, true, tmpl.checkpoint
			}
			state.SessionID = next.sessionID
			if next.promptPath, err = r.writePrompt(t, data, next.n); err != nil {
				return rep, err
			}
			spec = next
			continue
		}

		switch action.Kind {
		case retry.Done:
			r.finish(res, &rep, started)
			return rep, nil
		case retry.Fail:
			err := &RunError{Kind: action.Failure, Detail: action.Reason, Signal: res.signal}
			// Info, not error: the command line prints the error itself.
			r.log.Info().Err(err).Int("attempts", rep.Attempts).Float64("cost_usd", rep.CostUSD).Stringer("took", time.Since(started).Round(time.Millisecond)).Msg("run failed")
			return rep, err
		}

		if stopped := r.backoff(action.Backoff, deadline); stopped != nil {
			return rep, stopped
		}
		next := attemptSpec{n: spec.n + 1, promptPath: sessionPrompt, deadline: deadline}
		data := promptData{IssueID: cfg.IssueID, Reason: outcome.Reason, Task: string(task), Checkpoint: r.checkpoint}
		var t *template.Template
		switch action.Kind {
		case retry.Resume:
			next.sessionID, next.resume = action.SessionID, true
			data.Interrupted, data.Tasks = toolCalls(res.cutOff), res.cutTasks
			t = tmpl.resume
		case retry.Checkpoint:
			next.sessionID, next.resume, next.checkpoint = action.SessionID, true, true
			t = tmpl.checkpoint
			r.emit(Event{Kind: EvCheckpoint, Attempt: next.n, Session: next.sessionID, Occupancy: r.monitor.Occupancy(), Window: r.windowTokens()})
		case retry.Continue, retry.Fallback:
			next.sessionID = newSessionID()
			// An empty checkpoint would seed a session that knows nothing:
			// the fallback prompt carries the task instead.
			t = tmpl.fallback
			if action.Kind == retry.Continue && r.checkpoint != "" {
				t = tmpl.continuation
			}
			r.logRestart(state.Continuations, action, data.Checkpoint)
			r.monitor.NewSession()
		case retry.Fresh:
			next.sessionID = newSessionID() // with the prompt the current session started with
			r.monitor.NewSession()
		}
		if t != nil {
			if next.promptPath, err = r.writePrompt(t, data, next.n); err != nil {
				return rep, err
			}
			if !next.resume {
				sessionPrompt = next.promptPath
			}
		}
		spec = next
	}
}

// writePrompt renders a template into the run folder as the prompt of attempt n.
func (r *runner) writePrompt(t *template.Template, data promptData, n int) (string, error) {
	text, err := render(t, data)
	if err != nil {
		return "", &RunError{Kind: outcome.Usage, Detail: err.Error()}
	}
	if err := r.ensureRunDir(); err != nil {
		return "", err
	}
	path := filepath.Join(r.runDir, fmt.Sprintf("attempt-%d.prompt.md", n))
	if err := writePrivate(path, text); err != nil {
		return "", fmt.Errorf("save the prompt of attempt %d: %w", n, err)
	}
	if r.prompts == nil {
		r.prompts = map[string][]byte{}
	}
	r.prompts[path] = text
	return path, nil
}

// warnings logs what in the environment or configuration can hurt a run.
func (r *runner) warnings() {
	if !r.spawner.Subreaper() && proc.CanSubreap {
		// Without it they are still found by the run's marker, as on darwin,
		// but a process that clears its environment is not.
		r.log.Warn().Msg("could not become a child subreaper: tool processes whose parent dies are found only by the run's marker")
	}
	if envValue(r.cfg.Env, "DISABLE_AUTO_COMPACT") != "" {
		r.log.Warn().Msg("DISABLE_AUTO_COMPACT is set: the CLI refuses requests at 90% of its window, so checkpoint requests may fail; malarun falls back to a fresh session with the original task")
	}
	if !r.cfg.PartialMessages && r.cfg.IdleTimeout < 15*time.Minute {
		r.log.Warn().Stringer("idle_timeout", r.cfg.IdleTimeout).Msg("partial_messages is off: a long reply prints nothing until it is complete, so a short idle_timeout can kill a healthy run")
	}
}

// logRestart records a context restart: which continuation, how full the
// context was, and how much the next session starts with.
func (r *runner) logRestart(n int, action retry.Action, checkpoint string) {
	w, src := r.monitor.Window()
	r.emit(Event{Kind: EvRestart, Continuation: n, Action: action.Kind.String(), Reason: action.Reason,
		Occupancy: r.monitor.Occupancy(), Window: w, CheckpointBytes: len(checkpoint)})
	r.log.Info().Int("continuation", n).Str("kind", action.Kind.String()).Int64("occupancy", r.monitor.Occupancy()).
		Int64("window", w).Str("window_source", src).Int("checkpoint_bytes", len(checkpoint)).Str("reason", action.Reason).
		Msg("context restart: continuing in a new session")
}

// lastReply is the agent's final text in an attempt: the result text, or
// the text of its last assistant message.
func lastReply(res *attemptResult) string {
	if res.log.result != nil && res.log.result.Result != "" {
		return res.log.result.Result
	}
	return res.log.lastText
}

// envValue returns the value of name in env ("" when unset).
func envValue(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// finish reports a success: the last result's text goes in the report,
// with where its line is, so that a text longer than the decoder keeps can
// be copied whole from the transcript.
func (r *runner) finish(res *attemptResult, rep *Report, started time.Time) {
	last := res.log.result
	rep.Result, rep.ResultCut = last.Result, last.ResultTruncated
	rep.ResultLine = stream.LineRef{Path: res.stdoutPath, Offset: last.Offset, Bytes: last.Bytes}
	r.log.Info().Int("attempts", rep.Attempts).Str("session", rep.SessionID).Float64("cost_usd", rep.CostUSD).
		Stringer("took", time.Since(started).Round(time.Millisecond)).Int64("peak_rss_kb", PeakRSSKB()).Msg("run succeeded")
	if last.ResultTruncated {
		r.log.Info().Int64("line_bytes", last.Bytes).Int64("offset", last.Offset).Str("transcript", res.stdoutPath).
			Msg("the result text is longer than malarun keeps in memory; the whole of it is in the transcript")
	}
}

func toolCalls(tus []stream.ToolUse) []retry.ToolCall {
	calls := make([]retry.ToolCall, len(tus))
	for i, tu := range tus {
		calls[i] = retry.ToolCall{Name: tu.Name, Input: tu.Input}
	}
	return calls
}
