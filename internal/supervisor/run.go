// Package supervisor runs one issue under supervision: it spawns the CLI for
// each attempt, follows its stream, enforces the idle and tool timers, kills
// the whole process tree when needed and reports how the run ended.
package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/template"
	"time"

	"github.com/rs/zerolog"

	"github.com/malarun/malarun/internal/ctxpressure"
	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/retry"
	"github.com/malarun/malarun/internal/stream"
)

// Deps are the supervisor's connections to the outside world.
type Deps struct {
	Log zerolog.Logger
	// Stdout receives the final result text.
	Stdout io.Writer
	// Signals delivers SIGINT/SIGTERM: the first stops the run within
	// ShutdownGrace, a second kills the tree at once.
	Signals <-chan os.Signal
	// Spawner starts the CLI; nil makes one (which makes this process a
	// child subreaper).
	Spawner *proc.Spawner
	// ExitCode maps a run's error to the exit code the command line will
	// use, so the journal can record it; nil records 0 or 1.
	ExitCode func(error) int
	// Observer receives every Event as it happens (nil: none). It runs on
	// the supervisor's goroutine and must not block.
	Observer func(Event)
}

// Report says what a run did; it is returned with or without an error.
type Report struct {
	Issue     string
	RunDir    string
	Record    string // the issue's record.json
	Attempts  int
	SessionID string
	Result    string
	CostUSD   float64
	// History has one entry per attempt of this invocation.
	History       []AttemptReport
	Sessions      []string
	Continuations int
	Usage         stream.Usage // summed over the result lines of every attempt
	Started       time.Time
	Duration      time.Duration
}

// AttemptReport is how one attempt went.
type AttemptReport struct {
	N       int       `json:"n"`
	Session string    `json:"session"`
	Resume  bool      `json:"resume"`
	Purpose string    `json:"purpose"` // work or checkpoint
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	Ended   string    `json:"ended"`   // exited, hang, lingered, auth, interrupted, session-timeout, context-pressure
	Outcome string    `json:"outcome"` // the retry machine's view: success, hang, crash, ...
	Reason  string    `json:"reason"`
	CostUSD float64   `json:"cost_usd"`
}

// runner is the state of one Run.
type runner struct {
	cfg     Config
	log     zerolog.Logger
	spawner *proc.Spawner
	runDir  string
	signals <-chan os.Signal
	ctxDone <-chan struct{}
	monitor *ctxpressure.Monitor

	journal    *journal.Journal
	rec        journal.Record // the issue's record, saved at every transition
	checkpoint string         // the last checkpoint of this run
	exitCodeOf func(error) int
	observe    func(Event)
	costBefore float64 // the run's cost before the current attempt

	interrupted os.Signal
	hurry       chan struct{} // closed by a second signal: kill at once
	hurryOnce   sync.Once
	// shutdownTimer hurries the stop once shutdown_grace has passed since the first signal.
	shutdownTimer *time.Timer
}

// interrupt handles SIGINT/SIGTERM. It reports true for the first signal
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

// Run supervises cfg.IssueID until it succeeds or fails. The error is nil
// only when claude reported success; otherwise it is a *RunError or a
// plain error for trouble of malarun's own (state directory, files).
func Run(ctx context.Context, cfg Config, deps Deps) (Report, error) {
	if err := cfg.Validate(); err != nil {
		return Report{}, &RunError{Kind: ErrConfig, Detail: err.Error()}
	}
	tmpl, err := loadPrompts(cfg.PromptsDir)
	if err != nil {
		return Report{}, &RunError{Kind: ErrConfig, Detail: err.Error()}
	}
	started := time.Now()
	r := &runner{
		cfg: cfg, log: deps.Log.With().Str("issue", cfg.IssueID).Logger(), spawner: deps.Spawner, signals: deps.Signals,
		ctxDone: ctx.Done(), hurry: make(chan struct{}), exitCodeOf: deps.ExitCode, observe: deps.Observer,
		monitor: ctxpressure.New(int64(cfg.ContextLimit), cfg.ContextThreshold),
	}
	host, _ := os.Hostname()
	r.journal, err = journal.Acquire(cfg.StateDir, cfg.IssueID, journal.Holder(os.Getpid(), host, started.UTC().Format(time.RFC3339)))
	if err != nil {
		var busy *journal.BusyError
		if errors.As(err, &busy) {
			return Report{}, &RunError{Kind: ErrBusy, Detail: busy.Error()}
		}
		return Report{}, &RunError{Kind: ErrConfig, Detail: fmt.Sprintf("state_dir %s: %v", cfg.StateDir, err)}
	}
	defer r.journal.Release()
	if r.spawner == nil {
		r.spawner = proc.NewSpawner()
	}
	r.warnings()

	pl, err := r.makePlan(r.journal, started)
	if err != nil {
		return Report{}, err
	}
	r.rec = pl.rec
	r.rec.Owner = journal.Owner{Pid: os.Getpid(), Host: host, StartedAt: started}
	r.rec.Status, r.rec.ExitCode, r.rec.Reason = journal.Processing, 0, ""
	r.runDir = r.rec.RunDir
	r.cfg.Cwd = r.rec.Cwd
	r.cfg.Env = withEnv(r.cfg.Env, "HOME", r.rec.Home)
	r.cfg.Env = withEnv(r.cfg.Env, markerEnv, r.rec.Marker)
	r.checkpoint = r.rec.Checkpoint
	if err := r.save(); err != nil {
		return Report{}, err
	}
	r.log.Info().Str("run_dir", r.runDir).Str("prompt", cfg.PromptSource).Bool("continued", pl.resumed).Msg("run started")
	r.emit(Event{Kind: EvRunStarted, RunDir: r.runDir, Continued: pl.resumed, Session: r.rec.SessionID})

	rep, err := r.loop(pl, tmpl, deps, started)
	if r.shutdownTimer != nil {
		r.shutdownTimer.Stop()
	}
	r.finishRecord(err)
	rep.Issue, rep.Record, rep.Started, rep.Duration = cfg.IssueID, filepath.Join(r.journal.Dir(), journal.RecordFile), started, time.Since(started)
	rep.Sessions, rep.Continuations = r.rec.Sessions, r.rec.Continuations
	fin := Event{Kind: EvRunFinished, Outcome: "success", CostUSD: rep.CostUSD, Session: rep.SessionID, ExitCode: r.exitCode(err)}
	if err != nil {
		fin.Outcome, fin.Reason = kindName(err), err.Error()
	}
	r.emit(fin)
	return rep, err
}

// loop runs attempts until the retry machine says done or fail.
func (r *runner) loop(pl *plan, tmpl prompts, deps Deps, started time.Time) (Report, error) {
	cfg := r.cfg
	rep := Report{RunDir: r.runDir}
	var deadline time.Time
	if cfg.SessionTimeout > 0 {
		deadline = started.Add(cfg.SessionTimeout)
	}
	task, err := os.ReadFile(pl.prompt)
	if err != nil {
		return rep, fmt.Errorf("read the run's prompt: %w", err)
	}
	policy := cfg.retryPolicy()
	state := pl.state
	spec := pl.first
	spec.deadline = deadline
	// sessionPrompt is what the current session started with: a fresh
	// start repeats it (the task, or a continuation's checkpoint).
	sessionPrompt := pl.prompt
	if pl.resumed {
		data := promptData{IssueID: cfg.IssueID, Task: string(task), Checkpoint: r.checkpoint,
			Interrupted: r.rec.Running, Reason: "the previous malarun stopped before the run ended"}
		t := tmpl.resume
		if !spec.resume {
			t = tmpl.fallback
			if r.checkpoint != "" {
				t = tmpl.continuation
			} else if n := len(state.SideEffects); n > 0 {
				return rep, &RunError{Kind: ErrNotSafeToRetry, Detail: "the recorded run has no session to resume, and a fresh start would repeat tool calls with side effects"}
			}
		}
		if spec.promptPath, err = r.writePrompt(t, data, spec.n); err != nil {
			return rep, err
		}
		if !spec.resume {
			sessionPrompt = spec.promptPath
		}
	}
	for {
		if cfg.MaxCostUSD > 0 {
			spec.budgetUSD = cfg.MaxCostUSD - state.CostUSD
		}
		r.costBefore = state.CostUSD
		res, err := r.runAttempt(spec)
		if err != nil {
			var se *proc.StartError
			if errors.As(err, &se) {
				return rep, &RunError{Kind: ErrStart, Detail: fmt.Sprintf("%s (claude_bin %q)", se.Err, cfg.ClaudeBin)}
			}
			return rep, err
		}
		outcome := outcomeOf(res)
		var action retry.Action
		state, action = retry.Next(policy, state, outcome)
		rep.Attempts = state.Attempts
		rep.SessionID = outcome.SessionID
		rep.CostUSD = state.CostUSD
		r.log.Info().Int("attempt", spec.n).Str("outcome", outcome.Kind.String()).Str("reason", outcome.Reason).
			Str("action", action.Kind.String()).Str("session", action.SessionID).Stringer("backoff", action.Backoff).
			Int("idle_retries", state.IdleRetries).Msg("retry decision")
		rep.History = append(rep.History, attemptReport(spec, res, outcome))
		if res.log.result != nil {
			rep.Usage = addUsage(rep.Usage, res.log.result.Usage)
		}
		r.emit(Event{Kind: EvAttemptEnded, Attempt: spec.n, Session: outcome.SessionID, Outcome: outcome.Kind.String(), Reason: outcome.Reason, ExitCode: res.exit.Code})
		r.emit(Event{Kind: EvRetryDecided, Attempt: spec.n, Session: action.SessionID, Action: action.Kind.String(), Reason: action.Reason, Backoff: action.Backoff})
		if action.Kind == retry.Continue && spec.checkpoint {
			r.checkpoint = ctxpressure.ExtractCheckpoint(lastReply(res))
		}
		if err := r.recordDecision(state, res); err != nil {
			return rep, err
		}

		switch action.Kind {
		case retry.Done:
			return rep, r.finish(deps, res, &rep, started)
		case retry.Fail:
			err := &RunError{Kind: failureKind(action.Failure), Detail: action.Reason, Signal: res.signal}
			r.log.Error().Err(err).Int("attempts", rep.Attempts).Float64("cost_usd", rep.CostUSD).Stringer("took", time.Since(started)).Msg("run failed")
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
			data.Interrupted = toolCalls(res.cutOff)
			t = tmpl.resume
		case retry.Checkpoint:
			next.sessionID, next.resume, next.checkpoint = action.SessionID, true, true
			t = tmpl.checkpoint
			r.emit(Event{Kind: EvCheckpoint, Attempt: next.n, Session: next.sessionID, Occupancy: r.monitor.Occupancy(), Window: r.windowTokens()})
		case retry.Continue, retry.Fallback:
			next.sessionID = newSessionID()
			t = tmpl.fallback
			if action.Kind == retry.Continue {
				t = tmpl.continuation
			} else {
				data.Checkpoint = ""
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

func attemptReport(spec attemptSpec, res *attemptResult, o retry.Outcome) AttemptReport {
	purpose := "work"
	if spec.checkpoint {
		purpose = "checkpoint"
	}
	return AttemptReport{N: spec.n, Session: o.SessionID, Resume: spec.resume, Purpose: purpose, Start: res.started, End: res.ended,
		Ended: res.ending.String(), Outcome: o.Kind.String(), Reason: o.Reason, CostUSD: o.CostUSD}
}

func addUsage(a, b stream.Usage) stream.Usage {
	return stream.Usage{InputTokens: a.InputTokens + b.InputTokens, OutputTokens: a.OutputTokens + b.OutputTokens,
		CacheCreationInputTokens: a.CacheCreationInputTokens + b.CacheCreationInputTokens,
		CacheReadInputTokens:     a.CacheReadInputTokens + b.CacheReadInputTokens}
}

// kindName is the short name of a run error's kind, for reports.
func kindName(err error) string {
	var re *RunError
	if errors.As(err, &re) {
		return re.Kind.Error()
	}
	return "error"
}

// writePrompt renders a template into the run folder as the prompt of attempt n.
func (r *runner) writePrompt(t *template.Template, data promptData, n int) (string, error) {
	text, err := render(t, data)
	if err != nil {
		return "", &RunError{Kind: ErrConfig, Detail: err.Error()}
	}
	path := filepath.Join(r.runDir, fmt.Sprintf("attempt-%d.prompt.md", n))
	if err := writePrivate(path, text); err != nil {
		return "", fmt.Errorf("save the prompt of attempt %d: %w", n, err)
	}
	return path, nil
}

// warnings logs what in the environment or configuration can hurt a run.
func (r *runner) warnings() {
	if !r.spawner.Subreaper() {
		r.log.Warn().Msg("could not become a child subreaper: tool processes whose parent dies may escape the kill")
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

// finish reports a success and prints the result text.
func (r *runner) finish(deps Deps, res *attemptResult, rep *Report, started time.Time) error {
	rep.Result = res.log.result.Result
	r.log.Info().Int("attempts", rep.Attempts).Str("session", rep.SessionID).Float64("cost_usd", rep.CostUSD).
		Dur("took", time.Since(started)).Int64("peak_rss_kb", peakRSSKB()).Msg("run succeeded")
	if res.log.result.ResultTruncated {
		r.log.Warn().Int("bytes", len(rep.Result)).Str("transcript", res.stdoutPath).Msg("the result text was cut; the whole of it is in the transcript")
	}
	if deps.Stdout == nil {
		return nil
	}
	if _, err := io.WriteString(deps.Stdout, rep.Result+"\n"); err != nil {
		return fmt.Errorf("write the result: %w", err)
	}
	return nil
}

// backoff waits before the next attempt. A signal or the session deadline
// ends the wait, and the run, at once: there is no process to stop.
func (r *runner) backoff(d time.Duration, deadline time.Time) error {
	if d <= 0 {
		return nil
	}
	r.log.Info().Stringer("backoff", d).Msg("waiting before the next attempt")
	t := time.NewTimer(d)
	defer t.Stop()
	var deadlineC <-chan time.Time
	if !deadline.IsZero() {
		dt := time.NewTimer(time.Until(deadline))
		defer dt.Stop()
		deadlineC = dt.C
	}
	for {
		select {
		case <-t.C:
			return nil
		case <-deadlineC:
			return &RunError{Kind: ErrSessionTimeout, Detail: "session_timeout elapsed while waiting to retry"}
		case <-r.ctxDone:
			return &RunError{Kind: ErrInterrupted, Detail: "stopped while waiting to retry; the run can be resumed"}
		case sig := <-r.signals:
			r.interrupt(sig)
			return &RunError{Kind: ErrInterrupted, Signal: sig, Detail: "stopped while waiting to retry; the run can be resumed"}
		}
	}
}

func toolCalls(tus []stream.ToolUse) []retry.ToolCall {
	calls := make([]retry.ToolCall, len(tus))
	for i, tu := range tus {
		calls[i] = retry.ToolCall{Name: tu.Name, Input: tu.Input}
	}
	return calls
}
