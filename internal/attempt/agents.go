package attempt

import (
	"slices"
	"time"

	"github.com/malarun/malarun/internal/stream"
)

// agent is one agent of the CLI's run as liveness sees it (docs/design.md
// §D33): the main agent, or a sub-agent that a Task (Agent) call started.
// Each has its own phase, from its own lines, and its own last line of
// progress; a hang is any agent silent past its phase's allowance.
//
// Both pinned CLIs print a sub-agent's whole messages, each with its
// call's id as parent_tool_use_id, and nothing of its reply while it
// streams (§F35): its reply is one coarse phase (PhaseSubagent) from its
// last whole message to its next, and its tool calls are its own.
type agent struct {
	// id is the call that started it ("" for the main agent); task is its
	// task's id (task_started), when the CLI named one.
	id, task string
	// description is what its call says it does, for messages.
	description string
	// background: it runs beside the main agent (2.1.332 runs every Task
	// so): the call's result came at once, and the agent ends with its task.
	background bool
	// call is the call that started it, for the calls cut off by a stop;
	// caller is the agent that made it, which waits on it while it runs
	// inside the call (caller.waitsOn counts such agents).
	call    stream.ToolUse
	seq     int
	caller  *agent
	waitsOn int
	// seesStream: the CLI prints this agent's reply as it streams
	// (stream_event lines of its own): its phases are as fine as the main
	// agent's. The main agent's are whenever partial messages are on.
	seesStream bool
	stream     streamPhase
	calls      callSet
	// workSince is when the calls running now began to run.
	workSince time.Time
	// last is when its last line of progress came (its start before any).
	last time.Time
	// requestOut: the agent has sent a request and no event of the reply
	// has come (PhaseWaiting with a request out: the first byte). Seen
	// only where the agent's stream is (the main agent).
	requestOut bool
	// context is how many tokens the agent's next request carries, as far
	// as malarun knows: the last usage its messages reported, plus the
	// tool results since (4 bytes a token), or the run's at the start.
	context int64
	// working labels the calls running now ("Bash, Read and 3 more"),
	// made again only when they change.
	working      string
	workingStale bool
}

// callerID is the id its caller's lines carry ("" for the main agent).
func (a *agent) callerID() string {
	if a.caller == nil {
		return ""
	}
	return a.caller.id
}

// subagentName names a sub-agent in messages.
func (a *agent) subagentName() string {
	if a.description == "" {
		return "a sub-agent"
	}
	return "the sub-agent «" + a.description + "»"
}

// addCalls opens the calls of an assistant message of this agent.
func (a *agent) addCalls(tus []stream.ToolUse, seq *int, now time.Time) {
	if len(tus) == 0 {
		return
	}
	if a.calls.live == 0 {
		a.workSince = now
	}
	for _, tu := range tus {
		*seq++
		a.calls.add(tu, *seq)
	}
	a.workingStale = true
}

// endCalls closes the calls whose results a user message of this agent
// carries; it reports whether any was open here.
func (a *agent) endCalls(ids []string) bool {
	ended := false
	for _, id := range ids {
		ended = a.calls.end(id) || ended
	}
	if ended {
		a.workingStale = true
	}
	return ended
}

// label is what the agent's running calls are called now.
func (a *agent) label() string {
	if a.workingStale {
		a.working, a.workingStale = label(a.calls.names()), false
	}
	return a.working
}

// observeCoarse moves the phase of an agent whose stream is not printed,
// on one of its whole messages: after it, a reply is on its way
// (PhaseSubagent), unless its calls run (PhaseTool, decided by the calls).
func (a *agent) observeCoarse(ev *stream.Event, now time.Time) {
	switch ev.Type {
	case "assistant", "user":
		if a.stream.phase != PhaseSubagent {
			a.stream = streamPhase{phase: PhaseSubagent, since: now}
		} else {
			a.stream.since = now
		}
	}
}

// sub is the running sub-agent that the call id started (nil: none).
func (l *liveness) sub(id string) *agent {
	for _, a := range l.subs {
		if a.id == id {
			return a
		}
	}
	return nil
}

// subagentOf is the sub-agent whose line ev is, started by it if it is the
// first that names it (nil: the main agent's line, or a sub-agent malarun
// does not follow). A sub-agent's own lines carry its call's id as
// parent_tool_use_id; its task's lines (task_started of a local_agent,
// task_progress) carry it as tool_use_id.
func (l *liveness) subagentOf(ev *stream.Event, now time.Time) *agent {
	id := ev.ParentToolUseID
	starts := false
	if id == "" && ev.Type == "system" && ev.ToolUseID != "" {
		switch {
		case ev.Subtype == "task_started" && ev.TaskType == "local_agent":
			id, starts = ev.ToolUseID, true
		case ev.Subtype == "task_progress" && l.sub(ev.ToolUseID) != nil:
			id = ev.ToolUseID
		}
	}
	if id == "" {
		return nil
	}
	a := l.sub(id)
	if a == nil {
		if slices.Contains(l.ended, id) || len(l.subs) >= MaxSubagents {
			return nil
		}
		a = &agent{id: id, last: now, stream: streamPhase{phase: PhaseSubagent, since: now}, context: l.main.context}
		// Its call is its own now: the agent that made it (the main one,
		// or a sub-agent's own sub-agent) waits on it, whose lines say
		// whether it lives.
		for _, caller := range append([]*agent{&l.main}, l.subs...) {
			if slot, ok := caller.calls.take(id); ok {
				a.call, a.seq, a.caller = slot.tu, slot.seq, caller
				caller.workingStale = true
				caller.waitsOn++
				break
			}
		}
		l.subs = append(l.subs, a)
	}
	if starts {
		a.task = ev.TaskID
		if a.description == "" {
			a.description = ev.Description
		}
		if ev.Backgrounded && !a.background {
			// It runs beside its caller, which does not wait on it.
			a.background = true
			if a.caller != nil {
				a.caller.waitsOn--
			}
		}
	}
	return a
}

// observeSubagent takes a line of sub-agent a (or of its task).
func (l *liveness) observeSubagent(a *agent, ev *stream.Event, now time.Time) {
	if ev.Type == "stream_event" {
		a.seesStream = true
	}
	a.addCalls(ev.ToolUses, &l.seq, now)
	a.endCalls(ev.ToolResults)
	if a.seesStream {
		a.stream.observe(ev, now)
		a.observeRequest(ev)
	} else {
		a.observeCoarse(ev, now)
	}
	if ev.Type == "assistant" && ev.HasUsage && ev.Model != "<synthetic>" {
		a.context = ev.Usage.Occupancy()
	}
	a.last = now
}

// endSubagents ends the sub-agents a line says have ended: their task's
// notification (or a terminal update, or a snapshot without it), or, for
// one that ran inside its call, the call's result. Its calls still open
// end with it: they were its, and it is gone.
func (l *liveness) endSubagents(ev *stream.Event, now time.Time) {
	if len(l.subs) == 0 {
		return
	}
	l.subs = slices.DeleteFunc(l.subs, func(a *agent) bool {
		done := false
		switch {
		case ev.Type == "user" && !a.background && ev.ParentToolUseID == a.callerID():
			done = slices.Contains(ev.ToolResults, a.id)
		case ev.Type != "system" || a.task == "":
		case ev.Subtype == "task_notification":
			done = ev.TaskID == a.task
		case ev.Subtype == "task_updated":
			done = ev.TaskID == a.task && terminalTaskStatus[ev.Status]
		case ev.Subtype == "background_tasks_changed" && ev.HasTasks && a.background:
			done = !slices.ContainsFunc(ev.Tasks, func(t stream.Task) bool { return t.ID == a.task })
		}
		if done {
			if len(l.ended) >= stream.MaxListItems {
				l.ended = l.ended[1:]
			}
			l.ended = append(l.ended, a.id)
			if a.caller != nil && !a.background {
				// Its caller works again from now.
				a.caller.waitsOn--
				a.caller.last = now
			}
		}
		return done
	})
}
