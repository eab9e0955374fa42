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
	// description is what its call says it does, and name the words that
	// name it in messages (made once).
	description, name string
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

// subagentName names a sub-agent in messages (made once).
func (a *agent) subagentName() string {
	if a.name == "" {
		a.name = "a sub-agent"
		if a.description != "" {
			a.name = "the sub-agent «" + a.description + "»"
		}
	}
	return a.name
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
// task_progress, task_updated, task_notification) carry it as tool_use_id
// or name its task. A sub-agent begins only with its task_started or at a
// call of Agent (Task) malarun saw made: a line naming a call nobody made
// is nobody's (§D34).
func (l *liveness) subagentOf(ev *stream.Event, now time.Time) *agent {
	id := ev.ParentToolUseID
	starts := false
	if id == "" && ev.Type == "system" {
		switch ev.Subtype {
		case "task_started":
			if ev.TaskType == "local_agent" && ev.ToolUseID != "" {
				id, starts = ev.ToolUseID, true
			}
		case "task_progress", "task_updated", "task_notification":
			if a := l.subOfTask(ev.TaskID, ev.ToolUseID); a != nil {
				return a
			}
		}
	}
	if id == "" {
		return nil
	}
	if a := l.sub(id); a != nil {
		a.started(ev, starts)
		return a
	}
	if slices.Contains(l.ended, id) || len(l.subs) >= maxSubagents {
		return nil
	}
	caller, slot, ok := l.callOf(id)
	if !ok && !starts {
		return nil
	}
	a := &agent{id: id, last: now, stream: streamPhase{phase: PhaseSubagent, since: now}, context: l.main.context}
	if ok {
		// Its call is its own now: the agent that made it (the main one,
		// or a sub-agent's own sub-agent) waits on it while it runs inside
		// the call, and its lines say whether it lives.
		caller.calls.take(id)
		caller.workingStale = true
		a.call, a.seq, a.caller = slot.tu, slot.seq, caller
		caller.waitsOn++
		if slot.tu.Background {
			a.runBeside() // run_in_background: the call returns at once
		}
	}
	l.subs = append(l.subs, a)
	a.started(ev, starts)
	return a
}

// callerOf is the agent that waits on a, or beside which it runs: the
// main agent when malarun never saw the call that made it (a task_started
// before, or without, its call).
func (l *liveness) callerOf(a *agent) *agent {
	if a.caller == nil {
		return &l.main
	}
	return a.caller
}

// callOf finds the open call of the Agent (Task) tool with this id, and
// the agent that made it.
func (l *liveness) callOf(id string) (*agent, callSlot, bool) {
	for _, caller := range append([]*agent{&l.main}, l.subs...) {
		if i, open := caller.calls.index[id]; open {
			slot := caller.calls.slots[i]
			if name := slot.tu.Name; name == "Agent" || name == "Task" {
				return caller, slot, true
			}
			return nil, callSlot{}, false
		}
	}
	return nil, callSlot{}, false
}

// subOfTask is the running sub-agent a task's line names, by its task id
// or its call's id.
func (l *liveness) subOfTask(task, call string) *agent {
	for _, a := range l.subs {
		if task != "" && a.task == task || call != "" && a.id == call {
			return a
		}
	}
	return nil
}

// started takes in the agent's task_started, if ev is it.
func (a *agent) started(ev *stream.Event, starts bool) {
	if !starts {
		return
	}
	a.task = ev.TaskID
	if a.description == "" {
		a.description = ev.Description
		a.name = ""
	}
	if ev.Backgrounded {
		a.runBeside()
	}
}

// runBeside marks the agent as running beside its caller, which then does
// not wait on it.
func (a *agent) runBeside() {
	if a.background {
		return
	}
	a.background = true
	if a.caller != nil {
		a.caller.waitsOn--
	}
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
// one that ran inside its call and has no task malarun knows of, the
// call's result. A call that returns while its agent's task runs on was
// moved beside its caller (2.1.197 prints no is_backgrounded for an agent
// run in the background; 2.1.332 moves a long one there): the agent goes
// on, as a background task (l.movedBeside). Its calls still open end with
// it: they were its, and it is gone.
func (l *liveness) endSubagents(ev *stream.Event, now time.Time) {
	if len(l.subs) == 0 {
		return
	}
	l.subs = slices.DeleteFunc(l.subs, func(a *agent) bool {
		done := false
		switch {
		case ev.Type == "user" && !a.background && ev.ParentToolUseID == a.callerID():
			if !slices.Contains(ev.ToolResults, a.id) {
				break
			}
			if a.task == "" {
				done = true
				break
			}
			a.runBeside()
			l.callerOf(a).last = now
			l.movedBeside = append(l.movedBeside, stream.Task{ID: a.task, Type: "local_agent", Description: a.description, ToolUseID: a.id})
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
			// Its caller works again from now: it waited on the agent
			// inside its call, or (its turn over) beside it.
			if a.caller != nil && !a.background {
				a.caller.waitsOn--
			}
			l.callerOf(a).last = now
		}
		return done
	})
}
