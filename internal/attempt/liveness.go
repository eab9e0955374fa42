package attempt

import (
	"slices"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/stream"
)

// liveness decides when a model at work counts as hung. Every line that is
// progress pushes the deadline out by the allowance of the phase the
// stream is in after it (docs/design.md §D30): the model thinking, writing
// text or a tool call's input, a request waiting for its reply, a tool or
// hook running (the CLI prints nothing until it ends: §F15), the CLI
// waiting to retry (the wait an api_retry line announced, added). A line
// that only says the CLI waits (a ping) moves nothing.
type liveness struct {
	lim         Limits
	outstanding []stream.ToolUse // tool calls without their result, in call order
	// hooks are the hooks started and not ended, in start order: a hook is
	// work like a tool call, silent until it ends (§F27).
	hooks []Hook
	// workSince is when the tools and hooks running now began to run;
	// working names them ("Bash, the Stop hook"), made again only when
	// they change (a line comes every few milliseconds).
	workSince time.Time
	working   string
	stream    streamPhase
	// retryWait is the wait the last api_retry line announced.
	retryWait time.Duration
	// due is when the silence since the last line of progress becomes a
	// hang; deadline is due, or later while the reader catches up with
	// bytes written since it last looked (unread).
	due, deadline time.Time
	// last is when the last line of progress came (the attempt's start
	// before any).
	last time.Time
	// anyLine: a line other than a hook's has come (before it,
	// FirstLineWait applies: SessionStart hooks print before the init line,
	// and the MCP servers are connected after them, §F27, §F28).
	anyLine bool
	// seen is how far into the stream the CLI's writing is known to have
	// come: the end of the last line read, or the size found at a wake;
	// read is the end of the last line read, and catchUpTo the size a
	// catch-up waits for the reader to reach.
	seen, read, catchUpTo int64
	// catchUps counts the catch-ups since the last line of progress, and
	// consumedAt is how far the reader had got at the last one: past the
	// first, a catch-up needs a reader that is behind and moving (catchUp).
	catchUps   int
	consumedAt int64
}

func newLiveness(lim Limits, now time.Time) liveness {
	l := liveness{lim: lim, last: now, stream: streamPhase{since: now}}
	_, allowed := l.doing()
	l.due = now.Add(allowed)
	l.deadline = l.due
	return l
}

// ReadCatchUp is how long a hang waits, once the stream is found to hold
// bytes written since malarun last looked, for the reader to catch up: the
// lines then push the deadline out themselves. A malarun stopped (Ctrl-Z,
// SIGSTOP, a paused VM) wakes with its timer late and the CLI's lines
// unread; without this the healthy tree would be killed (issue 31).
const ReadCatchUp = time.Second

// MaxCatchUp bounds how far catch-ups can carry a hang past its deadline:
// a reader that falls behind a writer for longer is reading a flood, not a
// backlog (a paused malarun's backlog of a gigabyte is read in seconds).
const MaxCatchUp = 30 * time.Second

// catchUp reports whether a hang due now waits for the reader instead, and
// if so moves the deadline ReadCatchUp from now. written is what the CLI
// has written; consumed what the reader has taken of it (0: unknown).
//
// The first catch-up after a line of progress needs only growth since
// malarun last looked (written > seen): lines may be on their way to the
// machine. Later ones need a reader that is behind (consumed < written)
// and has moved since the last catch-up, within MaxCatchUp of the
// deadline. A line the CLI keeps writing without ending it, or pings each
// ending as the next begins, are read as they come: the reader is never
// behind them, so they are a hang one catch-up later, however they grow
// (docs/design.md §D34; a real CLI writes a line at once, even a 20 MB one).
func (l *liveness) catchUp(written, consumed int64, now time.Time) bool {
	grew := written > l.seen
	l.seen = max(l.seen, written)
	behind := consumed > 0 && consumed < written && consumed > l.consumedAt && now.Before(l.due.Add(MaxCatchUp))
	if !(l.catchUps == 0 && grew || behind) {
		return false
	}
	l.catchUps++
	l.consumedAt, l.catchUpTo = consumed, written
	l.deadline = now.Add(ReadCatchUp)
	return true
}

// observe updates the phase and the deadline for a line that arrived at now.
func (l *liveness) observe(ev *stream.Event, now time.Time) {
	l.read = max(l.read, ev.Offset+ev.Bytes+1)
	l.seen = max(l.seen, l.read)
	if !progress(ev) {
		if l.catchUpTo > 0 && l.read >= l.catchUpTo {
			// What was written while malarun looked away was only this
			// (pings, junk): the silence was not broken, and the hang is due.
			l.deadline, l.catchUpTo = l.due, 0
		}
		return
	}
	idle := len(l.outstanding) == 0 && len(l.hooks) == 0
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
	if hookLine || len(ev.ToolUses) > 0 || len(ev.ToolResults) > 0 {
		l.working = strings.Join(l.toolsRunning(), ", ")
		if idle && (len(l.outstanding) > 0 || len(l.hooks) > 0) {
			l.workSince = now
		}
	}
	if !hookLine {
		l.anyLine = true
		l.stream.observe(ev, now)
	}
	if ev.Type == "system" && ev.Subtype == "api_retry" {
		l.retryWait = retryWait(ev)
	}
	_, allowed := l.doing()
	l.due = now.Add(allowed)
	l.deadline, l.catchUpTo, l.catchUps = l.due, 0, 0
	l.last = now
}

// observeHook keeps the running hooks: a hook_started adds one (at most
// stream.MaxListItems: a stream that never ends its hooks cannot grow
// this), its hook_response removes it. hook_progress changes nothing but
// the deadline, as any line does.
func (l *liveness) observeHook(ev *stream.Event) {
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

// doing is what decides the silence allowed now, and that allowance: the
// tools and hooks running (a sub-agent's stream runs inside one), else the
// stream's phase.
func (l *liveness) doing() (Doing, time.Duration) {
	d := Doing{Phase: l.stream.phase, What: l.stream.what}
	if !l.anyLine {
		d = Doing{Phase: PhaseStarting}
	}
	allowed := l.lim.allowance(d.Phase, l.retryWait)
	if len(l.outstanding) > 0 || len(l.hooks) > 0 {
		// tool_timeout replaces the allowance, unless the model is writing
		// beside the running tools and may be silent longer there.
		if work := l.lim.allowance(PhaseTool, 0); !d.Phase.writing() || work >= allowed {
			return Doing{Phase: PhaseTool, What: l.working}, work
		}
	}
	return d, allowed
}

// limit is the silence allowed now.
func (l *liveness) limit() time.Duration {
	_, allowed := l.doing()
	return allowed
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
