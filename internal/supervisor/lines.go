package supervisor

import (
	"fmt"
	"time"

	"github.com/malarun/malarun/internal/ctxpressure"
	"github.com/malarun/malarun/internal/event"

	"github.com/rs/zerolog"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/usd"
)

// lineProgress is what the run's lines have told so far, for the logs and
// the observer: the context's occupancy (the monitor), the phase and the
// background tasks the last progress event named, and what was warned
// about once per run.
type lineProgress struct {
	monitor *ctxpressure.Monitor
	// emit is the runner's (runner.emit); observed: there is an observer,
	// the only reader of progress events.
	emit     func(event.Event)
	observed bool

	// doing and doingLabel are the phase the last progress event told,
	// and its words.
	doing      attempt.Doing
	doingLabel string
	// taskLabels are the background tasks the last progress event named,
	// made at tasksVersion (attempt.State.RunningVersion).
	taskLabels   []string
	tasksVersion int

	// warned is what the run's lines were warned about, once each.
	warned
}

// warned is what a run's lines are warned about once per run.
type warned struct {
	versionWarned bool   // the CLI is older than the oldest supported
	cliVersion    string // the CLI's version, from its last init line ("": none yet)
	// unfamiliarWarned are the kinds of line malarun did not know, said
	// once each (stream.Unfamiliar).
	unfamiliarWarned map[string]bool
	mcpWarned        map[stream.MCPServer]bool // MCP servers not connected
}

// What a line of the stream shows: its log record, the events it carries
// and the context's occupancy after it.

// observeContext feeds the context monitor and reports whether occupancy
// is over the threshold.
func (p *lineProgress) observeContext(log zerolog.Logger, ev stream.Event) bool {
	o := p.monitor.Observe(ev)
	if o.MissingUsage {
		log.Warn().Msg("an assistant message came without usage: context occupancy is not tracked for it")
	}
	if o.Compacted {
		log.Info().Msg("claude compacted the conversation; occupancy is measured again from the next message")
	}
	if o.Crossed {
		w, src := p.monitor.Window()
		log.Debug().Int64("occupancy", p.monitor.Occupancy()).Int64("window", w).Str("window_source", src).Msg("context over the threshold")
	}
	return o.Crossed
}

// windowTokens is the context window's size in tokens, as the monitor
// knows it.
func (p *lineProgress) windowTokens() int64 {
	w, _ := p.monitor.Window()
	return w
}

// lineNote is what the driver knows of a line beside the line itself.
type lineNote struct {
	// evented: emitLine reports the line's events (not while the tree is
	// stopped).
	evented bool
	// stopsHere: the attempt machine stops the attempt on this very line.
	stopsHere bool
}

// emitLine tells the observer what a line changed: always the live
// numbers, and tools starting and finishing, and the CLI's own retries;
// runCost is the run's cost before the attempt.
func (p *lineProgress) emitLine(res *attemptResult, m *attempt.State, ev stream.Event, note lineNote, runCost float64) {
	base := event.Event{Attempt: res.spec.N, Session: res.log.SessionID}
	for _, tu := range ev.ToolUses {
		e := base
		e.Kind, e.Tool, e.ToolInput = event.ToolStarted, tu.Name, tu.Input
		p.emit(e)
		if res.openCalls == nil {
			res.openCalls = map[string]string{}
		}
		res.openCalls[tu.ID] = tu.Name
	}
	for _, id := range ev.ToolResults {
		if name, ok := res.openCalls[id]; ok {
			delete(res.openCalls, id)
			e := base
			e.Kind, e.Tool = event.ToolFinished, name
			p.emit(e)
		}
	}
	if ev.Type == "system" && ev.HookID != "" {
		emitHook(p.emit, base, ev)
	}
	if ev.Type == "system" && ev.Subtype == "api_retry" && !note.stopsHere {
		e := base
		e.Kind, e.Reason = event.APIRetry, retryReason(ev)
		// At most stream.maxRetryDelayMS (a year): the product fits a Duration.
		e.Backoff = time.Duration(ev.RetryDelayMS * float64(time.Millisecond))
		if ev.NoResponse {
			e.NoResponse = &event.NoResponse{Retries: 1, Waited: time.Duration(ev.NoResponseWaitedMS * float64(time.Millisecond))}
		}
		p.emit(e)
	}
	if !p.observed {
		return // progress is for observers only: the timeline has the line's time
	}
	e := base
	e.Kind, e.Messages, e.ToolsRunning, e.IdleDeadline = event.Progress, res.log.Assistants, m.ToolsRunning(), m.Wake()
	doing, allowed, since := m.Doing()
	if doing != p.doing {
		// Said in words once per phase, not once per line.
		p.doing, p.doingLabel = doing, doing.Label()
	}
	e.Phase, e.Doing, e.PhaseSince, e.Limit = doing.Phase.String(), p.doingLabel, since, allowed
	if v := m.RunningVersion(); v != p.tasksVersion || p.taskLabels == nil {
		// Made again only when the tasks change: a line comes every few
		// milliseconds, and there can be attempt.maxTasks of them.
		p.tasksVersion, p.taskLabels = v, attempt.TaskLabels(m.Running())
	}
	e.Tasks = p.taskLabels
	e.Occupancy, e.Window = p.monitor.Occupancy(), p.windowTokens()
	e.CostUSD = runCost + res.log.CostUSD
	p.emit(e)
}

// retryReason is an api_retry in words; a request never answered says so.
func retryReason(ev stream.Event) string {
	if ev.NoResponse {
		return fmt.Sprintf("no response from the API within %s (retry %d of %d)",
			time.Duration(ev.NoResponseWaitedMS*float64(time.Millisecond)).Round(time.Millisecond), ev.Attempt, ev.MaxRetries)
	}
	return fmt.Sprintf("API status %d %s (retry %d of %d)", ev.ErrorStatus, ev.Error, ev.Attempt, ev.MaxRetries)
}

// emitHook reports a hook's start and end (§F27); hook_progress lines are
// the hook's output so far, for the transcript only.
func emitHook(emit func(event.Event), base event.Event, ev stream.Event) {
	e := base
	e.Hook = ev.HookName
	switch ev.Subtype {
	case "hook_started":
		e.Kind = event.HookStarted
	case "hook_response":
		e.Kind, e.Outcome = event.HookFinished, ev.HookOutcome
		if ev.HasHookExitCode {
			code := ev.HookExitCode
			e.HookExitCode = &code
		}
	default:
		return
	}
	emit(e)
}

// hookFailed reports whether a hook_response says the hook did not succeed.
func hookFailed(ev stream.Event) bool {
	return ev.Subtype == "hook_response" && (ev.HookOutcome != "success" || ev.HasHookExitCode && ev.HookExitCode != 0)
}

// logLine logs the lines that matter at info, the rest at debug; note
// says whether emitLine reports the line's events, and whether the
// attempt stops on it.
func (p *lineProgress) logLine(log zerolog.Logger, ev stream.Event, note lineNote) {
	evented := note.evented
	if what := stream.Unfamiliar(ev); what != "" {
		p.warnUnfamiliar(log, what)
	}
	switch {
	case ev.Kind != stream.KindJSON:
		log.Warn().Int64("line", ev.Line).Int64("bytes", ev.Bytes).Str("kind", ev.Kind.String()).Msg("undecodable line in the stream")
	case ev.Type == "system" && ev.Subtype == "init":
		p.logInit(log, ev)
	case attempt.RefusedCredentials(&ev):
		// Not a retry: malarun stops claude on it (attempt_ended says why).
		l := log.Warn().Int("status", ev.ErrorStatus).Str("error", ev.Error).Int("request", ev.Attempt)
		if evented && note.stopsHere {
			l = l.Str(event.AlsoField, string(event.AttemptEnded))
		}
		l.Msg("the API refused claude's credentials")
	case ev.Type == "system" && ev.Subtype == "api_retry" && note.stopsHere:
		// The retry it announces never happens: logStop says why.
		log.Info().Int("retry", ev.Attempt).Int("status", ev.ErrorStatus).Str("error", ev.Error).Float64("delay_ms", ev.RetryDelayMS).
			Msg("claude announced a retry, which malarun stops it before")
	case ev.Type == "system" && ev.Subtype == "api_retry":
		l := log.Warn().Int("retry", ev.Attempt).Int("max_retries", ev.MaxRetries).Int("status", ev.ErrorStatus).Str("error", ev.Error).Float64("delay_ms", ev.RetryDelayMS)
		if ev.NoResponse {
			l = l.Bool("no_response", true).Float64("waited_ms", ev.NoResponseWaitedMS)
		}
		if evented {
			l = l.Str(event.AlsoField, string(event.APIRetry))
		}
		l.Msg("claude is retrying an API request")
	case ev.Type == "system" && hookFailed(ev):
		// Reported, not acted on: the CLI decides what a failed hook means
		// (a blocking Stop hook sends the model back to work).
		l := log.Warn().Str("hook", ev.HookName).Str("hook_event", ev.HookEvent).Str("outcome", ev.HookOutcome).Int("exit_code", ev.HookExitCode)
		if evented {
			l = l.Str(event.AlsoField, string(event.HookFinished))
		}
		l.Msg("a hook of claude's did not succeed")
	case ev.Type == "system" && (ev.Subtype == "hook_started" || ev.Subtype == "hook_response"):
		log.Debug().Str("hook", ev.HookName).Str("hook_event", ev.HookEvent).Str("subtype", ev.Subtype).Str("outcome", ev.HookOutcome).Msg("hook")
	case ev.Type == "rate_limit_event":
		// allowed_warning only says how much of a window is used: logged, not acted on.
		log.Info().Str("status", ev.RateLimitStatus).Str("limit_type", ev.RateLimitType).Int64("resets_at", ev.ResetsAt).
			Str("error_code", ev.RateLimitErrorCode).Msg("claude reported its rate limit status")
	case ev.Type == "assistant":
		for _, tu := range ev.ToolUses {
			log.Info().Str("tool", tu.Name).Str("id", tu.ID).Msg("tool call")
		}
	case ev.Type == "result":
		l := log.Info().Str("subtype", ev.Subtype).Bool("is_error", ev.IsError).Float64("cost_usd", usd.Round(ev.TotalCostUSD)).Str("terminal_reason", ev.TerminalReason).
			Str("origin", ev.OriginKind)
		if ev.HasNumTurns {
			l = l.Int("num_turns", ev.NumTurns)
		}
		if ev.HasResultIndex {
			l = l.Int("result_index", ev.ResultIndex)
		}
		if ev.QueuedTurnCount > 0 {
			l = l.Int("queued_turn_count", ev.QueuedTurnCount)
		}
		if ev.ResumeReason != "" {
			l = l.Str("resume_reason", ev.ResumeReason)
		}
		if ev.StartupFailureReason != "" {
			l = l.Str("startup_failure_reason", ev.StartupFailureReason)
		}
		l.Msg("result")
		if ev.IsError || ev.Subtype != "success" {
			if unknown := attempt.UnknownResult(&ev); unknown != "" {
				log.Warn().Str("value", unknown).Msg("claude printed an error result malarun does not know; treating it as an error that retrying cannot fix (exit 1)")
			}
		}
	default:
		log.Debug().Str("type", ev.Type).Str("subtype", ev.Subtype).Msg("line")
	}
}

// logInit logs claude's start, and once per run a version outside the
// tested range.
func (p *lineProgress) logInit(log zerolog.Logger, ev stream.Event) {
	log.Info().Str("model", ev.Model).Str("claude_session", ev.SessionID).Str("claude_code_version", ev.ClaudeCodeVersion).Msg("claude started")
	for _, s := range attempt.MCPDown(ev.MCPServers) {
		if p.mcpWarned[s] || len(p.mcpWarned) >= stream.MaxListItems {
			continue // once per server and status in a run: every attempt's init lists them again
		}
		p.mcpWarned[s] = true
		log.Warn().Str("mcp_server", s.Name).Str("status", s.Status).Msg("an MCP server claude was given is not connected: the agent works without its tools")
	}
	if ev.ClaudeCodeVersion != "" {
		p.cliVersion = ev.ClaudeCodeVersion
	}
	if tooOld(ev.ClaudeCodeVersion) && !p.versionWarned {
		p.versionWarned = true
		// The version is the CLI's text: a field, never in the message
		// (messages are constant; see cmd/malarun/logging.go).
		log.Warn().Str("claude_code_version", ev.ClaudeCodeVersion).Str("oldest_supported", OldestSupportedCLI).
			Msg("claude is older than the oldest version malarun supports: upgrade it")
	}
}

// warnUnfamiliar says, once per kind in a run, that claude printed a kind
// of line malarun does not know: the evidence that a CLI newer than the
// newest tested brought something new (a version alone is no evidence).
func (p *lineProgress) warnUnfamiliar(log zerolog.Logger, what string) {
	if p.unfamiliarWarned[what] || len(p.unfamiliarWarned) >= stream.MaxListItems {
		return
	}
	p.unfamiliarWarned[what] = true
	log.Warn().Str("line", what).Str("claude_code_version", p.cliVersion).Bool("newer_than_tested", newerThanTested(p.cliVersion)).
		Msg("claude printed a kind of line malarun does not know: it is ignored")
}
