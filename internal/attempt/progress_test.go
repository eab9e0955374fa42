package attempt

import (
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/stream"
)

// Lines that say at most that the CLI is alive (docs/design.md §D34).
var (
	lKeepAlive = stream.Event{Type: "keep_alive"}
	lJunk      = stream.Event{Kind: stream.KindMalformed}
	lNewKind   = stream.Event{Type: "hologram_event"}
	lNewSystem = stream.Event{Type: "system", Subtype: "worker_yawned"}
	lRateInfo  = stream.Event{Type: "rate_limit_event", RateLimitStatus: "allowed"}
)

// Only progress moves a deadline: a stream that died mid-text while the
// CLI prints pings, keep-alives, junk or kinds malarun does not know, one
// a second, is a hang at text_timeout all the same.
func TestOnlyProgressMovesTheDeadline(t *testing.T) {
	lim := Limits{Idle: 10 * time.Second, Tool: time.Minute, Text: 5 * time.Second, Linger: time.Second}
	for _, noise := range []stream.Event{lPing, lKeepAlive, lJunk, lNewKind, lNewSystem, lRateInfo} {
		steps := []step{
			{at: 0, in: line(lInit), wake: 10 * time.Second},
			{at: 1 * time.Second, in: line(lMsgStart)},
			{at: 1 * time.Second, in: line(lTextStart)},
			{at: 1 * time.Second, in: line(lTextDelta), wake: 6 * time.Second},
		}
		for i := 2; i <= 5; i++ {
			steps = append(steps, step{at: time.Duration(i) * time.Second, in: line(noise), wake: 6 * time.Second})
		}
		steps = append(steps, step{at: 6 * time.Second, in: wakeUp, stop: StopHang})
		runCase(t, machineCase{name: "noise", lim: lim, final: StopHang, steps: steps})
	}
	for _, work := range []stream.Event{lThinkTokens, lTextDelta, {Type: "system", Subtype: "task_progress", TaskID: "f1"},
		{Type: "system", Subtype: "hook_progress", HookID: "h1"}} {
		if !progress(&work) {
			t.Errorf("%s %s %s is work", work.Type, work.Subtype, work.StreamEventType)
		}
	}
}

// After a result only the CLI's exit or work it announces keeps it alive
// (§D34): a ping after a clean success is neither a new turn nor a hang,
// and no stream of such lines moves the linger.
func TestAfterAResultOnlyAnnouncedWorkKeepsTheCLI(t *testing.T) {
	lim := Limits{Idle: 3 * time.Minute, Tool: 15 * time.Minute, Text: time.Minute, Linger: 3 * time.Second, Background: 15 * time.Minute}
	cases := []machineCase{
		{name: "a ping after the result changes nothing", lim: lim, final: StopLingered, steps: []step{
			{at: 1 * time.Second, in: line(okResult), wake: 4 * time.Second},
			{at: 2 * time.Second, in: line(lPing), wake: 4 * time.Second},
			{at: 4 * time.Second, in: wakeUp, stop: StopLingered},
		}},
		{name: "a line a second of anything but work ends at result_exit_timeout", lim: lim, final: StopLingered, steps: []step{
			{at: 1 * time.Second, in: line(okResult), wake: 4 * time.Second},
			{at: 2 * time.Second, in: line(lKeepAlive), wake: 4 * time.Second},
			{at: 3 * time.Second, in: line(lJunk), wake: 4 * time.Second},
			{at: 3 * time.Second, in: line(lNewKind), wake: 4 * time.Second},
			{at: 3 * time.Second, in: line(lNewSystem), wake: 4 * time.Second},
			{at: 4 * time.Second, in: wakeUp, stop: StopLingered},
		}},
		{name: "a hook after the result is waited for, within tool_timeout", lim: lim, final: StopExited, steps: []step{
			{at: 1 * time.Second, in: line(okResult), wake: 4 * time.Second},
			{at: 2 * time.Second, in: line(hookStarted("h1", "SessionEnd")), wake: 2*time.Second + 15*time.Minute},
			{at: 40 * time.Second, in: line(hookResponse("h1", "SessionEnd", "success", 0)), wake: 43 * time.Second},
			{at: 41 * time.Second, in: streamEnd, stop: StopExited},
		}},
		{name: "a hook after the result is cut at tool_timeout, the result kept", lim: lim, final: StopLingered, steps: []step{
			{at: 1 * time.Second, in: line(okResult), wake: 4 * time.Second},
			{at: 2 * time.Second, in: line(hookStarted("h1", "SessionEnd")), wake: 2*time.Second + 15*time.Minute},
			{at: 2*time.Second + 15*time.Minute, in: wakeUp, stop: StopLingered},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := runCase(t, c)
			if !s.ResultStands() {
				t.Error("the success does not stand")
			}
		})
	}
}

// The dying CLI's last words (§D35): what it prints after malarun decided
// to stop it decides nothing. A success printed after a hang, a
// session_timeout or a signal does not stand; a tool call it starts is cut
// off like one that ran at the stop.
func TestAResultAfterTheStopDecidesNothing(t *testing.T) {
	lim := Limits{Idle: 10 * time.Second, Tool: time.Minute, Linger: time.Second, Deadline: t0.Add(time.Hour)}
	bash := toolCall("t1", "Bash")
	next := toolCall("t2", "Write")
	for _, c := range []struct {
		name string
		stop Input
		at   time.Duration
		want Ending
	}{
		{"after a hang: resumed", wakeUp, time.Minute + time.Second, Hang},
		{"after session_timeout: 124", wakeUp, time.Hour, SessionTimeout},
		{"after a signal: interrupted", interrupt, 5 * time.Second, Interrupted},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := New(lim, t0)
			log := NewLog("s1")
			var off int64
			feed := func(ev stream.Event, at time.Duration) {
				ev.Offset, ev.Bytes = off, 99
				off += 100
				log.Observe(ev)
				eff := s.Step(line(ev), t0.Add(at))
				if eff.Stop {
					log.Stopped(s.StopAt())
				}
			}
			feed(lInit, 0)
			feed(bash, time.Second)
			stop := c.stop
			stop.Written = off // all read
			if eff := s.Step(stop, t0.Add(c.at)); !eff.Stop {
				t.Fatalf("no stop at %v", c.at)
			}
			log.Stopped(s.StopAt())
			// 2.1.197 under load: it kills its tool, sends "Exit code 137"
			// to the model, prints the model's next call and a success.
			feed(toolResult("t1"), c.at+time.Millisecond)
			feed(next, c.at+2*time.Millisecond)
			feed(stream.Event{Type: "assistant", Texts: []string{"All done."}}, c.at+3*time.Millisecond)
			feed(okResult, c.at+4*time.Millisecond)
			s.Step(streamEnd, t0.Add(c.at+5*time.Millisecond))
			ending, reason := Classify(Ended{Machine: s, Log: log, Exit: Exit{Code: 143}})
			if ending != c.want {
				t.Errorf("ended %v (%s), want %v", ending, reason, c.want)
			}
			if s.ResultStands() || log.Succeeded() || s.LateResults() != 1 {
				t.Errorf("stands %v, log succeeded %v, late %d: a late result decided", s.ResultStands(), log.Succeeded(), s.LateResults())
			}
			if got := toolIDs(s.cutTools); strings.Join(got, ",") != "t1,t2" {
				t.Errorf("cut %v, want t1 (running at the stop) and t2 (started after it)", got)
			}
			if log.LastText != "" || !log.Results[0].AfterStop || len(log.ToolCalls) != 2 {
				t.Errorf("last text %q, results %+v, calls %d", log.LastText, log.Results, len(log.ToolCalls))
			}
		})
	}
}

// A success that a later turn outlived does not stand: the turn began and
// never ended, so the work it was doing is not done (§D9's "provisional").
// A background task cut off by malarun's stop does not let it stand either.
func TestASuccessLaterTurnsOutliveDoesNotStand(t *testing.T) {
	lim := Limits{Idle: 10 * time.Second, Tool: time.Minute, Linger: time.Second, Background: time.Hour}
	s := runCase(t, machineCase{name: "a new turn hangs", lim: lim, final: StopHang, steps: []step{
		{at: 0, in: line(bgCall("t1", "make"))},
		{at: 0, in: line(taskStarted("b1", "t1")), running: 1, started: 1},
		{at: 0, in: line(toolResult("t1")), running: 1},
		{at: 1 * time.Second, in: line(okResult), running: 1},
		{at: 5 * time.Second, in: line(taskNotification("b1", "completed")), finished: 1},
		{at: 5 * time.Second, in: line(initLine), wake: 15 * time.Second},
		{at: 15 * time.Second, in: wakeUp, stop: StopHang},
	}})
	if s.ResultStands() {
		t.Error("the first success stands though the notification turn hung")
	}
	if k, _ := Classify(Ended{Machine: s, Log: &Log{Result: &okResult, SawInit: true}}); k != Hang {
		t.Errorf("ended %v, want hang", k)
	}
	s = runCase(t, machineCase{name: "a signal cuts the task", lim: lim, final: StopInterrupted, cutTsk: []string{"b1"}, steps: []step{
		{at: 0, in: line(bgCall("t1", "make"))},
		{at: 0, in: line(taskStarted("b1", "t1")), running: 1, started: 1},
		{at: 0, in: line(toolResult("t1")), running: 1},
		{at: 1 * time.Second, in: line(okResult), running: 1},
		{at: 5 * time.Second, in: interrupt, stop: StopInterrupted, running: 1},
	}})
	if k, _ := Classify(Ended{Machine: s, Log: &Log{Result: &okResult, SawInit: true}}); k != Interrupted {
		t.Errorf("a signal while a task ran after a success: %v, want interrupted", k)
	}
	// The CLI that exits mid-turn: a crash, resumed.
	s = runCase(t, machineCase{name: "exit mid-turn", lim: lim, final: StopExited, steps: []step{
		{at: 1 * time.Second, in: line(okResult)},
		{at: 2 * time.Second, in: line(initLine)},
		{at: 3 * time.Second, in: streamEnd, stop: StopExited},
	}})
	if k, reason := Classify(Ended{Machine: s, Log: &Log{Result: &okResult, SawInit: true}}); k != Crash || !strings.Contains(reason, "began after its last result") {
		t.Errorf("an exit in a turn after the result: %v %q, want a crash", k, reason)
	}
}

// An api_retry for any status but a usage limit allows at most
// maxRetryWait, then idle_timeout, whatever it announces (§D34).
func TestLongRetryAnnouncementsAreBounded(t *testing.T) {
	lim := Limits{Idle: 10 * time.Second, Tool: time.Minute, Linger: time.Second}
	week := stream.Event{Type: "system", Subtype: "api_retry", ErrorStatus: 529, RetryDelayMS: 3e10}
	runCase(t, machineCase{lim: lim, final: StopHang, steps: []step{
		{at: 1 * time.Second, in: line(week), wake: time.Second + maxRetryWait + 10*time.Second},
		{at: time.Second + maxRetryWait + 10*time.Second, in: wakeUp, stop: StopHang},
	}})
}

// A result with turns still queued (queued_turn_count, 2.1.332) is no end:
// the model's timers go on, and a CLI that exits before the queued turn's
// result ends the attempt as a crash, resumed, not as a success.
func TestAResultWithTurnsQueuedIsNoEnd(t *testing.T) {
	lim := Limits{Idle: 10 * time.Second, Tool: time.Minute, Linger: time.Second}
	queued := stream.Event{Type: "result", Subtype: "success", QueuedTurnCount: 1}
	s := runCase(t, machineCase{lim: lim, final: StopExited, steps: []step{
		{at: 1 * time.Second, in: line(queued), wake: 11 * time.Second},
		{at: 2 * time.Second, in: streamEnd, stop: StopExited},
	}})
	if k, why := Classify(Ended{Machine: s, Log: &Log{Result: &queued, SawInit: true}}); k != Crash || !strings.Contains(why, "a turn still queued") {
		t.Errorf("an exit with a turn queued: %v %q, want a crash", k, why)
	}
	runCase(t, machineCase{lim: lim, final: StopLingered, steps: []step{
		{at: 1 * time.Second, in: line(queued), wake: 11 * time.Second},
		{at: 2 * time.Second, in: line(lInit)},
		{at: 3 * time.Second, in: line(textLine)},
		{at: 4 * time.Second, in: line(okResult), wake: 5 * time.Second},
		{at: 5 * time.Second, in: wakeUp, stop: StopLingered},
	}})
}
