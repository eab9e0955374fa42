package supervisor

import (
	"errors"
	"fmt"
	"time"

	"github.com/malarun/malarun/internal/event"

	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/run"
	"github.com/malarun/malarun/internal/statefile"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/usd"
)

// loop carries out the run's actions until one ends it: internal/run
// decides each next step (Begin, then Next after each attempt, Woke after
// each sleep); this only does what it says.
func (r *runner) loop(pl *plan, started time.Time) (event.Report, error) {
	// The run's attempts so far: those of the malaruns before this one.
	rep := event.Report{RunDir: r.rec.base.RunDir, Attempts: pl.rec.Attempts}
	task, err := statefile.Read(pl.prompt, MaxPromptBytes)
	if err != nil {
		return rep, fmt.Errorf("read the run's prompt: %w", err)
	}
	r.folder.task = task
	pl.begin.Shared = sharedLimit(&r.cfg, r.log, r.state.Limit.RetryAt, time.Now())
	var act run.Action
	r.state, act = run.Begin(r.policy, pl.begin, time.Now(), r.draws())
	r.rec.facts.began = true
	var last *attemptResult
	for {
		switch act.Kind {
		case run.End:
			return rep, r.end(act, last, &rep, started)
		case run.Sleep:
			if err := r.sleep(act); err != nil {
				return rep, err
			}
			if act, err = r.woke(); err != nil {
				return rep, err
			}
		case run.Start:
			if last, err = r.startAttempt(act.Attempt); err != nil {
				return rep, err
			}
			if act, err = r.afterAttempt(last, &rep); err != nil {
				return rep, err
			}
		}
	}
}

// startAttempt starts the attempt the run decided on and runs it to its end.
func (r *runner) startAttempt(a run.Attempt) (*attemptResult, error) {
	if err := r.mayStart(); err != nil {
		return nil, err
	}
	switch a.Because.Kind {
	case run.Checkpoint:
		r.emit(event.Event{Kind: event.Checkpoint, Attempt: a.N, Session: a.SessionID, Occupancy: r.lines.monitor.Occupancy(), Window: r.lines.windowTokens()})
	case run.Continue, run.Fallback:
		r.logRestart(a.Because, a.Prompt.Data.Checkpoint)
	}
	if !a.Resume {
		r.lines.monitor.NewSession()
	}
	if err := r.folder.writePrompt(a); err != nil {
		return nil, err
	}
	res, err := r.runAttempt(a)
	if se, ok := errors.AsType[*proc.StartError](err); ok {
		return nil, &RunError{Kind: outcome.StartFailed, Detail: fmt.Sprintf("%s (claude_bin %q)", se.Err, r.cfg.ClaudeBin)}
	}
	return res, err
}

// afterAttempt asks the run what follows the attempt, and reports and
// records the attempt and the decision.
func (r *runner) afterAttempt(res *attemptResult, rep *event.Report) (run.Action, error) {
	e := r.endedOf(res)
	var act run.Action
	room := r.state.Room
	r.state, act = run.Next(r.policy, r.state, e, time.Now(), r.draws())
	if e.Hung != nil && r.state.Room != room {
		lim := r.attemptLimits(false)
		r.log.Info().Str("phase", e.Hung.Phase.String()).Str("doing", e.Hung.Label()).Stringer("allowed", lim.Allowance(e.Hung.Phase)).
			Msg("the next attempts get more room in the phase the hang was in: a healthy model can be silent there for longer, and the same kill must not come on every resume")
	}
	rep.Attempts, rep.SessionID, rep.CostUSD = r.state.Attempts, e.SessionID, r.state.CostUSD
	dec := act.Decision
	r.log.Info().Int("attempt", res.spec.N).Str("outcome", e.Ending.String()).Str("reason", e.Reason).
		Str("action", decisionWord(act)).Str("session", dec.SessionID).Stringer("backoff", dec.Backoff).
		Int("idle_retries", r.state.IdleRetries).Msg("retry decision")
	rep.History = append(rep.History, attemptReport(res, e))
	rep.NoResponse = rep.NoResponse.Add(noResponseOf(res))
	rep.ResultsLost += res.log.ResultsLost
	if res.log.ResultsLost > 0 {
		r.log.Warn().Int("attempt", res.spec.N).Int("results_lost", res.log.ResultsLost).
			Msg("claude numbered results that never came (result_index): a result line was lost; the last result read still decides")
	}
	for _, rr := range res.log.Results {
		rep.Usage = rep.Usage.Add(rr.Usage) // saturating (stream.maxTokenSum)
	}
	if res.log.CLIVersion != "" {
		rep.ClaudeCodeVersion = res.log.CLIVersion
	}
	r.emit(event.Event{Kind: event.AttemptEnded, Attempt: res.spec.N, Session: e.SessionID, Outcome: e.Ending.String(), Ending: res.stop.String(),
		Reason: e.Reason, ExitCode: res.exit.Code, ClaudeCodeVersion: res.log.CLIVersion, NoResponse: noResponseOf(res), ResultsLost: res.log.ResultsLost})
	if dec.Kind != run.DecidedNone {
		// A usage limit is decided without one: limit_wait or finished says what came of it.
		r.emit(event.Event{Kind: event.RetryDecided, Attempt: res.spec.N, Session: dec.SessionID, Action: dec.Kind.String(), Reason: dec.Reason, Backoff: dec.Backoff})
	}
	r.rec.attemptDecided(res)
	if act.Kind == run.End || r.state.Waiting() {
		// A run that ends is saved once, by finishRecord; a limit wait saves
		// the record as waiting.
		return act, nil
	}
	return act, r.rec.save()
}

// decisionWord is the log's word for what follows an attempt.
func decisionWord(act run.Action) string {
	if act.Decision.Kind != run.DecidedNone {
		return act.Decision.Kind.String()
	}
	if act.Kind == run.Sleep {
		return "wait"
	}
	return "fail"
}

// end ends the run as the action says: the result of a success, or the
// error that carries the outcome.
func (r *runner) end(act run.Action, last *attemptResult, rep *event.Report, started time.Time) error {
	if act.Succeeded() {
		r.finish(last, rep, started)
		return nil
	}
	err := &RunError{Kind: act.Outcome, Detail: act.Reason}
	switch {
	case act.Met != nil:
		shareLimit(&r.cfg, r.log, *act.Met)
		r.log.Info().Err(err).Int("attempts", rep.Attempts).Msg("run stopped on a usage limit")
	case act.Decision.Kind == run.Fail:
		err.Signal = last.signal
		// Info, not error: the command line prints the error itself.
		r.log.Info().Err(err).Int("attempts", rep.Attempts).Float64("cost_usd", usd.Round(rep.CostUSD)).Stringer("took", time.Since(started).Round(time.Millisecond)).Msg("run failed")
	}
	return err
}

// sleep carries out a run.Sleep: a backoff, or a wait for a usage limit to
// reset (the run's state says waiting meanwhile, and so does the record,
// with its retry_at).
func (r *runner) sleep(act run.Action) error {
	if !r.state.Waiting() {
		r.log.Info().Stringer("backoff", act.Decision.Backoff).Msg("waiting before the next attempt")
		return r.pause(act.Until, run.SleepBackoff.What())
	}
	shareLimit(&r.cfg, r.log, *act.Met)
	if err := r.rec.save(); err != nil {
		return err
	}
	l := r.state.Limit
	r.log.Warn().Time("retry_at", l.RetryAt).Time("until", act.Until).Str("limit_type", l.LimitType).Stringer("limit_wait_left_after", r.state.LimitWaitLeft()).
		Str(event.AlsoField, string(event.LimitWait)).Msg("usage limit: waiting for the reset, then resuming the session")
	r.emit(limitWaitEvent(&r.state, act))
	return r.pause(act.Until, run.SleepLimit.What())
}

// woke asks the run what follows a sleep; after a limit's reset the record
// says processing again.
func (r *runner) woke() (run.Action, error) {
	waited := r.state.Waiting()
	var act run.Action
	r.state, act = run.Woke(r.policy, r.state, time.Now())
	if !waited || act.Kind != run.Start {
		return act, nil
	}
	return act, r.rec.save()
}

// logRestart records a context restart: which continuation, how full the
// context was, and how much the next session starts with.
func (r *runner) logRestart(dec run.Decision, checkpoint string) {
	n := r.state.Continuations
	w, src := r.lines.monitor.Window()
	r.emit(event.Event{Kind: event.Restart, Continuation: n, Action: dec.Kind.String(), Reason: dec.Reason,
		Occupancy: r.lines.monitor.Occupancy(), Window: w, CheckpointBytes: len(checkpoint)})
	r.log.Info().Int("continuation", n).Str("kind", dec.Kind.String()).Int64("occupancy", r.lines.monitor.Occupancy()).
		Int64("window", w).Str("window_source", src).Int("checkpoint_bytes", len(checkpoint)).Str("reason", dec.Reason).
		Msg("context restart: continuing in a new session")
}

// finish reports a success: the last result's text goes in the report,
// with where its line is, so that a text longer than the decoder keeps can
// be copied whole from the transcript.
func (r *runner) finish(res *attemptResult, rep *event.Report, started time.Time) {
	last := res.log.Result
	rep.Result, rep.ResultCut = last.Result, last.ResultTruncated
	rep.ResultLine = stream.LineRef{Path: res.stdoutPath, Offset: last.Offset, Bytes: last.Bytes}
	r.log.Info().Int("attempts", rep.Attempts).Str("session", rep.SessionID).Float64("cost_usd", usd.Round(rep.CostUSD)).
		Stringer("took", time.Since(started).Round(time.Millisecond)).Int64("peak_rss_kb", PeakRSSKB()).Msg("run succeeded")
	if last.ResultTruncated {
		r.log.Info().Int64("line_bytes", last.Bytes).Int64("offset", last.Offset).Str("transcript", res.stdoutPath).
			Msg("the result text is longer than malarun keeps in memory; the whole of it is in the transcript")
	}
}
