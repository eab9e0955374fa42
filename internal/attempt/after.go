package attempt

import (
	"slices"
	"time"

	"github.com/malarun/malarun/internal/stream"
)

// What comes after a result, and after the stop: only announced work keeps
// a CLI that printed its result (docs/design.md §D34), and the dying CLI's
// last words decide nothing (§D35).

// afterLine keeps what a result leaves the CLI to do (docs/design.md §D9,
// §D34). After a result only the CLI's exit or work it announces keeps it
// alive: a new turn (its lines), a background task (bounded by
// background_timeout from the result), a hook (tool_timeout). Other lines
// (pings, keep_alives, junk, kinds malarun does not know) move nothing,
// however many come: the linger counts from the result, or from the end
// of the last task or hook, whichever was last.
func (s *State) afterLine(ev *stream.Event, taskEnded bool, now time.Time) {
	switch {
	case ev.Type == "result" && ev.QueuedTurnCount > 0:
		// More turns are queued (2.1.332): this result is no end, and the
		// model's timers go on until the last one's.
		s.afterResult, s.queued = false, true
		s.lingerAt, s.backgroundAt = time.Time{}, time.Time{}
	case ev.Type == "result":
		s.afterResult, s.queued = true, false
		s.lingerAt, s.backgroundAt = time.Time{}, time.Time{}
		if len(s.tasks.running) > 0 {
			s.backgroundAt = s.afterBackground(now)
		} else {
			s.lingerAt = now.Add(s.lim.Linger)
		}
	case !s.afterResult:
	case beginsTurn(ev):
		// The CLI works again (a task notification woke the model): the
		// model's timers apply until its next result.
		s.afterResult = false
		s.lingerAt, s.backgroundAt = time.Time{}, time.Time{}
	case len(s.tasks.running) > 0:
		s.lingerAt = time.Time{}
		if s.backgroundAt.IsZero() {
			s.backgroundAt = s.afterBackground(now)
		}
	case taskEnded || ev.Type == "system" && ev.Subtype == "hook_response":
		// The last task (or a hook) ended: the CLI now runs the turn that
		// notifies it, or exits.
		s.lingerAt = now.Add(s.lim.Linger)
	}
}

// afterStop takes a line read after the stop was decided: the dying CLI's
// last words (docs/design.md §D35). A tool call it starts is cut off like
// those that ran at the stop (it may have run in part: the resume prompt
// names it); a result decides nothing, since the work it reports was cut
// short by the stop (a hang, session_timeout, a signal).
// beforeStop takes a line read after the stop but written before it (a
// malarun paused past a deadline reads its backlog after stopping): it is
// what happened before the stop, so a result in it decides, a call it
// answers was not cut, and what it announces counts as it would have.
func (s *State) beforeStop(ev *stream.Event, now time.Time) {
	if ev.Type == "result" {
		s.results++
		s.lastOK = ev.Subtype == "success" && !ev.IsError
	}
	for _, id := range ev.ToolResults {
		s.cutTools = slices.DeleteFunc(s.cutTools, func(c stream.ToolUse) bool { return c.ID == id })
	}
	s.afterStop(ev) // a call it starts ran in part at most: cut
	ch := s.tasks.observe(ev, s.commands)
	for _, tk := range ch.finished {
		s.cutTasks = slices.DeleteFunc(s.cutTasks, func(c stream.Task) bool { return c.ID == tk.ID })
	}
	s.afterLine(ev, len(ch.finished) > 0, now)
	s.settleStood()
}

// settleStood decides whether the last result stood at the stop: it ended
// the CLI's work, and no background task it left was cut off. A CLI that
// exits decided its tasks' fate itself (2.1.197 stops them and says so); a
// stop of malarun's cuts them off.
func (s *State) settleStood() {
	s.stood = s.afterResult && (s.stopped == StopExited || len(s.tasks.running) == 0)
}

func (s *State) afterStop(ev *stream.Event) {
	if ev.Type == "result" && ev.Offset+ev.Bytes+1 > s.stopAt {
		s.late++
	}
	for _, tu := range ev.ToolUses {
		if len(s.cutTools) >= stream.MaxListItems {
			break
		}
		if !slices.ContainsFunc(s.cutTools, func(c stream.ToolUse) bool { return c.ID == tu.ID }) {
			s.cutTools = append(s.cutTools, tu)
		}
	}
}

// afterResultDue is when a CLI with nothing left to do after its result
// counts as stuck: the linger, or while a hook runs after the result (a
// SessionEnd hook), that hook's tool_timeout.
func (s *State) afterResultDue() time.Time {
	if len(s.live.hooks) > 0 && s.live.deadline.After(s.lingerAt) {
		return s.live.deadline
	}
	return s.lingerAt
}

func (s *State) afterBackground(now time.Time) time.Time {
	if s.lim.Background <= 0 {
		return time.Time{}
	}
	return now.Add(s.lim.Background)
}

// beginsTurn reports whether a line shows the model at work again.
func beginsTurn(ev *stream.Event) bool {
	switch ev.Type {
	case "assistant", "user":
		return true
	case "stream_event":
		return ev.StreamEventType != "ping"
	case "system":
		switch ev.Subtype {
		case "init", "status", "api_retry", "compact_boundary":
			return true
		}
	}
	return false
}

// ResultStands reports whether the attempt's last result reported success
// and still stands: it was read before the stop, and when the attempt
// stopped no turn had begun after it and no background task it left was
// cut off by malarun (docs/design.md §D34, §D35). A result the CLI prints
// after malarun stopped it decides nothing.
func (s *State) ResultStands() bool {
	return s.lastOK && (s.stopped == StopNone || s.stood)
}

// TurnsQueued reports whether the last result said more turns were queued
// (queued_turn_count, 2.1.332): it was no end.
func (s *State) TurnsQueued() bool { return s.queued }

// StopAt is where the stream stood when the stop was decided: lines that
// end before it were written before the stop (Log.Stopped).
func (s *State) StopAt() int64 { return s.stopAt }

// LateResults counts the results read after the stop (they decide nothing).
func (s *State) LateResults() int { return s.late }
