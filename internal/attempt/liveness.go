package attempt

import (
	"slices"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/usagelimit"
)

// liveness decides when a model at work counts as hung. Every line pushes
// the deadline out. While a tool call is outstanding the CLI prints nothing
// until the tool ends (docs/design.md §F15), so the longer tool limit
// applies; an api_retry line announces a wait of its own, which is added.
type liveness struct {
	idle, tool  time.Duration
	outstanding []stream.ToolUse // tool calls without their result, in call order
	// hooks are the hooks started and not ended, in start order: a hook is
	// work like a tool call, silent until it ends (§F27).
	hooks    []Hook
	deadline time.Time
	// last is when the last line came (the attempt's start before any).
	last time.Time
	// anyLine: a line other than a hook's has come (before it,
	// FirstLineWait applies: SessionStart hooks print before the init line,
	// and the MCP servers are connected after them, §F27, §F28).
	anyLine bool
	// seen is how far into the stream the CLI's writing is known to have
	// come: the end of the last line read, or the size found at a wake.
	seen int64
}

// ReadCatchUp is how long a hang waits, once the stream is found to hold
// bytes written since malarun last looked, for the reader to catch up: the
// lines then push the deadline out themselves. A malarun stopped (Ctrl-Z,
// SIGSTOP, a paused VM) wakes with its timer late and the CLI's lines
// unread; without this the healthy tree would be killed (issue 31).
const ReadCatchUp = time.Second

// unread reports whether the stream has grown since malarun last looked
// (written > seen) and, if so, moves the deadline ReadCatchUp from now.
// Growth, not unread bytes, is what counts: a CLI that hung halfway
// through a line leaves unread bytes forever, and is a hang one catch-up
// later.
func (l *liveness) unread(written int64, now time.Time) bool {
	if written <= l.seen {
		return false
	}
	l.seen = written
	l.deadline = now.Add(ReadCatchUp)
	return true
}

// observe updates the deadline for a line that arrived at now.
func (l *liveness) observe(ev stream.Event, now time.Time) {
	l.outstanding = append(l.outstanding, ev.ToolUses...)
	for _, id := range ev.ToolResults {
		for i, tu := range l.outstanding {
			if tu.ID == id {
				l.outstanding = append(l.outstanding[:i], l.outstanding[i+1:]...)
				break
			}
		}
	}
	hookLine := ev.Type == "system" && strings.HasPrefix(ev.Subtype, "hook_")
	if hookLine {
		l.observeHook(ev)
	}
	l.anyLine = l.anyLine || !hookLine
	l.deadline = now.Add(l.limit())
	l.last = now
	l.seen = max(l.seen, ev.Offset+ev.Bytes+1)
	if ev.Type == "system" && ev.Subtype == "api_retry" {
		l.deadline = l.deadline.Add(usagelimit.Delay(ev.RetryDelayMS))
	}
}

// observeHook keeps the running hooks: a hook_started adds one (at most
// stream.MaxListItems: a stream that never ends its hooks cannot grow
// this), its hook_response removes it. hook_progress changes nothing but
// the deadline, as any line does.
func (l *liveness) observeHook(ev stream.Event) {
	if ev.HookID == "" {
		return
	}
	i := slices.IndexFunc(l.hooks, func(h Hook) bool { return h.ID == ev.HookID })
	switch {
	case ev.Subtype == "hook_started" && i < 0 && len(l.hooks) < stream.MaxListItems:
		l.hooks = append(l.hooks, Hook{ID: ev.HookID, Name: ev.HookName, Event: ev.HookEvent})
	case ev.Subtype == "hook_response" && i >= 0:
		l.hooks = slices.Delete(l.hooks, i, i+1)
	}
}

// limit is the silence allowed now: tool_timeout while a tool call or a
// hook runs; before the first line at least FirstLineWait.
func (l *liveness) limit() time.Duration {
	switch {
	case len(l.outstanding) > 0 || len(l.hooks) > 0:
		return l.tool
	case !l.anyLine:
		return max(l.idle, FirstLineWait)
	}
	return l.idle
}

// FirstLineWait is the least silence allowed before the CLI's first line:
// it connects its MCP servers first, and 2.1.330 waits 30 s for one that
// does not answer before it prints anything (§F28). A shorter idle_timeout
// would kill every attempt of a run with such a server, each one waiting
// again.
const FirstLineWait = 60 * time.Second

// toolsRunning names the outstanding tool calls and the running hooks, for
// messages and the status line.
func (l *liveness) toolsRunning() []string {
	names := make([]string, 0, len(l.outstanding)+len(l.hooks))
	for _, tu := range l.outstanding {
		names = append(names, tu.Name)
	}
	for _, h := range l.hooks {
		names = append(names, h.Label())
	}
	return names
}

// Hook is a hook the CLI runs (system hook_started, §F27).
type Hook struct {
	ID    string
	Name  string // PreToolUse:Bash, Stop, ...
	Event string // PreToolUse, Stop, ...
}

// Label names the hook in messages: "the Stop hook".
func (h Hook) Label() string {
	name := h.Name
	if name == "" {
		name = h.Event
	}
	if name == "" {
		return "a hook"
	}
	return "the " + name + " hook"
}
