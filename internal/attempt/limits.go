package attempt

import (
	"fmt"
	"math"
	"time"

	"github.com/malarun/malarun/internal/configkey"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/usagelimit"
)

// Limits are an attempt's timers, from the configuration.
type Limits struct {
	// Idle and Tool bound the silence of a model at work: Idle while it
	// waits for a reply or between a reply's parts, Tool while a tool call
	// or hook runs (idle_timeout, tool_timeout). Text, Thinking and
	// ToolInput bound it while the model writes a text block, thinks, or
	// writes a tool call's input (text_timeout, thinking_timeout,
	// tool_input_timeout; zero: Idle). docs/design.md §D30.
	Idle, Tool, Text, Thinking, ToolInput time.Duration
	// FirstByte bounds the silence between a request and the first event
	// of its reply, for a request of up to firstByteTokens tokens, when it
	// is shorter than Idle; a larger request is allowed as much more as it
	// is larger (first_byte_timeout; zero: Idle). Seen only with
	// PartialMessages. docs/design.md §D33.
	FirstByte time.Duration
	// Subagent bounds the silence of a sub-agent's stream
	// (subagent_timeout): the CLI, which sees that stream, ends a sub-agent
	// silent that long itself (CLIVars). malarun, which sees only the
	// sub-agent's whole messages, allows ToolInput more (PhaseSubagent):
	// the backstop where the CLI does not act. §D33.
	Subagent time.Duration
	// PartialMessages: the CLI prints the reply as it streams
	// (--include-partial-messages), so the main agent's phases are seen.
	PartialMessages bool
	// Context is how many tokens the attempt's first request carries, as
	// far as the run knows (the session's last usage, or the prompt's
	// size): the first byte's allowance grows with it. Window is the
	// model's context window (0: unknown, maxFirstByteTokens): no request
	// carries more, whatever a usage says.
	Context, Window int64
	// Room doubles a phase's allowance: earlier attempts of the run were
	// killed in that phase (§D30).
	Room Room
	// Background bounds the wait, after a result, for background tasks the
	// result left running (background_timeout; 0: no bound but Deadline).
	Background time.Duration
	// Linger is how long the CLI may stay alive after its final result with
	// no background task running (result_exit_timeout).
	Linger time.Duration
	// Deadline is the session deadline (session_timeout); zero: none.
	Deadline time.Time
	// Checkpoint: the attempt asks for a checkpoint, so context pressure is
	// not acted on (the request itself adds to the context).
	Checkpoint bool
	// LimitWaitLeft is what is left of limit_wait when the attempt starts.
	// An api_retry for a 429 whose delay exceeds Idle is the CLI waiting
	// out a usage limit itself: it is spent from LimitWaitLeft (CLIWaited;
	// a re-announced sleep counts once), and one that does not fit stops
	// the attempt with UsageLimit. Delays within Idle are the CLI's
	// ordinary backoff for a passing rate limit: left to it and free, even
	// with limit_wait 0.
	LimitWaitLeft time.Duration
	// UnreachableWindow: a probe's certain finding stops the attempt only
	// once the address has stayed so, probe after probe (ProbeEvery), for
	// this long (0: at once).
	UnreachableWindow time.Duration
	// Talked: an earlier attempt of the run talked to the API (§D17), so a
	// connection failure now is the network going away: left to the CLI's
	// retries and malarun's, never a configuration error.
	Talked bool
}

// Room is how many times each phase's allowance is doubled (at most
// MaxRoom), by phase.
type Room [phaseCount]int

// Grow gives phase p one more doubling, if it grows (Phase.Grows) and has
// not reached MaxRoom; it reports whether it did.
func (r *Room) Grow(p Phase) bool {
	if !p.Grows() || r[p] >= MaxRoom {
		return false
	}
	r[p]++
	return true
}

// MaxRoom bounds the doublings of a phase's allowance over a run: a
// healthy silence up to four times the allowance finishes by the third
// attempt in that phase, and a dead stream costs at most four allowances.
const MaxRoom = 2

// allowance is the silence allowed in phase p, with the room the run gave
// it; retryWait is the wait the CLI announced for PhaseRetry.
func (lim Limits) allowance(p Phase, retryWait time.Duration) time.Duration {
	or := func(d time.Duration) time.Duration {
		if d <= 0 {
			return lim.Idle
		}
		return d
	}
	var d time.Duration
	switch p {
	case PhaseStarting:
		return max(lim.Idle, firstLineWait)
	case PhaseTool:
		return lim.Tool
	case PhaseRetry:
		return lim.Idle + retryWait
	case PhaseText:
		d = or(lim.Text)
	case PhaseThinking:
		d = or(lim.Thinking)
	case PhaseToolInput:
		d = or(lim.ToolInput)
	case PhaseSubagent:
		d = or(lim.ToolInput) + or(lim.Subagent)
	case PhaseBlock:
		d = max(or(lim.Text), or(lim.Thinking), or(lim.ToolInput))
	default:
		d = lim.Idle
	}
	return doubled(d, lim.Room[p])
}

// subagentStall is the silence of a sub-agent's stream the CLI is given
// (CLAUDE_ASYNC_AGENT_STALL_TIMEOUT_MS): subagent_timeout.
func (lim Limits) subagentStall() time.Duration {
	if lim.Subagent <= 0 {
		return lim.Idle
	}
	return lim.Subagent
}

// firstByteTokens is the size of request first_byte_timeout is set for:
// the model reads a larger context before its first token, so each such
// many tokens more allow as much again (200,000 tokens: twice).
const firstByteTokens = 100_000

// firstByte is the silence allowed for the first event of the reply to a
// request of about tokens tokens, with the room the run gave the phase.
func (lim Limits) firstByte(tokens int64) time.Duration {
	base, _ := lim.firstByteBase()
	return doubled(lim.grown(base, tokens), lim.Room[PhaseWaiting])
}

// maxFirstByteTokens bounds the size a request is taken to have when the
// window is not known: the largest context a pinned CLI's models take.
const maxFirstByteTokens = 1_000_000

// grown is d for a request of up to firstByteTokens, as much more as a
// request of tokens (at most the window) is larger.
func (lim Limits) grown(d time.Duration, tokens int64) time.Duration {
	window := lim.Window
	if window <= 0 {
		window = maxFirstByteTokens
	}
	tokens = min(tokens, window)
	if tokens <= firstByteTokens {
		return d
	}
	return time.Duration(min(float64(d)*float64(tokens)/firstByteTokens, float64(math.MaxInt64/8)))
}

// compacting is the silence allowed while the CLI writes its summary of a
// conversation of tokens: idle_timeout for the summary, and the first
// byte's allowance for reading the conversation.
func (lim Limits) compacting(tokens int64) time.Duration {
	base, _ := lim.firstByteBase()
	return doubled(lim.Idle+lim.grown(base, tokens), lim.Room[PhaseCompacting])
}

// firstByteBase is the first byte's allowance for a request of up to
// firstByteTokens: first_byte_timeout, or idle_timeout where that is
// shorter (a user who shortened idle_timeout for every wait gets it here
// too), and the key it comes from.
func (lim Limits) firstByteBase() (time.Duration, string) {
	if lim.FirstByte > 0 && lim.FirstByte < lim.Idle {
		return lim.FirstByte, configkey.FirstByteTimeout
	}
	return lim.Idle, configkey.IdleTimeout
}

// Allowance is the silence allowed in phase p (for messages and the
// status line; a retry's announced wait not included).
func (lim Limits) Allowance(p Phase) time.Duration { return lim.allowance(p, 0) }

// whose names the setting behind phase p's allowance, for messages:
// "text_timeout", "thinking_timeout ×2: earlier attempts were killed there".
func (lim Limits) whose(d Doing) string {
	var key string
	p := d.Phase
	if d.FirstByte && (p == PhaseWaiting || p == PhaseRetry) {
		_, key = lim.firstByteBase()
		if d.Tokens > firstByteTokens {
			key += ", grown for a request of about " + approxTokens(d.Tokens)
		}
		if p == PhaseRetry {
			return key + ", after the wait the CLI announced"
		}
	}
	switch p {
	case PhaseStarting:
		return configkey.IdleTimeout + ", at least the CLI's MCP start-up wait"
	case PhaseTool:
		return configkey.ToolTimeout
	case PhaseRetry:
		return configkey.IdleTimeout + " after the wait the CLI announced"
	case PhaseSubagent:
		key = configkey.ToolInputTimeout + " and " + configkey.SubagentTimeout + ": claude itself ends a sub-agent whose stream is silent for " + configkey.SubagentTimeout
	case PhaseCompacting:
		_, fb := lim.firstByteBase()
		key = configkey.IdleTimeout + " and " + fb + " for a conversation of about " + approxTokens(d.Tokens)
	case PhaseText:
		key = configkey.TextTimeout
	case PhaseThinking:
		key = configkey.ThinkingTimeout
	case PhaseToolInput:
		key = configkey.ToolInputTimeout
	case PhaseBlock:
		key = "the longest of " + configkey.TextTimeout + ", " + configkey.ThinkingTimeout + " and " + configkey.ToolInputTimeout
	default:
		if key == "" {
			key = configkey.IdleTimeout
		}
	}
	if n := min(max(lim.Room[p], 0), MaxRoom); n > 0 {
		key += fmt.Sprintf(" ×%d: an earlier attempt of the run was killed there", 1<<n)
	}
	return key
}

// approxTokens says a token count in round figures: "12k tokens".
func approxTokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM tokens", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%dk tokens", (n+500)/1000)
	}
	return fmt.Sprintf("%d tokens", n)
}

// maxRetryWait bounds the wait an api_retry line can announce for a status
// that is not a usage limit (docs/design.md §D34): the CLI's own backoff
// grows from half a second to about half a minute (§F25), so a longer
// announcement is a CLI that is wrong (or hostile), and the retry phase
// allows at most this, then idle_timeout. A 429's wait is a usage limit,
// bounded by limit_wait instead (usagelimit.CLIWaits).
const maxRetryWait = 5 * time.Minute

// retryWait is the wait an api_retry line announces, as the retry phase
// allows it: a 429's as announced (limit_wait judges it), any other's at
// most maxRetryWait.
func retryWait(ev *stream.Event) time.Duration {
	d := usagelimit.Delay(ev.RetryDelayMS)
	if ev.ErrorStatus != 429 {
		d = min(d, maxRetryWait)
	}
	return d
}

// doubled is d doubled n times (n within 0..MaxRoom), saturating far
// beyond any allowance a configuration can hold.
func doubled(d time.Duration, n int) time.Duration {
	for range min(max(n, 0), MaxRoom) {
		if d > math.MaxInt64/2 {
			return math.MaxInt64
		}
		d *= 2
	}
	return d
}
