package attempt

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/environ"
)

// The CLI's own limits on a streaming request (docs/design.md §F33): an
// event watchdog that abandons a stream with no event for 300 s (it cannot
// be set lower; 2.1.332 counts up to thirty of its pings as events), a
// byte watchdog (180 s without a byte), and the runtime's 5-minute idle
// limit on the connection. When one fires the CLI asks again, without
// streaming, for the whole reply, and waits for it as long again: a tool
// call whose input takes longer than that to write can never arrive, and
// the CLI prints nothing meanwhile (§F32). malarun follows the stream's
// phase and bounds each (§D30), so it turns those limits off for the CLI:
// its allowances, not the CLI's, decide when a silent stream is dead.

// CLIVar is one variable malarun sets for the CLI.
type CLIVar struct {
	Name, Value string
	// Doc is the value as the documentation gives it (Value, or where it
	// comes from); Why is what it changes.
	Doc, Why string
}

// CLIVars are the variables malarun sets for the CLI, for an attempt with
// limits lim, unless the environment it was given sets them already (the
// user's value wins; an empty one is unset).
//
// One turns a limit of the CLI's on rather than off: its limit on a
// sub-agent whose stream is silent (CLAUDE_ASYNC_AGENT_STALL_TIMEOUT_MS,
// both pinned CLIs, §F35). The CLI sees a sub-agent's stream, which it
// never prints, so it judges a sub-agent better than malarun can; malarun
// gives it subagent_timeout (600 s is what it takes with the stream
// watchdog off) and keeps its own, longer, allowance as the backstop.
func CLIVars(lim Limits) []CLIVar {
	stall := lim.subagentStall()
	return []CLIVar{
		{"CLAUDE_ENABLE_STREAM_WATCHDOG", "0", "`0`", "the CLI's event watchdog (300 s without an event, at the least) would abandon a healthy stream that malarun allows longer, such as a tool call's input"},
		{"CLAUDE_ENABLE_BYTE_WATCHDOG", "0", "`0`", "the CLI's byte watchdog (180 s without a byte) likewise; off, it also makes no heartbeat pings (which would keep a dead sub-agent's stream alive to the CLI)"},
		{"API_FORCE_IDLE_TIMEOUT", "0", "`0`", "the runtime's own 5-minute limit on a connection that sends nothing, which is on once the byte watchdog is off"},
		{"CLAUDE_ASYNC_AGENT_STALL_TIMEOUT_MS", strconv.FormatInt(stall.Milliseconds(), 10), "`subagent_timeout` in milliseconds (`90000`)",
			"the CLI's own limit on a sub-agent whose stream sends no event (600 s by default with the stream watchdog off): it sees the sub-agent's stream, which it never prints, and ends the sub-agent itself; its main agent goes on"},
	}
}

// CLIEnv is env with CLIVars added where env does not set them, and a
// warning for each value of the user's that lets the CLI give up on a
// silent stream sooner than malarun would: lim's longest streaming
// allowance (a tool call's input, as it grows over the run's attempts).
func CLIEnv(env []string, lim Limits) (out []string, warnings []string) {
	out = env
	for _, v := range CLIVars(lim) {
		// An empty value is unset: the CLI reads it as its default (on).
		if cur, _ := environ.Lookup(env, v.Name); strings.TrimSpace(cur) == "" {
			out = environ.With(out, v.Name, v.Value)
		}
	}
	longest := max(lim.Allowance(PhaseToolInput), lim.Allowance(PhaseThinking))
	if on, _ := switchOf(out, "CLAUDE_ENABLE_STREAM_WATCHDOG"); on {
		idle := max(msOf(env, "CLAUDE_STREAM_IDLE_TIMEOUT_MS"), 300*time.Second)
		if idle < longest {
			warnings = append(warnings, fmt.Sprintf("CLAUDE_ENABLE_STREAM_WATCHDOG is on in claude's environment: claude abandons a stream that sends no event for %s and asks again for the whole reply, so a tool call's input that takes longer to write never arrives (malarun allows %s); unset it to leave liveness to malarun", idle, longest))
		}
	}
	if on, _ := switchOf(out, "CLAUDE_ENABLE_BYTE_WATCHDOG"); on {
		idle := msOf(env, "CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS")
		if idle <= 0 {
			idle = 180 * time.Second
		}
		if idle < longest {
			warnings = append(warnings, fmt.Sprintf("CLAUDE_ENABLE_BYTE_WATCHDOG is on in claude's environment: claude abandons a stream that sends no byte for %s (malarun allows %s of silence); unset it to leave liveness to malarun", idle, longest))
		}
	}
	if on, _ := switchOf(out, "API_FORCE_IDLE_TIMEOUT"); on && 5*time.Minute < longest {
		warnings = append(warnings, fmt.Sprintf("API_FORCE_IDLE_TIMEOUT is on in claude's environment: claude's connection gives up after 5m0s without a byte (malarun allows %s of silence); unset it to leave liveness to malarun", longest))
	}
	return out, warnings
}

// switchOf reads one of the CLI's on/off variables as the CLI does: "1",
// "true", "yes", "on" are on, "0", "false", "no", "off" off, anything else
// the default, which for these is on. set reports whether env has it.
func switchOf(env []string, name string) (on, set bool) {
	v, set := environ.Lookup(env, name)
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "0", "false", "no", "off":
		return false, set
	}
	return set, set
}

// msOf reads a millisecond count as the CLI does (0: unset or not a number).
func msOf(env []string, name string) time.Duration {
	v, _ := environ.Lookup(env, name)
	n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || n <= 0 || n > float64(1<<40) {
		return 0
	}
	return time.Duration(n * float64(time.Millisecond))
}
