package attempt

import (
	"time"

	"github.com/malarun/malarun/internal/endpoint"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/usagelimit"
)

// InputKind names what happened.
type InputKind int

const (
	// Line: the CLI printed a line (Input.Event).
	Line InputKind = iota
	// StreamEnd: the stream is read to its end; the CLI has exited.
	StreamEnd
	// Wake: the driver's timer, set to State.Wake, fired.
	Wake
	// Interrupt: malarun was asked to stop (its first signal, or its context ended).
	Interrupt
	// Probed: the look at the API's address that Effects.Probe asked for
	// found Input.Finding.
	Probed
)

// Input is one thing the driver saw.
type Input struct {
	Kind  InputKind
	Event stream.Event // for Line
	// Pressure (for Line): the context monitor found the occupancy over the
	// threshold after this line.
	Pressure bool
	// Finding (for Probed) is what the probe found.
	Finding endpoint.Finding
	// Written (for Wake) is how many bytes of the stream the CLI has
	// written, as the driver found just now (0: unknown), and Consumed how
	// many of them the reader has taken (0: unknown; read first, so never
	// above Written). Bytes not read yet are lines the reader has not
	// caught up with (a malarun that was paused): they postpone a hang
	// (liveness.catchUp); a line the CLI never ends does not.
	Written, Consumed int64
}

// Effects is what the driver must do after a step.
type Effects struct {
	// Stop: stop the process tree now, with Grace. At most once per attempt;
	// State.Ending says why.
	Stop  bool
	Grace Grace
	// Started and Finished are the background tasks this step saw start and end.
	Started, Finished []stream.Task
	// Probe: look at the API's address (netprobe.Probe) and step the machine
	// with Probed when done. Never while a look is under way: the next is
	// asked for only after a finding (unreachable.go).
	Probe bool
}

// State is one attempt's machine. Step changes it in place (a line comes
// every few milliseconds; copying the task set each time would cost more
// than it tells); it never reads a clock or touches a process.
type State struct {
	lim   Limits
	live  liveness
	tasks tasks
	// commands are the inputs of background tool calls by tool_use id.
	commands map[string]string

	// afterResult: the last result line ended a turn and no line of a new
	// turn came since. The CLI now exits, or waits for its background tasks.
	afterResult  bool
	lingerAt     time.Time // when a CLI with nothing left to do counts as stuck
	backgroundAt time.Time // when the wait for background tasks ends
	pressure     bool      // the context crossed the threshold; stop at the next safe point
	results      int
	lastOK       bool // the last result reported success
	// stood: when the stop was decided, the last result still stood: it
	// ended the CLI's work (no turn began after it) and left no background
	// task to be cut off (ResultStands).
	stood bool
	// late counts the results read after the stop: they decide nothing
	// (docs/design.md §D35).
	late int
	// queued: the last result said more turns were queued.
	queued bool
	// writtenAt is the most of the stream known written (at a wake);
	// stopAt is where the stream stood when the stop was decided: a line
	// that ends before it was written before the stop, even if it is read
	// after (a malarun paused past a deadline), and is no last word.
	writtenAt, stopAt int64
	// talked: the run has talked to the API (Limits.Talked, or this
	// attempt's stream showed an answer); probed: a probe was asked for.
	talked, probed bool

	stopped   StopReason
	grace     Grace
	signalled bool // malarun was asked to stop, perhaps while stopping for another reason
	hangLimit time.Duration
	// hangSilence is how long claude had been silent when the hang was found.
	hangSilence time.Duration
	hangTools   []string
	hangDoing   Doing               // the phase the hang was found in
	limit       usagelimit.Decision // for UsageLimit: the CLI's own wait, judged
	cause       endpoint.Finding    // for Unreachable: why the API cannot be reached
	unreach     unreachable         // the looks at the API's address over the window (unreachable.go)
	cliWaits    usagelimit.CLIWaits // the CLI's own usage-limit sleeps let run, spent from LimitWaitLeft
	cutTools    []stream.ToolUse
	cutHooks    []Hook
	cutTasks    []stream.Task
}

// New starts the machine for an attempt whose process started at now.
func New(lim Limits, now time.Time) *State {
	return &State{lim: lim, talked: lim.Talked, live: newLiveness(lim, now)}
}

// Step folds in one input that happened at now.
func (s *State) Step(in Input, now time.Time) Effects {
	switch in.Kind {
	case Line:
		return s.line(&in, now)
	case StreamEnd:
		return s.stop(StopExited, KillGrace)
	case Wake:
		return s.wake(now, in.Written, in.Consumed)
	case Interrupt:
		s.signalled = true
		return s.stop(StopInterrupted, ShutdownGrace)
	case Probed:
		return s.onProbed(in.Finding, now)
	}
	return Effects{}
}

// line takes in by pointer: an Event is large, and a line comes every few
// milliseconds.
func (s *State) line(in *Input, now time.Time) Effects {
	ev := &in.Event
	if !s.talked {
		s.talked = answered(ev)
	}
	if s.stopped != StopNone {
		if ev.Offset+ev.Bytes+1 <= s.stopAt {
			s.beforeStop(ev, now)
		} else {
			s.afterStop(ev)
		}
		return Effects{}
	}
	if ev.Type == "result" {
		s.results++
		s.lastOK = ev.Subtype == "success" && !ev.IsError
	}
	var eff Effects
	s.live.observe(ev, now, s.tasks.isRunning)
	for _, tk := range s.live.movedBeside {
		if s.tasks.start(tk) {
			eff.Started = append(eff.Started, tk)
		}
	}
	s.live.movedBeside = s.live.movedBeside[:0]
	for _, tu := range ev.ToolUses {
		if tu.Background {
			if s.commands == nil {
				s.commands = map[string]string{}
			}
			s.commands[tu.ID] = tu.Input
		}
	}
	ch := s.tasks.observe(ev, s.commands)
	eff.Started, eff.Finished = append(eff.Started, ch.started...), ch.finished
	s.pressure = s.pressure || in.Pressure && !s.lim.Checkpoint
	s.afterLine(ev, len(ch.finished) > 0, now)

	switch {
	case RefusedCredentials(ev):
		eff = merge(eff, s.stop(StopAuth, KillGrace))
	case ev.Type == "system" && ev.Subtype == "api_retry" && !s.probed && endpoint.ShouldProbe(s.talked, ev.ErrorStatus, ev.Error):
		// No answer at all, and none yet in this run: the CLI does not say
		// why (§F25), so malarun looks, while the CLI goes on retrying.
		s.probed = true
		eff.Probe = true
	case ev.Type == "result" && ev.IsError && !s.talked:
		// A CLI that gave up without retrying (2.1.330 on a certificate)
		// or after all its retries names the code in its text.
		if f := endpoint.FromResultText(ev.Result); endpoint.Judge(s.talked, f) {
			s.cause = f
			eff = merge(eff, s.stop(StopUnreachable, KillGrace))
		}
	case ev.Type == "system" && ev.Subtype == "api_retry" && ev.ErrorStatus == 429:
		if usagelimit.Delay(ev.RetryDelayMS) > s.lim.Idle {
			if d := s.cliWaits.Judge(now, ev.RetryDelayMS, s.lim.LimitWaitLeft, s.lim.Deadline); d.Action == usagelimit.Stop {
				s.limit = d
				eff = merge(eff, s.stop(StopUsageLimit, KillGrace))
			}
		}
	case s.pressure && s.live.idle() && len(ev.ToolResults) > 0 && len(s.tasks.running) == 0:
		// A safe point: the last tool result is in and no background task
		// runs, so nothing is cut off, and the agent is about to send its
		// next request. (After a text-only message the turn is ending: let it end.)
		eff = merge(eff, s.stop(StopPressure, KillGrace))
	}
	return eff
}

// answered reports whether a line shows an answer of the API: a reply
// streaming (stream_event), a message of the model (not the CLI's own
// <synthetic> one, which reports an error), or a successful result.
func answered(ev *stream.Event) bool {
	switch ev.Type {
	case "stream_event":
		return true
	case "assistant":
		return ev.Model != "<synthetic>"
	case "result":
		return ev.Subtype == "success" && !ev.IsError
	}
	return false
}

func (s *State) wake(now time.Time, written, consumed int64) Effects {
	if s.stopped != StopNone {
		return Effects{}
	}
	// What is written now was written before any stop decided here (a
	// paused malarun's deadline: §D35's lines written before the stop).
	s.writtenAt = max(s.writtenAt, written)
	eff := s.lookAgain(now)
	switch {
	case !s.lim.Deadline.IsZero() && !now.Before(s.lim.Deadline):
		return s.stop(StopSessionTimeout, KillGrace)
	case s.afterResult && len(s.tasks.running) > 0:
		if !s.backgroundAt.IsZero() && !now.Before(s.backgroundAt) {
			return s.stop(StopBackgroundTimeout, KillGrace)
		}
	case s.afterResult:
		if !now.Before(s.afterResultDue()) {
			return s.stop(StopLingered, KillGrace)
		}
	case !now.Before(s.live.deadline) && s.live.catchUp(written, consumed, now):
		// The CLI wrote since malarun last looked: not silent, malarun was.
	case !now.Before(s.live.deadline):
		var hung *agent
		s.hangDoing, s.hangLimit, hung = s.live.now()
		s.hangTools = s.live.toolsRunning()
		// From the agent's last line of progress (or the start): the limit,
		// any wait an api_retry line announced, and a wake-up that came late.
		s.hangSilence = now.Sub(hung.last)
		return s.stop(StopHang, KillGrace)
	}
	return eff
}

// stop decides the ending, once: what is cut off is what runs now.
func (s *State) stop(why StopReason, g Grace) Effects {
	if s.stopped != StopNone {
		return Effects{}
	}
	s.stopped, s.grace = why, g
	s.stopAt = max(s.writtenAt, s.live.read)
	s.settleStood()
	s.cutTools = s.live.outstanding()
	s.cutHooks = append([]Hook(nil), s.live.hooks...)
	s.cutTasks = append([]stream.Task(nil), s.tasks.running...)
	return Effects{Stop: true, Grace: g}
}

func merge(a, b Effects) Effects {
	a.Stop, a.Grace = b.Stop, b.Grace
	return a
}

// Wake is when the driver must step the machine with Wake next; zero: no
// timer (the process is being stopped, or nothing bounds the wait).
func (s *State) Wake() time.Time {
	if s.stopped != StopNone {
		return time.Time{}
	}
	var at time.Time
	switch {
	case s.afterResult && len(s.tasks.running) > 0:
		at = s.backgroundAt
	case s.afterResult:
		at = s.afterResultDue()
	default:
		at = s.live.deadline
	}
	return earliest(earliest(at, s.lim.Deadline), s.unreach.lookAt)
}

func earliest(a, b time.Time) time.Time {
	switch {
	case a.IsZero():
		return b
	case b.IsZero() || a.Before(b):
		return a
	}
	return b
}

// StopReason is why the process was told to stop (None while it runs).
func (s *State) StopReason() StopReason { return s.stopped }

// FinalStop is how the attempt ended, once its tree is gone: a signal that came
// while the tree was being stopped for another reason makes it an
// interruption (the user asked malarun to stop, so no retry follows),
// unless the CLI had reported success by then.
func (s *State) FinalStop() StopReason {
	if s.signalled && s.stopped != StopInterrupted && !s.ResultStands() {
		return StopInterrupted
	}
	return s.stopped
}

// Outstanding are the tool calls without a result, every agent's, in call
// order (a copy: CallsChanged says when to ask again).
func (s *State) Outstanding() []stream.ToolUse { return s.live.outstanding() }

// ToolsRunning names the outstanding tool calls.
func (s *State) ToolsRunning() []string { return s.live.toolsRunning() }

// Running are the background tasks running now, in the order they started.
func (s *State) Running() []stream.Task { return s.tasks.running }

// RunningVersion changes whenever Running does (or a task's words).
func (s *State) RunningVersion() int { return s.tasks.version }

// Hang is the silence that was allowed and the tools that ran when a hang
// was detected.
func (s *State) Hang() (time.Duration, []string) { return s.hangLimit, s.hangTools }

// HangPhase is what claude was doing when the hang was found.
func (s *State) HangPhase() Doing { return s.hangDoing }

// Doing is what claude is doing now, as far as silence goes, the silence
// allowed in it, and since when it has been doing it (for the status line).
func (s *State) Doing() (Doing, time.Duration, time.Time) {
	d, allowed, a := s.live.now()
	since := a.stream.since
	if d.Phase == PhaseTool {
		since = a.workSince
		if a == &s.live.main && a.calls.live == 0 {
			since = s.live.hooksSince
		}
	}
	return d, allowed, since
}

// HangSilence is how long claude had been silent when the hang was found
// (at least the limit Hang returns).
func (s *State) HangSilence() time.Duration { return s.hangSilence }

// Limit is, for UsageLimit, the CLI's announced wait that was judged too
// long: RetryAt is when its retry would have been sent.
func (s *State) Limit() usagelimit.Decision { return s.limit }

// Unreachable is, for the ending Unreachable, why the API cannot be reached.
func (s *State) Unreachable() endpoint.Finding { return s.cause }

// Talked reports whether the run has talked to the API, this attempt included.
func (s *State) Talked() bool { return s.talked }

// CLIWaited is how long, by now, the CLI slept through usage limits of its
// own accord (api_retry for a 429 longer than Idle): the run's limit_wait
// pays for it.
func (s *State) CLIWaited(now time.Time) time.Duration { return s.cliWaits.SpentBy(now) }

// CutOff are the tool calls and background tasks that were running when
// the process was told to stop: they may have run in part.
func (s *State) CutOff() ([]stream.ToolUse, []stream.Task) { return s.cutTools, s.cutTasks }

// HooksCutOff are the hooks that were running when the stop was decided:
// they never ended, so whatever they check or do was not done.
func (s *State) HooksCutOff() []Hook { return s.cutHooks }

// ExpectsExit: the CLI should exit soon: it is being stopped, or it printed
// its final result and runs nothing in the background (so within Linger).
func (s *State) ExpectsExit() bool {
	return s.stopped != StopNone || s.afterResult && len(s.tasks.running) == 0
}

// WaitingForTasks: the CLI printed its result and waits for background tasks.
func (s *State) WaitingForTasks() bool { return s.afterResult && len(s.tasks.running) > 0 }
