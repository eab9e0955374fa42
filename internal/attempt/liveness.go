package attempt

import (
	"slices"
	"strconv"
	"time"

	"github.com/malarun/malarun/internal/stream"
)

// liveness decides when the model, or one of its sub-agents, counts as
// hung (docs/design.md §D30, §D33). Each agent has its own phase and its
// own last line of progress; each line of progress pushes its agent's
// deadline out by the allowance of the phase it left the agent in: the
// model thinking, writing text or a tool call's input, a request waiting
// for its first byte (an allowance that grows with the context the request
// carries), a tool or hook running (the CLI prints nothing until it ends:
// §F15), the CLI waiting to retry (the wait an api_retry line announced,
// added), a sub-agent writing a message the CLI prints only whole. The
// hang deadline is the earliest of the agents'. A line that is not
// progress (a ping, junk) moves nothing (§D34).
type liveness struct {
	lim  Limits
	main agent
	// subs are the sub-agents running now, in start order, at most
	// maxSubagents; ended are those that ended (their late lines are not
	// life), at most stream.MaxListItems remembered.
	subs  []*agent
	ended []string
	// movedBeside are the sub-agents whose call returned while they ran
	// on: background tasks now, for the machine to take (tasks.start).
	movedBeside []stream.Task
	// seq numbers the tool calls of every agent, in call order.
	seq int
	// hooks are the hooks started and not ended, in start order: a hook is
	// the main agent's work, like a tool call, silent until it ends (§F27).
	hooks []Hook
	// hooksSince is when the hooks running now began.
	hooksSince time.Time
	// retryWait is the wait the last api_retry line announced.
	retryWait time.Duration
	// due is when the silence since an agent's last line of progress
	// becomes a hang (the earliest of the agents'), and dueAgent that agent
	// (nil: the main one); deadline is due, or later while the reader
	// catches up with bytes written since it last looked (catchUp).
	due, deadline time.Time
	dueAgent      *agent
	// anyLine: a line other than a hook's has come (before it,
	// firstLineWait applies: SessionStart hooks print before the init line,
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

// maxSubagents bounds the sub-agents followed at once: a stream that names
// more gets no say in liveness for the rest (their lines are not progress,
// and they cannot hang the run).
const maxSubagents = 64

func newLiveness(lim Limits, now time.Time) liveness {
	l := liveness{lim: lim}
	l.main = agent{last: now, stream: streamPhase{since: now}, seesStream: lim.PartialMessages, context: lim.Context}
	l.schedule()
	return l
}

// observe updates the agents' phases and the deadline for a line that
// arrived at now. taskRunning says whether the CLI's background task with
// an id runs (the machine's tasks): a line about a task or hook that is
// not running is no one's progress (§D34).
func (l *liveness) observe(ev *stream.Event, now time.Time, taskRunning func(string) bool) {
	l.read = max(l.read, ev.Offset+ev.Bytes+1)
	l.seen = max(l.seen, l.read)
	if !progress(ev) || !l.observeWork(ev, now, taskRunning) {
		if l.catchUpTo > 0 && l.read >= l.catchUpTo {
			// What was written while malarun looked away was only this
			// (pings, junk, lines of no agent's work): the silence was not
			// broken, and the hang is due.
			l.deadline, l.catchUpTo = l.due, 0
		}
		return
	}
	due, deadline := l.due, l.deadline
	l.schedule()
	switch {
	case l.due.After(due):
		// The silence was broken: catch-ups count afresh (catchUp).
		l.catchUpTo, l.catchUps = 0, 0
	case l.catchUpTo > 0 && deadline.After(l.due):
		// A line of work that moved no deadline later (another agent's)
		// leaves the catch-up under way as it was.
		l.deadline = deadline
	}
}

// observeWork folds in a line of progress as the agent whose work it is,
// and reports whether any agent's was: a line of a sub-agent malarun does
// not follow (a call it never saw made, past maxSubagents, ended) or about
// a task or hook that does not run is nobody's.
func (l *liveness) observeWork(ev *stream.Event, now time.Time, taskRunning func(string) bool) bool {
	switch a := l.subagentOf(ev, now); {
	case a != nil:
		l.observeSubagent(a, ev, now)
	case ev.ParentToolUseID != "" || !l.mainWork(ev, taskRunning):
		return false
	default:
		l.observeMain(ev, now)
	}
	l.endSubagents(ev, now)
	if ev.Type == "user" && ev.ParentToolUseID == "" {
		// The main agent asks again only once every call of its message
		// has its result, and no agent of its runs inside a call.
		l.main.requestOut = l.main.calls.live == 0 && l.main.waitsOn == 0
	}
	return true
}

// mainWork reports whether a top-level line is the main agent's work: a
// hook's line only while that hook runs (or as it starts), a task's only
// while the task runs (or as it starts); every other line of progress.
func (l *liveness) mainWork(ev *stream.Event, taskRunning func(string) bool) bool {
	if ev.Type != "system" {
		return true
	}
	switch ev.Subtype {
	case "hook_progress", "hook_response":
		return slices.ContainsFunc(l.hooks, func(h Hook) bool { return h.ID == ev.HookID })
	case "task_progress", "task_updated", "task_notification":
		return taskRunning != nil && taskRunning(ev.TaskID)
	}
	return true
}

// observeMain takes a line of the main agent (the top level).
func (l *liveness) observeMain(ev *stream.Event, now time.Time) {
	a := &l.main
	working := a.calls.live > 0 || len(l.hooks) > 0
	for _, tu := range ev.ToolUses {
		if sub := l.sub(tu.ID); sub != nil {
			sub.call = tu // its task was announced first
			continue
		}
		l.seq++
		if a.calls.live == 0 {
			a.workSince = now
		}
		a.calls.add(tu, l.seq)
		a.workingStale = true
	}
	for _, id := range ev.ToolResults {
		if a.calls.end(id) {
			a.workingStale = true
		}
	}
	hookLine := ev.Type == "system" && len(ev.Subtype) > 5 && ev.Subtype[:5] == "hook_"
	if hookLine {
		l.observeHook(ev)
		if !working && len(l.hooks) > 0 {
			l.hooksSince = now
		}
		if !working && a.calls.live > 0 {
			a.workSince = now
		}
	} else {
		l.anyLine = true
		a.stream.observe(ev, now)
		a.observeRequest(ev)
	}
	if ev.Type == "assistant" && ev.HasUsage && ev.Model != "<synthetic>" {
		a.context = ev.Usage.Occupancy()
	} else if ev.Type == "user" {
		a.context += ev.Bytes / 4 // the tool results go with the next request
	}
	if ev.Type == "system" && ev.Subtype == "api_retry" {
		l.retryWait = retryWait(ev)
	}
	a.last = now
}

// observeRequest follows whether the agent has a request out that no event
// of the reply has answered yet (the first byte's phase).
func (a *agent) observeRequest(ev *stream.Event) {
	switch ev.Type {
	case "system":
		switch {
		case ev.Subtype == "init", ev.Subtype == "api_retry":
			a.requestOut = true
		case ev.Subtype == "status":
			// requesting: a request is out; compacting: the CLI writes its
			// summary of the conversation (PhaseCompacting), a reply of its
			// own whose first byte is not what it waits for.
			a.requestOut = ev.Status != "compacting"
		}
	case "user":
		a.requestOut = true
	case "assistant", "result":
		a.requestOut = false
	case "stream_event":
		if ev.StreamEventType == "message_start" {
			a.requestOut = false
		}
	}
}

// observeHook keeps the running hooks: a hook_started adds one (at most
// stream.MaxListItems: a stream that never ends its hooks cannot grow
// this), its hook_response removes it. hook_progress changes nothing but
// the deadline, as any line of progress does.
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

// schedule sets due to the earliest deadline of the agents it judges.
// It runs on every line: it builds no label, and walks the few agents
// there are without allocating.
func (l *liveness) schedule() {
	var first *agent
	var due time.Time
	consider := func(a *agent) {
		at := a.last.Add(l.allowanceOf(a))
		if first == nil || at.Before(due) {
			first, due = a, at
		}
	}
	if !l.mainWaitsOnSubagents() {
		consider(&l.main)
	}
	for _, a := range l.subs {
		if a.calls.live > 0 || a.waitsOn == 0 {
			consider(a)
		}
	}
	if first == &l.main {
		first = nil
	}
	l.due, l.dueAgent, l.deadline = due, first, due
}

// mainWaitsOnSubagents: sub-agents run, and the main agent has no call or
// hook of its own running: its running calls started them (it asks again
// only once they return), or its turn is over, no request out, while they
// work beside it (2.1.332 holds the result back until they end).
func (l *liveness) mainWaitsOnSubagents() bool {
	if len(l.subs) == 0 || l.main.calls.live > 0 || len(l.hooks) > 0 || !l.anyLine {
		return false
	}
	return l.main.waitsOn > 0 || l.main.stream.phase == PhaseWaiting && !l.main.requestOut
}

// doing is what decides agent a's silence allowed now, and that allowance:
// the calls (and for the main agent, hooks) running, else its phase.
func (l *liveness) doing(a *agent) (Doing, time.Duration) {
	d, allowed := l.phaseOf(a)
	if d.Phase == PhaseTool {
		d.What = l.working(a)
	}
	if a != &l.main {
		d.Agent = a.subagentName()
	}
	return d, allowed
}

// allowanceOf is agent a's silence allowed now (doing's, without making
// its words).
func (l *liveness) allowanceOf(a *agent) time.Duration {
	_, allowed := l.phaseOf(a)
	return allowed
}

// phaseOf is agent a's phase and its allowance, the running calls and
// hooks not named yet.
func (l *liveness) phaseOf(a *agent) (Doing, time.Duration) {
	d := Doing{Phase: a.stream.phase, What: a.stream.what}
	if a == &l.main && !l.anyLine {
		d = Doing{Phase: PhaseStarting}
	}
	allowed := l.lim.allowance(d.Phase, l.retryWait)
	switch {
	case d.Phase == PhaseWaiting && a.requestOut && a.seesStream:
		d.FirstByte, d.Tokens = true, a.context
		allowed = l.lim.firstByte(a.context)
	case d.Phase == PhaseRetry && a.seesStream:
		d.FirstByte, d.Tokens = true, a.context
		allowed = l.lim.firstByte(a.context) + l.retryWait
	case d.Phase == PhaseCompacting:
		// The summary of the whole conversation is written: its first
		// byte, then a reply of its own.
		d.Tokens = a.context
		allowed = l.lim.compacting(a.context)
	}
	hooks := a == &l.main && len(l.hooks) > 0
	if a.calls.live > 0 || hooks {
		// tool_timeout replaces the allowance, unless the model is writing
		// beside the running tools and may be silent longer there.
		if work := l.lim.allowance(PhaseTool, 0); !d.Phase.writing() || work >= allowed {
			return Doing{Phase: PhaseTool}, work
		}
	}
	return d, allowed
}

// working names what agent a has running: its calls, and the main agent's
// hooks ("Bash and the Stop hook").
func (l *liveness) working(a *agent) string {
	w := a.label()
	if a != &l.main || len(l.hooks) == 0 {
		return w
	}
	names := make([]string, 0, min(len(l.hooks), namesShown))
	for _, h := range l.hooks[:min(len(l.hooks), namesShown)] {
		names = append(names, h.Label())
	}
	hooks := label(names, len(l.hooks)-len(names))
	if w == "" {
		return hooks
	}
	return w + ", " + hooks
}

// now is what the agent that would hang first is doing, its allowance,
// and since when it has been silent.
func (l *liveness) now() (Doing, time.Duration, *agent) {
	a := l.dueAgent
	if a == nil {
		a = &l.main
	}
	d, allowed := l.doing(a)
	return d, allowed, a
}

// firstLineWait is the least silence allowed before the CLI's first line:
// it connects its MCP servers first, and 2.1.330 waits 30 s for one that
// does not answer before it prints anything (§F28). A shorter idle_timeout
// would kill every attempt of a run with such a server, each one waiting
// again.
const firstLineWait = 60 * time.Second

// toolsRunning names the calls and hooks of the agent that would hang
// first, for messages and the status line: the first few, and a count of
// the rest.
func (l *liveness) toolsRunning() []string {
	_, _, a := l.now()
	names, more := a.calls.names()
	if a == &l.main {
		for _, h := range l.hooks {
			if len(names) < namesShown {
				names = append(names, h.Label())
			} else {
				more++
			}
		}
	}
	if more > 0 {
		names = append(names, strconv.Itoa(more)+" more")
	}
	return names
}

// outstanding are every agent's calls without a result, in call order:
// what a stop cuts off. A running sub-agent's own call is among them.
func (l *liveness) outstanding() []stream.ToolUse {
	type call struct {
		tu  stream.ToolUse
		seq int
	}
	var all []call
	add := func(c *callSet) {
		c.each(func(s callSlot) bool { all = append(all, call{s.tu, s.seq}); return true })
	}
	add(&l.main.calls)
	for _, a := range l.subs {
		if a.call.ID != "" && !a.background {
			all = append(all, call{a.call, a.seq})
		}
		add(&a.calls)
	}
	slices.SortStableFunc(all, func(x, y call) int { return x.seq - y.seq })
	out := make([]stream.ToolUse, len(all))
	for i, c := range all {
		out[i] = c.tu
	}
	return out
}

// idle reports whether no call runs and no sub-agent works (a safe
// point's test).
func (l *liveness) idle() bool { return l.main.calls.live == 0 && len(l.subs) == 0 }

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
