package attempt

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/stream"
)

// Lines as the CLI prints them with partial messages (docs/design.md §F32),
// decoded to what the machine reads.
var (
	lInit        = stream.Event{Type: "system", Subtype: "init"}
	lRequesting  = stream.Event{Type: "system", Subtype: "status", Status: "requesting"}
	lMsgStart    = se("message_start")
	lTextStart   = stream.Event{Type: "stream_event", StreamEventType: "content_block_start", StreamBlockType: "text"}
	lThinkStart  = stream.Event{Type: "stream_event", StreamEventType: "content_block_start", StreamBlockType: "thinking"}
	lWriteStart  = stream.Event{Type: "stream_event", StreamEventType: "content_block_start", StreamBlockType: "tool_use", StreamBlockName: "Write"}
	lOddStart    = stream.Event{Type: "stream_event", StreamEventType: "content_block_start", StreamBlockType: "hologram"}
	lTextDelta   = stream.Event{Type: "stream_event", StreamEventType: "content_block_delta", StreamDeltaType: "text_delta"}
	lThinkDelta  = stream.Event{Type: "stream_event", StreamEventType: "content_block_delta", StreamDeltaType: "thinking_delta"}
	lThinkTokens = stream.Event{Type: "system", Subtype: "thinking_tokens"}
	lInputDelta  = stream.Event{Type: "stream_event", StreamEventType: "content_block_delta", StreamDeltaType: "input_json_delta"}
	lBlockStop   = se("content_block_stop")
	lMsgDelta    = se("message_delta")
	lMsgStop     = se("message_stop")
	lPing        = se("ping")
	lWriteCall   = stream.Event{Type: "assistant", ToolUses: []stream.ToolUse{{ID: "w1", Name: "Write"}}}
	lWriteDone   = stream.Event{Type: "user", ToolResults: []string{"w1"}}
	lRetry       = stream.Event{Type: "system", Subtype: "api_retry", RetryDelayMS: 2000, ErrorStatus: 529}
)

func se(kind string) stream.Event { return stream.Event{Type: "stream_event", StreamEventType: kind} }

func sub(ev stream.Event) stream.Event { ev.ParentToolUseID = "toolu_task"; return ev }

// phaseLimits are distinct allowances, so a deadline names its phase.
var phaseLimits = Limits{Idle: 3 * time.Minute, Tool: 15 * time.Minute, Text: time.Minute, Thinking: 4 * time.Minute,
	ToolInput: 10 * time.Minute, Background: time.Hour, Linger: time.Hour}

type phaseStep struct {
	at    time.Duration
	ev    stream.Event
	phase Phase
	what  string
	// deadline is the hang deadline after the line, from t0.
	deadline time.Duration
}

// Every phase and transition, line by line, in fake time: the phase the
// machine is in after each line and the deadline it sets.
func TestPhaseFollowsTheStream(t *testing.T) {
	m, s, th, ti, idle, tool := time.Minute, time.Second, 4*time.Minute, 10*time.Minute, 3*time.Minute, 15*time.Minute
	cases := []struct {
		name  string
		lim   Limits
		steps []phaseStep
	}{
		{"a reply of thinking, text and a tool call", phaseLimits, []phaseStep{
			{1 * s, lInit, PhaseWaiting, "", 1*s + idle},
			{2 * s, lRequesting, PhaseWaiting, "", 2*s + idle},
			{5 * s, lMsgStart, PhaseReplying, "", 5*s + idle},
			{6 * s, lThinkStart, PhaseThinking, "", 6*s + th},
			{7 * s, lThinkTokens, PhaseThinking, "", 7*s + th},
			{8 * s, lThinkDelta, PhaseThinking, "", 8*s + th},
			{9 * s, lBlockStop, PhaseReplying, "", 9*s + idle},
			{10 * s, lTextStart, PhaseText, "", 10*s + m},
			{11 * s, lTextDelta, PhaseText, "", 11*s + m},
			{12 * s, lBlockStop, PhaseReplying, "", 12*s + idle},
			{13 * s, lWriteStart, PhaseToolInput, "Write", 13*s + ti},
			{14 * s, lPing, PhaseToolInput, "Write", 13*s + ti}, // a ping is not progress
			{200 * s, lInputDelta, PhaseToolInput, "Write", 200*s + ti},
			{201 * s, lWriteCall, PhaseTool, "Write", 201*s + tool}, // the assistant line comes before the block's stop
			{202 * s, lBlockStop, PhaseTool, "Write", 202*s + tool},
			{203 * s, lMsgDelta, PhaseTool, "Write", 203*s + tool},
			{204 * s, lMsgStop, PhaseTool, "Write", 204*s + tool},
			{205 * s, lWriteDone, PhaseWaiting, "", 205*s + idle},
			{206 * s, lRetry, PhaseRetry, "", 206*s + idle + 2*s},
			{210 * s, lRequesting, PhaseWaiting, "", 210*s + idle},
		}},
		{"pings move nothing in any phase", phaseLimits, []phaseStep{
			{0, lPing, PhaseStarting, "", max(idle, firstLineWait)},
			{1 * s, lRequesting, PhaseWaiting, "", 1*s + idle},
			{30 * s, lPing, PhaseWaiting, "", 1*s + idle},
			{31 * s, lMsgStart, PhaseReplying, "", 31*s + idle},
			{32 * s, lTextStart, PhaseText, "", 32*s + m},
			{62 * s, lPing, PhaseText, "", 32*s + m},
		}},
		{"a tool call's run is longer than a thinking allowance", phaseLimits, []phaseStep{
			{1 * s, lWriteCall, PhaseTool, "Write", 1*s + tool},
			{2 * s, lThinkStart, PhaseTool, "Write", 2*s + tool},
		}},
		{"a grown tool input outlasts a running tool", Limits{Idle: idle, Tool: tool, ToolInput: ti, Room: Room{PhaseToolInput: 1}}, []phaseStep{
			{1 * s, lWriteCall, PhaseTool, "Write", 1*s + tool},
			{2 * s, lWriteStart, PhaseToolInput, "Write", 2*s + 2*ti},
		}},
		{"a sub-agent's stream is its own: the main agent's phase and deadline stay", phaseLimits, []phaseStep{
			{1 * s, lMsgStart, PhaseReplying, "", 1*s + idle},
			{2 * s, lTextStart, PhaseText, "", 2*s + m},
			{3 * s, sub(lThinkStart), PhaseText, "", 2*s + m},
			{4 * s, sub(lRequesting), PhaseText, "", 2*s + m},
		}},
		{"a delta whose block start was not seen", phaseLimits, []phaseStep{
			{1 * s, lMsgStart, PhaseReplying, "", 1*s + idle},
			{2 * s, lThinkDelta, PhaseThinking, "", 2*s + th},
			{3 * s, lBlockStop, PhaseReplying, "", 3*s + idle},
			{4 * s, lInputDelta, PhaseToolInput, "", 4*s + ti},
		}},
		{"a block of an unknown kind gets the longest streaming allowance", phaseLimits, []phaseStep{
			{1 * s, lOddStart, PhaseBlock, "hologram", 1*s + ti},
			{2 * s, se("content_block_surprise"), PhaseBlock, "hologram", 2*s + ti},
		}},
		{"room doubles the phases that grow, not text", Limits{Idle: idle, Tool: tool, Text: m, Thinking: th, ToolInput: ti,
			Room: Room{PhaseThinking: 2, PhaseText: 1, PhaseWaiting: 1}}, []phaseStep{
			{1 * s, lRequesting, PhaseWaiting, "", 1*s + 2*idle},
			{2 * s, lThinkStart, PhaseThinking, "", 2*s + 4*th},
			{3 * s, lTextStart, PhaseText, "", 3*s + 2*m}, // Room is what the run gave: Grow never gives text any
		}},
		{"unset allowances are idle_timeout's", Limits{Idle: idle, Tool: tool}, []phaseStep{
			{1 * s, lTextStart, PhaseText, "", 1*s + idle},
			{2 * s, lThinkStart, PhaseThinking, "", 2*s + idle},
			{3 * s, lWriteStart, PhaseToolInput, "Write", 3*s + idle},
		}},
		{"hook lines before init keep the start's allowance", phaseLimits, []phaseStep{
			{1 * s, stream.Event{Type: "system", Subtype: "hook_started", HookID: "h", HookName: "SessionStart:startup"}, PhaseTool, "the SessionStart:startup hook", 1*s + tool},
			{2 * s, stream.Event{Type: "system", Subtype: "hook_response", HookID: "h"}, PhaseStarting, "", 2*s + max(idle, firstLineWait)},
			{3 * s, lInit, PhaseWaiting, "", 3*s + idle},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := New(c.lim, t0)
			for i, step := range c.steps {
				if eff := st.Step(Input{Kind: Line, Event: step.ev}, t0.Add(step.at)); eff.Stop {
					t.Fatalf("step %d: stopped (%v)", i, st.StopReason())
				}
				d, _, _ := st.Doing()
				if d.Phase != step.phase || d.What != step.what {
					t.Errorf("step %d (%s %s): phase %v %q, want %v %q", i, step.ev.Type, step.ev.StreamEventType, d.Phase, d.What, step.phase, step.what)
				}
				if got := st.Wake().Sub(t0); got != step.deadline {
					t.Errorf("step %d (%s %s): deadline %v, want %v", i, step.ev.Type, step.ev.StreamEventType, got, step.deadline)
				}
			}
		})
	}
}

// A hang is found at its phase's allowance, and its reason names the phase
// and the setting behind the allowance.
func TestHangNamesItsPhase(t *testing.T) {
	s := time.Second
	cases := []struct {
		name   string
		lim    Limits
		lines  []stream.Event
		silent time.Duration // after the last line, when the hang is found
		reason string
	}{
		{"mid-text", phaseLimits, []stream.Event{lRequesting, lMsgStart, lTextStart, lTextDelta}, time.Minute,
			"no output for 1m0s while writing text (text_timeout)"},
		{"before the first event", phaseLimits, []stream.Event{lInit, lRequesting}, 3 * time.Minute,
			"no output for 3m0s while waiting for the API's reply (idle_timeout)"},
		{"thinking", phaseLimits, []stream.Event{lMsgStart, lThinkStart, lThinkDelta}, 4 * time.Minute,
			"no output for 4m0s while thinking (thinking_timeout)"},
		{"a tool call's input, with room", Limits{Idle: time.Minute, Tool: time.Hour, ToolInput: 10 * time.Minute, Room: Room{PhaseToolInput: 1}},
			[]stream.Event{lMsgStart, lWriteStart}, 20 * time.Minute,
			"no output for 20m0s while writing the input of a Write call (tool_input_timeout ×2: an earlier attempt of the run was killed there)"},
		{"a tool", phaseLimits, []stream.Event{lWriteCall}, 15 * time.Minute,
			"no output for 15m0s while Write ran (tool_timeout)"},
		{"a retry wait", phaseLimits, []stream.Event{lRetry}, 3*time.Minute + 2*s,
			"no output for 3m2s while waiting to retry a request (idle_timeout after the wait the CLI announced)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := New(c.lim, t0)
			for i, ev := range c.lines {
				st.Step(Input{Kind: Line, Event: ev}, t0.Add(time.Duration(i)*s))
			}
			last := t0.Add(time.Duration(len(c.lines)-1) * s)
			if eff := st.Step(Input{Kind: Wake}, last.Add(c.silent-time.Millisecond)); eff.Stop {
				t.Fatalf("stopped before the allowance")
			}
			if eff := st.Step(Input{Kind: Wake}, last.Add(c.silent)); !eff.Stop || st.StopReason() != StopHang {
				t.Fatalf("no hang at the allowance (wake at %v)", st.Wake().Sub(last))
			}
			_, reason := Classify(Ended{Machine: st, Log: NewLog(""), Exit: killedBy(syscall.SIGTERM)})
			if !strings.HasPrefix(reason, c.reason) {
				t.Errorf("reason %q, want it to begin %q", reason, c.reason)
			}
		})
	}
}

// Room grows only where a healthy model can be silent longer, and at most MaxRoom times.
func TestRoomGrows(t *testing.T) {
	var r Room
	for _, p := range Phases() {
		for i := 0; i < MaxRoom+2; i++ {
			r.Grow(p)
		}
		want := 0
		if p.Grows() {
			want = MaxRoom
		}
		if r[p] != want {
			t.Errorf("%v: room %d, want %d", p, r[p], want)
		}
	}
	if got := doubled(time.Duration(1<<62), 2); got <= 0 {
		t.Errorf("doubling overflowed: %v", got)
	}
}

// tool_timeout replaces idle_timeout while a tool runs, shorter or longer
// (as it always has): only a model writing beside its tools keeps a longer
// allowance of its own.
func TestToolTimeoutReplacesTheWaitingAllowance(t *testing.T) {
	st := New(Limits{Idle: time.Hour, Tool: time.Second, ToolInput: time.Hour}, t0)
	st.Step(Input{Kind: Line, Event: lInit}, t0)
	st.Step(Input{Kind: Line, Event: lWriteCall}, t0)
	if d, allowed, _ := st.Doing(); d.Phase != PhaseTool || allowed != time.Second {
		t.Errorf("a tool runs: %v %v, want tool and tool_timeout's 1s", d.Phase, allowed)
	}
	st.Step(Input{Kind: Line, Event: lWriteStart}, t0)
	if d, allowed, _ := st.Doing(); d.Phase != PhaseToolInput || allowed != time.Hour {
		t.Errorf("the model writes a tool input beside it: %v %v, want tool_input and its 1h", d.Phase, allowed)
	}
}

// A wake that finds the stream grew (malarun looked away) waits for the
// reader; if what came was only pings, the hang is due at once, not a
// catch-up later (with pings every second, each wake would otherwise find
// growth again, and the hang would never come).
func TestPingsWrittenWhileLookingAwayDoNotPostponeAHang(t *testing.T) {
	st := New(phaseLimits, t0)
	text := []stream.Event{lRequesting, lMsgStart, lTextStart, lTextDelta}
	var end int64
	for i, ev := range text {
		ev.Offset, ev.Bytes = end, 100
		end += 101
		st.Step(Input{Kind: Line, Event: ev}, t0.Add(time.Duration(i)*time.Second))
	}
	due := t0.Add(3*time.Second + time.Minute)
	if !st.Wake().Equal(due) {
		t.Fatalf("deadline %v, want %v", st.Wake().Sub(t0), due.Sub(t0))
	}
	// At the deadline the transcript holds a ping not read yet.
	if eff := st.Step(Input{Kind: Wake, Written: end + 101}, due); eff.Stop {
		t.Fatal("stopped with unread bytes: they may be progress")
	}
	ping := lPing
	ping.Offset, ping.Bytes = end, 100
	st.Step(Input{Kind: Line, Event: ping}, due.Add(5*time.Millisecond))
	if w := st.Wake(); !w.Equal(due) {
		t.Errorf("after reading only a ping, the wake is at %v, want the hang's deadline %v", w.Sub(t0), due.Sub(t0))
	}
	if eff := st.Step(Input{Kind: Wake, Written: end + 101}, due.Add(5*time.Millisecond)); !eff.Stop || st.StopReason() != StopHang {
		t.Errorf("no hang once the pings were read")
	}
}
