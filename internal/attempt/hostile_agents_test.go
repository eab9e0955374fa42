package attempt

// Sub-agents and lines of no one's work, as a hostile CLI or an unusual
// real run prints them (issue 46's review, docs/design.md §D33-§D35).

import (
	"testing"
	"time"

	"github.com/malarun/malarun/internal/stream"
)

// defaults46 are malarun's defaults (docs/configuration.md).
var defaults46 = Limits{Idle: 3 * time.Minute, FirstByte: 45 * time.Second, Subagent: 90 * time.Second, Tool: 15 * time.Minute,
	Text: time.Minute, Thinking: 3 * time.Minute, ToolInput: 15 * time.Minute, Background: 15 * time.Minute, Linger: 5 * time.Second,
	PartialMessages: true}

func agentCall(ids ...string) stream.Event {
	ev := stream.Event{Type: "assistant"}
	for _, id := range ids {
		ev.ToolUses = append(ev.ToolUses, stream.ToolUse{ID: id, Name: "Agent"})
	}
	return ev
}

func fgTask(task, call string) stream.Event {
	return stream.Event{Type: "system", Subtype: "task_started", TaskID: task, ToolUseID: call, TaskType: "local_agent", Description: "agent " + task}
}

func of(call string, ev stream.Event) stream.Event { ev.ParentToolUseID = call; return ev }

// R1. 2.1.197 (or 2.1.332 with run_in_background false): the main agent
// runs two sub-agents in parallel, inside their calls. The first returns;
// the second runs a 4-minute Bash call. No request is out (the main agent
// still waits on the second call), so nothing should be judged at
// first_byte_timeout.
func TestReviewParallelForegroundAgents(t *testing.T) {
	s := time.Second
	runCase(t, machineCase{lim: defaults46, final: StopExited, steps: []step{
		{at: 0, in: line(lInit)},
		{at: 0, in: line(lRequesting)},
		{at: 1 * s, in: line(lMsgStart)},
		{at: 1 * s, in: line(agentCall("toolu_A", "toolu_B"))},
		{at: 1 * s, in: line(fgTask("a", "toolu_A"))},
		{at: 1 * s, in: line(fgTask("b", "toolu_B"))},
		{at: 1 * s, in: line(lBlockStop)},
		{at: 1 * s, in: line(of("toolu_A", stream.Event{Type: "user", Texts: []string{"prompt A"}}))},
		{at: 1 * s, in: line(of("toolu_B", stream.Event{Type: "user", Texts: []string{"prompt B"}}))},
		{at: 1 * s, in: line(lMsgDelta)},
		{at: 1 * s, in: line(lMsgStop)},
		// B starts a long Bash call.
		{at: 10 * s, in: line(of("toolu_B", stream.Event{Type: "assistant", ToolUses: []stream.ToolUse{{ID: "toolu_bash", Name: "Bash"}}}))},
		// A is done: its notification, then its call's result at the top level.
		{at: 20 * s, in: line(of("toolu_A", stream.Event{Type: "assistant", Texts: []string{"A done"}}))},
		{at: 20 * s, in: line(stream.Event{Type: "system", Subtype: "task_notification", TaskID: "a", ToolUseID: "toolu_A", Status: "completed"})},
		{at: 20 * s, in: line(stream.Event{Type: "user", ToolResults: []string{"toolu_A"}})},
		// B's Bash call still runs (4 minutes in all): nothing is silent past its allowance.
		{at: 66 * s, in: wakeUp},
		{at: 250 * s, in: line(of("toolu_B", stream.Event{Type: "user", ToolResults: []string{"toolu_bash"}}))},
		{at: 251 * s, in: line(stream.Event{Type: "system", Subtype: "task_notification", TaskID: "b", ToolUseID: "toolu_B", Status: "completed"})},
		{at: 251 * s, in: line(stream.Event{Type: "user", ToolResults: []string{"toolu_B"}})},
		{at: 252 * s, in: line(okResult)},
		{at: 252 * s, in: streamEnd, stop: StopExited},
	}})
}

// 2.1.197 with run_in_background true (testdata/transcripts/subagents/
// 2.1.197/subagent-background.timed, line for line up to the agent's Bash
// call): its task_started has no is_backgrounded, and its call's
// "launched" result comes while its task runs on: the agent was moved
// beside its caller, and goes on, a background task, judged on its own
// lines. Its 4-minute Bash call has tool_timeout; the main agent, its turn
// over, waits on it.
func TestABackgroundAgentWithoutItsFlagRunsALongBash(t *testing.T) {
	s := time.Second
	ms := time.Millisecond
	task := stream.Event{Type: "system", Subtype: "task_started", TaskID: "a4b8", ToolUseID: "toolu_1", TaskType: "local_agent", Description: "sub task"}
	runCase(t, machineCase{lim: defaults46, final: StopExited, steps: []step{
		{at: 3346 * ms, in: line(lInit)},
		{at: 3347 * ms, in: line(lRequesting)},
		{at: 3521 * ms, in: line(lMsgStart)},
		{at: 3546 * ms, in: line(agentCall("toolu_1"))},
		{at: 3596 * ms, in: line(task)},
		{at: 3596 * ms, in: line(lBlockStop)},
		{at: 3596 * ms, in: line(stream.Event{Type: "user", ToolResults: []string{"toolu_1"}}), running: 1, started: 1}, // "Async agent launched"
		{at: 3596 * ms, in: line(lMsgDelta), running: 1},
		{at: 3596 * ms, in: line(lMsgStop), running: 1},
		{at: 3624 * ms, in: line(lRequesting), running: 1},
		{at: 3646 * ms, in: line(lMsgStart), running: 1},
		{at: 3646 * ms, in: line(lMainText), running: 1},
		{at: 3646 * ms, in: line(lBlockStop), running: 1},
		{at: 3646 * ms, in: line(lMsgDelta), running: 1},
		{at: 3646 * ms, in: line(lMsgStop), running: 1},
		{at: 3671 * ms, in: line(of("toolu_1", stream.Event{Type: "assistant", ToolUses: []stream.ToolUse{{ID: "toolu_2", Name: "Bash"}}})), running: 1},
		{at: 3700 * ms, in: line(stream.Event{Type: "system", Subtype: "task_progress", TaskID: "a4b8", ToolUseID: "toolu_1"}), running: 1},
		// The Bash call runs 4 minutes (tool_timeout is 15).
		{at: 3*time.Minute + 4*s, in: wakeUp, running: 1},
		{at: 4*time.Minute + 3*s, in: line(of("toolu_1", stream.Event{Type: "user", ToolResults: []string{"toolu_2"}})), running: 1},
		{at: 4*time.Minute + 4*s, in: line(of("toolu_1", stream.Event{Type: "assistant", Texts: []string{"done"}})), running: 1},
		{at: 4*time.Minute + 4*s, in: line(stream.Event{Type: "system", Subtype: "task_notification", TaskID: "a4b8", ToolUseID: "toolu_1", Status: "completed"}), finished: 1},
		{at: 4*time.Minute + 5*s, in: line(okResult)},
		{at: 4*time.Minute + 5*s, in: streamEnd, stop: StopExited},
	}})
}

// A dead main agent (mid-text) cannot be kept alive by a hostile CLI that
// each turn ends a line of no agent's work (a late line of an ended
// sub-agent) and begins the next without ending it: such a line moves no
// deadline and leaves the catch-up count as it was, so it is a hang one
// catch-up later (§D34).
func TestEndedAgentLinesAndAPartialLineKeepNoDeadMainAlive(t *testing.T) {
	st := New(defaults46, t0)
	var off int64
	feed := func(ev stream.Event, at time.Time) {
		ev.Offset, ev.Bytes = off, 99
		off += 100
		if eff := st.Step(Input{Kind: Line, Event: ev}, at); eff.Stop {
			t.Fatalf("stopped on a line at %v", at.Sub(t0))
		}
	}
	// A sub-agent runs inside its call and ends; the main agent goes on
	// and dies mid-text.
	now := t0
	for _, ev := range []stream.Event{lInit, lRequesting, lMsgStart, agentCall("toolu_1"), fgTask("a1", "toolu_1"),
		of("toolu_1", stream.Event{Type: "user", Texts: []string{"p"}}), lBlockStop, lMsgStop,
		stream.Event{Type: "system", Subtype: "task_notification", TaskID: "a1", ToolUseID: "toolu_1", Status: "completed"},
		stream.Event{Type: "user", ToolResults: []string{"toolu_1"}}, lRequesting, lMsgStart, lTextStart, lTextDelta} {
		feed(ev, now)
	}
	due := now.Add(time.Minute)
	if !st.Wake().Equal(due) {
		t.Fatalf("wake %v, want text_timeout", st.Wake().Sub(t0))
	}
	now = due
	for i := 0; i < 600; i++ { // ten minutes of it
		// At the wake, half a line is written past what was read.
		eff := st.Step(Input{Kind: Wake, Written: off + 50, Consumed: off + 50}, now)
		if eff.Stop {
			t.Logf("hang called after %d rounds, %v after text_timeout (good)", i, now.Sub(due))
			return
		}
		// The hostile CLI ends that line (a late line of the ended agent)
		// and writes half of the next.
		now = now.Add(900 * time.Millisecond)
		feed(of("toolu_1", stream.Event{Type: "assistant", Texts: []string{"late"}}), now)
		if w := st.Wake(); w.After(now) {
			now = w
		}
	}
	t.Errorf("a dead text stream still alive %v past text_timeout (want a hang one catch-up later)", now.Sub(due))
}

// Lines about work that does not exist (a task_progress for an agent
// malarun does not follow, a hook_progress for no running hook, a
// task_updated of no task) are no one's progress: one every 50 s keeps no
// dead text stream alive (§D34).
func TestProgressOfNothingKeepsNoDeadMainAlive(t *testing.T) {
	for name, ev := range map[string]stream.Event{
		"task_progress of no agent": {Type: "system", Subtype: "task_progress", TaskID: "zz", ToolUseID: "toolu_zz"},
		"hook_progress of no hook":  {Type: "system", Subtype: "hook_progress", HookID: "nope"},
		"task_updated of no task":   {Type: "system", Subtype: "task_updated", TaskID: "zz", Status: "running"},
	} {
		t.Run(name, func(t *testing.T) {
			st := New(defaults46, t0)
			for _, l := range []stream.Event{lInit, lRequesting, lMsgStart, lTextStart, lTextDelta} {
				st.Step(line(l), t0)
			}
			now := t0
			for i := 0; i < 60; i++ {
				next := now.Add(50 * time.Second)
				if w := st.Wake(); !w.After(next) {
					if eff := st.Step(wakeUp, w); eff.Stop {
						t.Logf("found at %v", w.Sub(t0))
						return
					}
				}
				now = next
				st.Step(line(ev), now)
			}
			t.Errorf("the main agent dead mid-text since 0 is still alive at %v", now.Sub(t0))
		})
	}
}

// A signal during a hang's grace, after a success that no longer stands
// (a turn began after it): the user asked malarun to stop, so the attempt
// ends interrupted.
func TestASignalAfterAHangWithAnOutlivedSuccess(t *testing.T) {
	st := New(defaults46, t0)
	for _, ev := range []stream.Event{lInit, lRequesting, lMsgStart, lMainText, lMsgStop, okResult, lInit, lRequesting, lMsgStart, lTextStart, lTextDelta} {
		st.Step(line(ev), t0)
	}
	if eff := st.Step(wakeUp, t0.Add(time.Minute)); !eff.Stop || st.StopReason() != StopHang {
		t.Fatalf("no hang: %v", st.StopReason())
	}
	st.Step(interrupt, t0.Add(time.Minute+time.Second))
	if st.ResultStands() {
		t.Fatal("the outlived success stands")
	}
	if got := st.FinalStop(); got != StopInterrupted {
		t.Errorf("final stop %v, want interrupted (the success it relied on no longer stands)", got)
	}
}

// A stray parent_tool_use_id (no call of that id, no task) makes no
// phantom sub-agent that would hide the main agent (§D33).
func TestAPhantomSubAgentHidesNothing(t *testing.T) {
	st := New(defaults46, t0)
	for _, ev := range []stream.Event{lInit, lRequesting, lMsgStart, lMainText, lBlockStop, lMsgDelta, lMsgStop} {
		st.Step(line(ev), t0)
	}
	if got := st.Wake().Sub(t0); got != 3*time.Minute {
		t.Fatalf("main between requests: wake %v, want idle_timeout", got)
	}
	st.Step(line(of("toolu_nowhere", stream.Event{Type: "user", Texts: []string{"?"}})), t0.Add(time.Second))
	if got := st.Wake().Sub(t0); got != 3*time.Minute {
		t.Errorf("after one line with a parent_tool_use_id no call has: wake %v, want still idle_timeout's 3m", got)
	}
}

// A hostile CLI naming n background agents (task_started local_agent,
// is_backgrounded): liveness follows maxSubagents, the tasks maxTasks, so
// a line costs the same at n and 4n (ns per line; a ratio near 1).
func BenchmarkManyBackgroundAgents(b *testing.B) {
	for _, n := range []int{2000, 8000} {
		lines := make([]stream.Event, 0, 2*n)
		for i := range n {
			id := "toolu_" + itoa(i)
			lines = append(lines, stream.Event{Type: "assistant", ToolUses: []stream.ToolUse{{ID: id, Name: "Agent"}}},
				stream.Event{Type: "system", Subtype: "task_started", TaskID: "t" + itoa(i), ToolUseID: id, TaskType: "local_agent", Backgrounded: true})
		}
		b.Run(itoa(n), func(b *testing.B) {
			for b.Loop() {
				st := New(defaults46, t0)
				for i := range lines {
					st.Step(Input{Kind: Line, Event: lines[i]}, t0)
					_ = TaskLabels(st.Running()) // what the supervisor's emitLine does per line with an observer
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(lines)), "ns/line")
		})
	}
}

func itoa(i int) string {
	const d = "0123456789"
	if i < 10 {
		return d[i : i+1]
	}
	return itoa(i/10) + d[i%10:i%10+1]
}

// A compaction: the CLI prints status "compacting", then nothing until
// compact_boundary while it writes its summary (a whole reply it does not
// print). It is no first byte: idle_timeout, and the first byte's
// allowance for reading the conversation (§D34).
func TestACompactionIsNoFirstByte(t *testing.T) {
	st := New(defaults46, t0)
	usage := stream.Event{Type: "assistant", HasUsage: true, Usage: stream.Tokens{CacheReadInputTokens: 167_000}, Texts: []string{"x"}}
	for _, ev := range []stream.Event{lInit, lRequesting, lMsgStart, usage, lMsgStop,
		{Type: "system", Subtype: "status", Status: "compacting"}} {
		st.Step(line(ev), t0)
	}
	d, allowed, _ := st.Doing()
	t.Logf("compacting: %q allowed %v", d.Label(), allowed)
	if allowed < defaults46.Idle {
		t.Errorf("a compaction (a whole summary, no line until it ends) is allowed %v, less than idle_timeout's %v it had before issue 46", allowed, defaults46.Idle)
	}
}

// A usage the decoder accepts (at most 1e9 per field) cannot make the
// first byte's allowance endless: a request carries at most the window
// (maxFirstByteTokens when unknown), 7m30s.
func TestTheFirstByteHasACeiling(t *testing.T) {
	st := New(defaults46, t0)
	usage := stream.Event{Type: "assistant", HasUsage: true, Usage: stream.Tokens{InputTokens: 1e9, CacheReadInputTokens: 1e9},
		ToolUses: []stream.ToolUse{{ID: "b", Name: "Bash"}}}
	st.Step(line(lInit), t0)
	st.Step(line(usage), t0)
	st.Step(line(toolResult("b")), t0)
	if got := st.Wake().Sub(t0); got > time.Hour {
		t.Errorf("a request out is allowed %v for its first byte (the window is 1M tokens at most: 7m30s)", got)
	}
}

// The cost of a main-agent line with k sub-agents running beside it
// (background, each judged): schedule walks them, naming none.
func BenchmarkLineWithSubAgents(b *testing.B) {
	for _, k := range []int{0, 8, 64} {
		b.Run(itoa(k), func(b *testing.B) {
			st := New(defaults46, t0)
			st.Step(line(lInit), t0)
			for i := range k {
				id := "toolu_" + itoa(i)
				st.Step(line(agentCall(id)), t0)
				st.Step(line(stream.Event{Type: "system", Subtype: "task_started", TaskID: "t" + itoa(i), ToolUseID: id, TaskType: "local_agent", Backgrounded: true, Description: "agent"}), t0)
				st.Step(line(stream.Event{Type: "user", ToolResults: []string{id}}), t0)
			}
			st.Step(line(lMsgStart), t0)
			st.Step(line(lTextStart), t0)
			b.ReportAllocs()
			for b.Loop() {
				st.Step(line(lTextDelta), t0)
			}
		})
	}
}

// A malarun paused past session_timeout (Ctrl-Z: claude, in its own
// process group, runs on, succeeds and exits) wakes with the success
// written but unread. The deadline stops the attempt (a wall-clock
// promise), but what was written before the stop is no last word: the
// success, read after the stop, decides (§D35).
func TestASuccessWrittenBeforeTheStopDecides(t *testing.T) {
	lim := defaults46
	lim.Deadline = t0.Add(time.Hour)
	st := New(lim, t0)
	log := NewLog("s1")
	var off int64
	feed := func(ev stream.Event, at time.Time) {
		ev.Offset, ev.Bytes = off, 99
		off += 100
		log.Observe(ev)
		st.Step(line(ev), at)
	}
	for _, ev := range []stream.Event{lInit, lRequesting, lMsgStart} {
		feed(ev, t0)
	}
	// Paused from t0 to t0+2h; meanwhile claude wrote its reply and its
	// success and exited: 200 bytes not read yet.
	if eff := st.Step(Input{Kind: Wake, Written: off + 200, Consumed: off + 200}, t0.Add(2*time.Hour)); !eff.Stop || st.StopReason() != StopSessionTimeout {
		t.Fatalf("no stop at the session deadline: %v", st.StopReason())
	}
	log.Stopped(st.StopAt())
	feed(lMainText, t0.Add(2*time.Hour))
	feed(okResult, t0.Add(2*time.Hour))
	st.Step(streamEnd, t0.Add(2*time.Hour))
	if k, why := Classify(Ended{Machine: st, Log: log, Exit: Exit{Code: 0}}); k != Success {
		t.Errorf("ended %v (%s): the success was written before the stop", k, why)
	}
	// A line that ends past the stop is a last word again.
	feed(okResult, t0.Add(2*time.Hour))
	if !log.Results[len(log.Results)-1].AfterStop || log.Results[0].AfterStop {
		t.Errorf("results %+v", log.Results)
	}
}

// A task_started for an agent whose call malarun never saw (the CLI
// printed it first, or not at all), then a top-level result naming that
// call: the agent runs on beside the main agent, which works again. It
// once took the missing caller for granted and panicked (found by
// FuzzMachine in CI).
func TestAnAgentWhoseCallWasNeverSeenReturns(t *testing.T) {
	st := New(defaults46, t0)
	st.Step(line(lInit), t0)
	st.Step(line(fgTask("a9", "toolu_unseen")), t0.Add(time.Second))
	st.Step(line(stream.Event{Type: "user", ToolResults: []string{"toolu_unseen"}}), t0.Add(2*time.Second))
	if st.StopReason() != StopNone {
		t.Fatalf("stopped: %v", st.StopReason())
	}
	if w := st.Wake(); w.IsZero() || !w.After(t0.Add(2*time.Second)) {
		t.Fatalf("wake %v: nothing bounds the run after the agent moved beside", w)
	}
	if got := TaskLabels(st.Running()); len(got) != 1 {
		t.Errorf("running tasks %q, want the agent that runs on beside the main agent", got)
	}
}
