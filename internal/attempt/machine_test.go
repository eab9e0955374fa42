package attempt

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/stream"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// Lines, as the stream decoder gives them.
var (
	initLine   = stream.Event{Type: "system", Subtype: "init"}
	statusLine = stream.Event{Type: "system", Subtype: "status", Status: "requesting"}
	textLine   = stream.Event{Type: "assistant", Texts: []string{"done"}}
	okResult   = stream.Event{Type: "result", Subtype: "success"}
	errResult  = stream.Event{Type: "result", Subtype: "error_during_execution", IsError: true}
	authRetry  = stream.Event{Type: "system", Subtype: "api_retry", ErrorStatus: 401, Error: "authentication_failed"}
	shutdown   = stream.Event{Type: "system", Subtype: "worker_shutting_down"}
)

func toolCall(id, name string) stream.Event {
	return stream.Event{Type: "assistant", ToolUses: []stream.ToolUse{{ID: id, Name: name, Input: `{"command":"make"}`}}}
}

func bgCall(id, cmd string) stream.Event {
	return stream.Event{Type: "assistant", ToolUses: []stream.ToolUse{{ID: id, Name: "Bash", Input: `{"command":"` + cmd + `"}`, Background: true}}}
}

func toolResult(id string) stream.Event { return stream.Event{Type: "user", ToolResults: []string{id}} }

func taskStarted(task, toolUse string) stream.Event {
	return stream.Event{Type: "system", Subtype: "task_started", TaskID: task, ToolUseID: toolUse, Backgrounded: true,
		TaskType: "local_bash", Description: "Run the build"}
}

func taskNotification(task, status string) stream.Event {
	return stream.Event{Type: "system", Subtype: "task_notification", TaskID: task, Status: status, OutputFile: "/tmp/" + task + ".output"}
}

func snapshot(ids ...string) stream.Event {
	ev := stream.Event{Type: "system", Subtype: "background_tasks_changed", HasTasks: true}
	for _, id := range ids {
		ev.Tasks = append(ev.Tasks, stream.Task{ID: id, Type: "local_bash", Description: "task " + id})
	}
	return ev
}

var limits = Limits{Idle: 10 * time.Second, Tool: 60 * time.Second, Background: 20 * time.Minute, Linger: 5 * time.Second}

// step is one input at an offset from t0, and what must follow.
type step struct {
	at       time.Duration
	in       Input
	stop     StopReason // the stop this step must order (None: no stop)
	wake     time.Duration
	noWake   bool
	running  int // background tasks running after the step
	started  int
	finished int
}

func line(ev stream.Event) Input { return Input{Kind: Line, Event: ev} }

var (
	streamEnd = Input{Kind: StreamEnd}
	wakeUp    = Input{Kind: Wake}
	interrupt = Input{Kind: Interrupt}
)

type machineCase struct {
	name   string
	lim    Limits
	steps  []step
	final  StopReason
	cut    []string // tool ids cut off
	cutTsk []string // task ids cut off
}

func runCase(t *testing.T, c machineCase) *State {
	t.Helper()
	lim := c.lim
	if lim == (Limits{}) {
		lim = limits
	}
	s := New(lim, t0)
	for i, st := range c.steps {
		before := s.StopReason()
		eff := s.Step(st.in, t0.Add(st.at))
		switch {
		case st.stop != StopNone && (!eff.Stop || s.StopReason() != st.stop):
			t.Fatalf("step %d (%+v): stop=%v ending %v, want a stop for %v", i, st.in.Kind, eff.Stop, s.StopReason(), st.stop)
		case st.stop == StopNone && eff.Stop:
			t.Fatalf("step %d: unexpected stop for %v", i, s.StopReason())
		case before != StopNone && s.StopReason() != before:
			t.Fatalf("step %d: the ending changed from %v to %v", i, before, s.StopReason())
		}
		if st.stop == StopNone && s.StopReason() == StopNone {
			want := t0.Add(st.wake)
			if st.noWake {
				want = time.Time{}
			}
			if got := s.Wake(); st.wake != 0 || st.noWake {
				if !got.Equal(want) {
					t.Fatalf("step %d: wake at %v, want %v", i, got.Sub(t0), want.Sub(t0))
				}
			}
		}
		if len(s.Running()) != st.running || len(eff.Started) != st.started || len(eff.Finished) != st.finished {
			t.Fatalf("step %d: running %d started %d finished %d, want %d %d %d",
				i, len(s.Running()), len(eff.Started), len(eff.Finished), st.running, st.started, st.finished)
		}
	}
	if got := s.FinalStop(); got != c.final {
		t.Fatalf("final %v, want %v", got, c.final)
	}
	tools, tasks := s.CutOff()
	if got := toolIDs(tools); !reflect.DeepEqual(got, c.cut) {
		t.Errorf("cut-off tools %v, want %v", got, c.cut)
	}
	if got := taskIDs(tasks); !reflect.DeepEqual(got, c.cutTsk) {
		t.Errorf("cut-off tasks %v, want %v", got, c.cutTsk)
	}
	return s
}

func toolIDs(tus []stream.ToolUse) []string {
	var ids []string
	for _, tu := range tus {
		ids = append(ids, tu.ID)
	}
	return ids
}

func taskIDs(ts []stream.Task) []string {
	var ids []string
	for _, tk := range ts {
		ids = append(ids, tk.ID)
	}
	return ids
}

// TestDecisionsBeforeBackgroundTasks records the decisions runAttempt made
// before the machine existed: they must not change.
func TestDecisionsBeforeBackgroundTasks(t *testing.T) {
	cases := []machineCase{
		{name: "a normal exit is not a kill", final: StopExited, steps: []step{
			{at: 1 * time.Second, in: line(initLine), wake: 11 * time.Second},
			{at: 2 * time.Second, in: line(textLine), wake: 12 * time.Second},
			{at: 3 * time.Second, in: line(okResult), wake: 8 * time.Second},
			{at: 4 * time.Second, in: streamEnd, stop: StopExited},
		}},
		{name: "silence is a hang at idle_timeout", final: StopHang, steps: []step{
			{at: 1 * time.Second, in: line(initLine), wake: 11 * time.Second},
			{at: 10 * time.Second, in: wakeUp, wake: 11 * time.Second},
			{at: 11 * time.Second, in: wakeUp, stop: StopHang},
			{at: 12 * time.Second, in: streamEnd},
		}},
		{name: "a running tool gets tool_timeout, and is cut off", final: StopHang, cut: []string{"t1"}, steps: []step{
			{at: 1 * time.Second, in: line(toolCall("t1", "Bash")), wake: 61 * time.Second},
			{at: 30 * time.Second, in: wakeUp},
			{at: 61 * time.Second, in: wakeUp, stop: StopHang},
		}},
		{name: "the auth check comes before the pressure check", final: StopAuth, steps: []step{
			{at: 1 * time.Second, in: Input{Kind: Line, Event: authRetry, Pressure: true}, stop: StopAuth},
		}},
		{name: "a safe point stops for the checkpoint", final: StopPressure, steps: []step{
			{at: 1 * time.Second, in: Input{Kind: Line, Event: toolCall("t1", "Read"), Pressure: true}},
			{at: 2 * time.Second, in: line(toolResult("t1")), stop: StopPressure},
		}},
		{name: "no safe point in a checkpoint attempt", lim: Limits{Idle: 10 * time.Second, Tool: 60 * time.Second, Linger: 5 * time.Second, Checkpoint: true},
			final: StopExited, steps: []step{
				{at: 1 * time.Second, in: Input{Kind: Line, Event: toolCall("t1", "Read"), Pressure: true}},
				{at: 2 * time.Second, in: line(toolResult("t1"))},
				{at: 3 * time.Second, in: streamEnd, stop: StopExited},
			}},
		{name: "after a text-only message the turn ends: no stop", final: StopExited, steps: []step{
			{at: 1 * time.Second, in: Input{Kind: Line, Event: textLine, Pressure: true}},
			{at: 2 * time.Second, in: streamEnd, stop: StopExited},
		}},
		{name: "alive past result_exit_timeout after the result", final: StopLingered, steps: []step{
			{at: 1 * time.Second, in: line(okResult), wake: 6 * time.Second},
			{at: 6 * time.Second, in: wakeUp, stop: StopLingered},
			{at: 7 * time.Second, in: interrupt}, // a late signal after success changes nothing
		}},
		{name: "a late signal after a failure is an interruption", final: StopInterrupted, steps: []step{
			{at: 1 * time.Second, in: line(initLine)},
			{at: 11 * time.Second, in: wakeUp, stop: StopHang},
			{at: 12 * time.Second, in: interrupt},
		}},
		{name: "a signal stops with shutdown_grace", final: StopInterrupted, cut: []string{"t1"}, steps: []step{
			{at: 1 * time.Second, in: line(toolCall("t1", "Bash"))},
			{at: 2 * time.Second, in: interrupt, stop: StopInterrupted},
			{at: 3 * time.Second, in: streamEnd},
		}},
		{name: "session_timeout bounds everything", lim: Limits{Idle: time.Hour, Tool: time.Hour, Linger: time.Second, Deadline: t0.Add(30 * time.Second)},
			final: StopSessionTimeout, steps: []step{
				{at: 1 * time.Second, in: line(initLine), wake: 30 * time.Second},
				{at: 30 * time.Second, in: wakeUp, stop: StopSessionTimeout},
			}},
		{name: "an api_retry adds its delay", final: StopExited, steps: []step{
			{at: 1 * time.Second, in: line(stream.Event{Type: "system", Subtype: "api_retry", ErrorStatus: 529, RetryDelayMS: 30000}), wake: 41 * time.Second},
			{at: 20 * time.Second, in: wakeUp},
			{at: 30 * time.Second, in: streamEnd, stop: StopExited},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runCase(t, c) })
	}
	s := runCase(t, cases[2])
	if limit, tools := s.Hang(); limit != 60*time.Second || !reflect.DeepEqual(tools, []string{"Bash"}) {
		t.Errorf("hang %v %v, want 1m0s [Bash]", limit, tools)
	}
	if s := New(limits, t0); s.Step(interrupt, t0).Grace != ShutdownGrace || s.Step(interrupt, t0).Stop {
		t.Error("an interrupt must stop once, with shutdown_grace")
	}
}

// The sequence of background-task-2.1.330.jsonl (docs/design.md §F17).
func TestBackgroundTaskOutlivesTheFirstResult(t *testing.T) {
	runCase(t, machineCase{final: StopExited, steps: []step{
		{at: 0, in: line(initLine)},
		{at: 1 * time.Second, in: line(bgCall("toolu_1", "python3 build.py"))},
		{at: 1 * time.Second, in: line(snapshot("b1")), running: 1, started: 1},
		{at: 1 * time.Second, in: line(taskStarted("b1", "toolu_1")), running: 1},
		{at: 1 * time.Second, in: line(toolResult("toolu_1")), running: 1},
		{at: 2 * time.Second, in: line(textLine), running: 1},
		// The first result: the CLI waits for its task, so no linger.
		{at: 2 * time.Second, in: line(okResult), running: 1, wake: 2*time.Second + 20*time.Minute},
		{at: 7 * time.Second, in: wakeUp, running: 1},
		{at: 12 * time.Second, in: line(stream.Event{Type: "system", Subtype: "task_updated", TaskID: "b1", Status: "completed"}), finished: 1, wake: 17 * time.Second},
		{at: 12 * time.Second, in: line(taskNotification("b1", "completed")), wake: 17 * time.Second},
		{at: 12 * time.Second, in: line(snapshot()), wake: 17 * time.Second},
		// A new turn: the model's timers again.
		{at: 12 * time.Second, in: line(initLine), wake: 22 * time.Second},
		{at: 12 * time.Second, in: line(statusLine)},
		{at: 13 * time.Second, in: line(textLine)},
		{at: 13 * time.Second, in: line(stream.Event{Type: "result", Subtype: "success", OriginKind: "task-notification"}), wake: 18 * time.Second},
		{at: 14 * time.Second, in: streamEnd, stop: StopExited},
	}})
}

func TestBackgroundTimeoutCutsTheTaskOff(t *testing.T) {
	s := runCase(t, machineCase{final: StopBackgroundTimeout, cutTsk: []string{"b1"}, steps: []step{
		{at: 1 * time.Second, in: line(bgCall("toolu_1", "python3 slow.py"))},
		{at: 1 * time.Second, in: line(taskStarted("b1", "toolu_1")), running: 1, started: 1},
		{at: 1 * time.Second, in: line(toolResult("toolu_1")), running: 1},
		{at: 2 * time.Second, in: line(okResult), running: 1, wake: 2*time.Second + 20*time.Minute},
		{at: 2*time.Second + 20*time.Minute, in: wakeUp, running: 1, stop: StopBackgroundTimeout},
		{at: 2*time.Second + 20*time.Minute, in: streamEnd, running: 1},
	}})
	_, tasks := s.CutOff()
	want := stream.Task{ID: "b1", Type: "local_bash", Description: "Run the build", Command: `{"command":"python3 slow.py"}`, ToolUseID: "toolu_1"}
	if tasks[0] != want {
		t.Errorf("cut-off task %+v, want %+v", tasks[0], want)
	}
}

func TestTasks(t *testing.T) {
	cases := []machineCase{
		{name: "a later line that announces no work leaves the linger where it was", final: StopLingered, steps: []step{
			{at: 1 * time.Second, in: line(okResult), wake: 6 * time.Second},
			{at: 4 * time.Second, in: line(shutdown), wake: 6 * time.Second},
			{at: 6 * time.Second, in: wakeUp, stop: StopLingered},
		}},
		{name: "a foreground task is a tool call, not a background task", final: StopLingered, steps: []step{
			{at: 1 * time.Second, in: line(toolCall("t1", "Bash"))},
			{at: 1 * time.Second, in: line(stream.Event{Type: "system", Subtype: "task_started", TaskID: "f1", ToolUseID: "t1"})},
			{at: 2 * time.Second, in: line(toolResult("t1"))},
			{at: 3 * time.Second, in: line(okResult), wake: 8 * time.Second},
			{at: 8 * time.Second, in: wakeUp, stop: StopLingered},
		}},
		{name: "the snapshot is authoritative; an ended task never comes back", final: StopLingered, steps: []step{
			{at: 1 * time.Second, in: line(snapshot("a", "b")), running: 2, started: 2},
			{at: 1 * time.Second, in: line(taskNotification("a", "stopped")), running: 1, finished: 1},
			{at: 1 * time.Second, in: line(taskNotification("a", "stopped")), running: 1}, // stopped can come twice
			{at: 2 * time.Second, in: line(snapshot("a", "b")), running: 1},
			{at: 3 * time.Second, in: line(snapshot()), finished: 1},
			{at: 4 * time.Second, in: line(okResult), wake: 9 * time.Second},
			{at: 9 * time.Second, in: wakeUp, stop: StopLingered},
		}},
		{name: "task_updated ends a task only with a terminal status", final: StopLingered, steps: []step{
			{at: 1 * time.Second, in: line(taskStarted("b1", "x")), running: 1, started: 1},
			{at: 2 * time.Second, in: line(stream.Event{Type: "system", Subtype: "task_updated", TaskID: "b1", Status: "running"}), running: 1},
			{at: 3 * time.Second, in: line(okResult), running: 1},
			{at: 9 * time.Second, in: wakeUp, running: 1},
			{at: 10 * time.Second, in: line(stream.Event{Type: "system", Subtype: "task_updated", TaskID: "b1", Status: "failed"}), finished: 1, wake: 15 * time.Second},
			{at: 15 * time.Second, in: wakeUp, stop: StopLingered},
		}},
		{name: "no safe point while a background task runs", final: StopPressure, steps: []step{
			{at: 1 * time.Second, in: Input{Kind: Line, Event: bgCall("t1", "make"), Pressure: true}},
			{at: 1 * time.Second, in: line(taskStarted("b1", "t1")), running: 1, started: 1},
			{at: 1 * time.Second, in: line(toolResult("t1")), running: 1},
			{at: 2 * time.Second, in: line(toolCall("t2", "Read")), running: 1},
			{at: 3 * time.Second, in: line(taskNotification("b1", "completed")), finished: 1},
			{at: 4 * time.Second, in: line(toolResult("t2")), stop: StopPressure},
		}},
		{name: "a crash cuts off the running tasks", final: StopExited, cutTsk: []string{"b1"}, cut: []string{"t2"}, steps: []step{
			{at: 1 * time.Second, in: line(taskStarted("b1", "t1")), running: 1, started: 1},
			{at: 2 * time.Second, in: line(toolCall("t2", "Bash")), running: 1},
			{at: 3 * time.Second, in: streamEnd, stop: StopExited, running: 1},
		}},
		{name: "no background_timeout: only the session deadline bounds the wait", lim: Limits{Idle: time.Second, Tool: time.Second, Linger: time.Second},
			final: StopExited, cutTsk: []string{"b1"}, steps: []step{
				{at: 1 * time.Second, in: line(taskStarted("b1", "t1")), running: 1, started: 1},
				{at: 2 * time.Second, in: line(okResult), running: 1, noWake: true},
				{at: 3 * time.Hour, in: streamEnd, running: 1, stop: StopExited},
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runCase(t, c) })
	}
}

func TestTheLastResultDecides(t *testing.T) {
	s := New(limits, t0)
	s.Step(line(okResult), t0)
	s.Step(line(initLine), t0)
	s.Step(line(errResult), t0)
	s.Step(wakeUp, t0.Add(time.Minute))
	s.Step(interrupt, t0.Add(time.Minute))
	if s.FinalStop() != StopInterrupted {
		t.Errorf("a signal after a later error result: %v, want interrupted", s.FinalStop())
	}
}

func retry429(delay time.Duration) stream.Event {
	return stream.Event{Type: "system", Subtype: "api_retry", ErrorStatus: 429, Error: "rate_limit",
		RetryDelayMS: float64(delay / time.Millisecond)}
}

// TestCLIOwnLimitWait: the CLI's own wait for a 429 (api_retry) is left to
// it while it fits in what is left of limit_wait (or in idle_timeout, the
// ordinary backoff of a passing rate limit); a longer one stops the attempt.
func TestCLIOwnLimitWait(t *testing.T) {
	withBudget := func(left time.Duration) Limits {
		l := limits
		l.LimitWaitLeft = left
		return l
	}
	cases := []machineCase{
		{name: "a short backoff within idle_timeout runs even with limit_wait 0", lim: withBudget(0), final: StopExited, steps: []step{
			{at: 1 * time.Second, in: line(retry429(5 * time.Second)), wake: 16 * time.Second},
			{at: 3 * time.Second, in: streamEnd, stop: StopExited},
		}},
		{name: "a wait beyond limit_wait and idle_timeout stops the attempt", lim: withBudget(time.Minute), final: StopUsageLimit, steps: []step{
			{at: 1 * time.Second, in: line(initLine)},
			{at: 2 * time.Second, in: line(retry429(10 * time.Minute)), stop: StopUsageLimit},
			{at: 3 * time.Second, in: streamEnd},
		}},
		{name: "a long wait within limit_wait is the CLI's to make", lim: withBudget(time.Hour), final: StopHang, steps: []step{
			{at: 1 * time.Second, in: line(retry429(10 * time.Minute)), wake: 1*time.Second + 10*time.Minute + 10*time.Second},
			{at: 1*time.Second + 10*time.Minute + 10*time.Second, in: wakeUp, stop: StopHang},
		}},
		{name: "the CLI's long waits draw on one limit_wait", lim: withBudget(25 * time.Minute), final: StopUsageLimit, steps: []step{
			{at: 1 * time.Second, in: line(retry429(10 * time.Minute)), wake: 1*time.Second + 10*time.Minute + 10*time.Second},
			{at: 10 * time.Minute, in: line(retry429(10 * time.Minute)), wake: 20*time.Minute + 10*time.Second},
			{at: 20 * time.Minute, in: line(retry429(10 * time.Minute)), stop: StopUsageLimit}, // 5m1s left
			{at: 20*time.Minute + time.Second, in: streamEnd},
		}},
		{name: "a sleep the CLI announces again every 30 s counts once", lim: withBudget(2 * time.Minute), final: StopExited, steps: []step{
			{at: 1 * time.Second, in: line(retry429(117 * time.Second)), wake: 128 * time.Second},
			{at: 31 * time.Second, in: line(retry429(87 * time.Second)), wake: 128 * time.Second},
			{at: 61 * time.Second, in: line(retry429(57 * time.Second)), wake: 128 * time.Second},
			{at: 120 * time.Second, in: streamEnd, stop: StopExited},
		}},
		{name: "short backoffs are free", lim: withBudget(0), final: StopExited, steps: []step{
			{at: 1 * time.Second, in: line(retry429(5 * time.Second)), wake: 16 * time.Second},
			{at: 10 * time.Second, in: line(retry429(5 * time.Second)), wake: 25 * time.Second},
			{at: 20 * time.Second, in: line(retry429(5 * time.Second)), wake: 35 * time.Second},
			{at: 25 * time.Second, in: streamEnd, stop: StopExited},
		}},
		{name: "a 529 is not a usage limit", lim: withBudget(0), final: StopExited, steps: []step{
			{at: 1 * time.Second, in: line(stream.Event{Type: "system", Subtype: "api_retry", ErrorStatus: 529, RetryDelayMS: 600000})},
			{at: 2 * time.Second, in: streamEnd, stop: StopExited},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runCase(t, c) })
	}
	s := New(withBudget(time.Minute), t0)
	s.Step(line(retry429(10*time.Minute)), t0.Add(time.Second))
	if got, want := s.Limit().RetryAt, t0.Add(time.Second+10*time.Minute); !got.Equal(want) {
		t.Errorf("retry_at %v, want the end of the CLI's own wait %v", got, want)
	}
	if got := s.CLIWaited(t0.Add(time.Hour)); got != 0 {
		t.Errorf("a wait that was not let run was counted: %v", got)
	}
	s = New(withBudget(time.Hour), t0)
	s.Step(line(retry429(5*time.Second)), t0.Add(time.Second))
	s.Step(line(retry429(10*time.Minute)), t0.Add(10*time.Second))
	s.Step(line(retry429(20*time.Minute)), t0.Add(11*time.Minute))
	if got := s.CLIWaited(t0.Add(time.Hour)); got != 30*time.Minute {
		t.Errorf("CLIWaited %v, want the two long waits (10m, then 20m from 11m: 30m in all) and not the short backoff", got)
	}
	if got := s.CLIWaited(t0.Add(21 * time.Minute)); got != 20*time.Minute {
		t.Errorf("CLIWaited at 21m %v, want 20m: the CLI died 10m before its sleep would have ended", got)
	}

	// A sleep past the session deadline stops the attempt, as malarun's own
	// wait would (exit 75 with the reset, not 124 without one).
	l := withBudget(time.Hour)
	l.Deadline = t0.Add(5 * time.Minute)
	s = New(l, t0)
	if eff := s.Step(line(retry429(10*time.Minute)), t0.Add(time.Second)); !eff.Stop || s.StopReason() != StopUsageLimit {
		t.Errorf("a sleep past the session deadline: stop %v ending %v, want usage-limit", eff.Stop, s.StopReason())
	}
	if !strings.Contains(s.Limit().Reason, "session_timeout") {
		t.Errorf("reason %q does not name session_timeout", s.Limit().Reason)
	}

	// An absurd delay (a float beyond int64) is capped, not wrapped into
	// a negative one that would make the attempt hang at once; for a
	// status that is no usage limit, at maxRetryWait (§D34).
	s = New(withBudget(time.Hour), t0)
	huge := stream.Event{Type: "system", Subtype: "api_retry", ErrorStatus: 529, RetryDelayMS: 1e19}
	if eff := s.Step(line(huge), t0.Add(time.Second)); eff.Stop || !s.Wake().Equal(t0.Add(time.Second+maxRetryWait+s.lim.Idle)) {
		t.Errorf("a 1e19 ms delay: stop %v wake %v, want no stop and maxRetryWait then idle_timeout", eff.Stop, s.Wake())
	}
}

// HangSilence is how long claude was silent when the hang was found: from
// its last line, whatever pushed the deadline (an api_retry's wait) or
// delayed the wake-up; from the start when no line came.
func TestHangSilenceCountsFromTheLastLine(t *testing.T) {
	lim := Limits{Idle: 10 * time.Second, Tool: time.Minute, Linger: time.Second}
	retry := stream.Event{Type: "system", Subtype: "api_retry", ErrorStatus: 529, RetryDelayMS: 30000}
	cases := []struct {
		name  string
		lines []time.Duration // when lines came, from t0
		last  stream.Event
		wake  time.Duration // when the machine woke up and found the hang
		want  time.Duration
	}{
		{"no line at all, found on time (firstLineWait)", nil, stream.Event{}, firstLineWait, firstLineWait},
		{"a line, found 2 s late", []time.Duration{3 * time.Second}, initLine, 15 * time.Second, 12 * time.Second},
		{"an api_retry's wait counts", []time.Duration{time.Second}, retry, 41 * time.Second, 40 * time.Second},
	}
	for _, c := range cases {
		s := New(lim, t0)
		for _, at := range c.lines {
			s.Step(line(c.last), t0.Add(at))
		}
		if eff := s.Step(wakeUp, t0.Add(c.wake)); !eff.Stop || s.StopReason() != StopHang {
			t.Fatalf("%s: no hang at %v", c.name, c.wake)
		}
		if got := s.HangSilence(); got != c.want {
			t.Errorf("%s: silence %v, want %v", c.name, got, c.want)
		}
	}
}

// The CLI is expected to exit once its final result is in and nothing runs
// in the background, and once it is being stopped; a new turn or a task
// takes that back until then.
func TestExpectsExit(t *testing.T) {
	s := New(limits, t0)
	for i, c := range []struct {
		in   Input
		want bool
	}{
		{line(initLine), false},
		{line(okResult), true},
		{line(statusLine), false}, // a new turn
		{line(okResult), true},
		{line(bgCall("t2", "make")), false},
		{line(taskStarted("b1", "t2")), false},
		{line(okResult), false},                           // the task still runs
		{line(taskNotification("b1", "completed")), true}, // until a new turn begins
		{line(textLine), false},
		{wakeUp, true}, // silent past idle_timeout: a hang, being stopped
		{line(okResult), true},
	} {
		s.Step(c.in, t0.Add(time.Duration(i)*time.Minute))
		if got := s.ExpectsExit(); got != c.want {
			t.Errorf("step %d: ExpectsExit %v, want %v", i+1, got, c.want)
		}
	}
}
