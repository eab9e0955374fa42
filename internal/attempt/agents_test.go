package attempt

import (
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/stream"
)

// Lines of a Task (Agent) call and its sub-agent as the pinned CLIs print
// them (docs/design.md §F35; recorded in testdata/transcripts/subagents/).
var (
	lAgentCall = stream.Event{Type: "assistant", ToolUses: []stream.ToolUse{{ID: "toolu_1", Name: "Agent", Input: `{"description":"sub task"}`}}}
	// 2.1.197 runs the agent inside its call.
	lAgentFg = stream.Event{Type: "system", Subtype: "task_started", TaskID: "a1", ToolUseID: "toolu_1", TaskType: "local_agent", Description: "sub task"}
	// 2.1.332 runs it beside the main agent: its call's result comes at once.
	lAgentBg       = stream.Event{Type: "system", Subtype: "task_started", TaskID: "a1", ToolUseID: "toolu_1", TaskType: "local_agent", Description: "sub task", Backgrounded: true}
	lAgentLaunched = stream.Event{Type: "user", ToolResults: []string{"toolu_1"}}
	lSubPrompt     = sub1(stream.Event{Type: "user", Texts: []string{"run the Bash command"}})
	lSubProgress   = stream.Event{Type: "system", Subtype: "task_progress", TaskID: "a1", ToolUseID: "toolu_1"}
	lSubBash       = sub1(stream.Event{Type: "assistant", ToolUses: []stream.ToolUse{{ID: "toolu_2", Name: "Bash"}}})
	lSubBashDone   = sub1(stream.Event{Type: "user", ToolResults: []string{"toolu_2"}})
	lSubAnswer     = sub1(stream.Event{Type: "assistant", Texts: []string{"done"}})
	lAgentDone     = stream.Event{Type: "system", Subtype: "task_notification", TaskID: "a1", ToolUseID: "toolu_1", Status: "completed"}
	lAgentResult   = stream.Event{Type: "user", ToolResults: []string{"toolu_1"}}
	lMainText      = stream.Event{Type: "assistant", Texts: []string{"main answer"}}
)

func sub1(ev stream.Event) stream.Event { ev.ParentToolUseID = "toolu_1"; return ev }

// agentLimits tell each allowance from the others.
var agentLimits = Limits{Idle: 3 * time.Minute, FirstByte: 45 * time.Second, Subagent: 2 * time.Minute, Tool: 15 * time.Minute,
	Text: time.Minute, Thinking: 4 * time.Minute, ToolInput: 10 * time.Minute, Background: time.Hour, Linger: 5 * time.Second, PartialMessages: true}

// A sub-agent is judged on its own lines: while it works, the main agent
// that waits on it is not judged at all, and a sub-agent that falls silent
// after its prompt, when the CLI does not end it at subagent_timeout
// itself, is a hang at tool_input_timeout plus subagent_timeout, named as
// its own, with its call cut off (2.1.197 runs it inside the call).
func TestASubAgentIsJudgedOnItsOwnLines(t *testing.T) {
	s := runCase(t, machineCase{name: "2.1.197: a foreground agent dies after its prompt", lim: agentLimits, final: StopHang, cut: []string{"toolu_1"}, steps: []step{
		{at: 0, in: line(lInit), wake: 45 * time.Second},
		{at: 1 * time.Second, in: line(lMsgStart)},
		{at: 1 * time.Second, in: line(lAgentCall), wake: 1*time.Second + 15*time.Minute},
		// The main agent waits on the agent inside its call: only the
		// sub-agent is judged, from its own lines.
		{at: 1 * time.Second, in: line(lAgentFg), wake: 1*time.Second + 12*time.Minute},
		{at: 1 * time.Second, in: line(lBlockStop)},
		{at: 2 * time.Second, in: line(lSubPrompt), wake: 2*time.Second + 12*time.Minute},
		{at: 2 * time.Second, in: line(lMsgDelta), wake: 2*time.Second + 12*time.Minute},
		{at: 2 * time.Second, in: line(lMsgStop), wake: 2*time.Second + 12*time.Minute},
		{at: 2*time.Second + 12*time.Minute, in: wakeUp, stop: StopHang},
	}})
	if _, reason := hangEnding(s); !strings.HasPrefix(reason, "no output for 12m0s while the sub-agent «sub task» wrote its next message (claude prints a sub-agent's messages only whole) (tool_input_timeout and subagent_timeout") {
		t.Errorf("reason %q", reason)
	}
	if s.HangPhase().Phase != PhaseSubagent || s.HangSilence() != 12*time.Minute {
		t.Errorf("phase %v after %v", s.HangPhase(), s.HangSilence())
	}
}

// 2.1.197: a healthy foreground sub-agent whose Bash call runs 4 minutes
// is never killed (its call has tool_timeout), and the main agent, back
// from its Task, is judged again.
func TestAHealthySubAgentRunsItsTools(t *testing.T) {
	runCase(t, machineCase{lim: agentLimits, final: StopExited, steps: []step{
		{at: 0, in: line(lAgentCall)},
		{at: 0, in: line(lAgentFg)},
		{at: 0, in: line(lSubPrompt), wake: 12 * time.Minute},
		{at: 1 * time.Second, in: line(lSubProgress), wake: 1*time.Second + 12*time.Minute},
		{at: 2 * time.Second, in: line(lSubBash), wake: 2*time.Second + 15*time.Minute},
		{at: 3 * time.Minute, in: wakeUp},
		{at: 4 * time.Minute, in: line(lSubBashDone), wake: 16 * time.Minute},
		{at: 5 * time.Minute, in: line(lSubAnswer), wake: 17 * time.Minute},
		{at: 5 * time.Minute, in: line(lAgentDone), wake: 5*time.Minute + 3*time.Minute},
		{at: 5 * time.Minute, in: line(lAgentResult), wake: 5*time.Minute + 45*time.Second},
		{at: 5 * time.Minute, in: line(lRequesting), wake: 5*time.Minute + 45*time.Second},
		{at: 5 * time.Minute, in: line(lMsgStart), wake: 5*time.Minute + 3*time.Minute},
		{at: 5 * time.Minute, in: line(lMainText)},
		{at: 5 * time.Minute, in: line(okResult)},
		{at: 5 * time.Minute, in: streamEnd, stop: StopExited},
	}})
}

// 2.1.332 runs the agent beside the main agent and holds the main turn's
// result back until it ends: the main agent, its turn over, is not judged
// while the agent works; a silent agent is a hang at subagent_timeout from
// its last line, the main agent's text long done.
func TestABackgroundSubAgent(t *testing.T) {
	healthy := []step{
		{at: 0, in: line(lAgentCall)},
		{at: 0, in: line(lAgentBg), running: 1, started: 1, wake: 12 * time.Minute},
		{at: 0, in: line(lAgentLaunched), running: 1},
		{at: 0, in: line(lRequesting), running: 1, wake: 45 * time.Second},
		{at: 1 * time.Second, in: line(lMsgStart), running: 1},
		{at: 1 * time.Second, in: line(lMainText), running: 1},
		{at: 1 * time.Second, in: line(lMsgStop), running: 1, wake: 12 * time.Minute},
		{at: 1 * time.Minute, in: line(lSubBash), running: 1, wake: time.Minute + 15*time.Minute},
		{at: 5 * time.Minute, in: line(lSubBashDone), running: 1, wake: 17 * time.Minute},
		{at: 6 * time.Minute, in: line(lSubAnswer), running: 1, wake: 18 * time.Minute},
		{at: 6 * time.Minute, in: line(lAgentDone), finished: 1, wake: 6*time.Minute + 3*time.Minute},
		{at: 6 * time.Minute, in: line(initLine)},
		{at: 6 * time.Minute, in: line(lMainText)},
		{at: 6 * time.Minute, in: line(okResult)},
		{at: 6 * time.Minute, in: streamEnd, stop: StopExited},
	}
	runCase(t, machineCase{name: "healthy", lim: agentLimits, final: StopExited, steps: healthy})
	s := runCase(t, machineCase{name: "silent", lim: agentLimits, final: StopHang, cut: []string{"toolu_2"}, cutTsk: []string{"a1"}, steps: append(healthy[:8:8],
		step{at: time.Minute + 15*time.Minute, in: wakeUp, running: 1, stop: StopHang})})
	if d := s.HangPhase(); d.Phase != PhaseTool || !strings.Contains(d.Label(), "while Bash ran in the sub-agent «sub task»") {
		t.Errorf("hang %v %q", d, d.Label())
	}
}

// An agent's open calls end with it: a sub-agent's call that never got its
// result is not running once the agent is done, so a later stall of the
// main agent's text is found at text_timeout, named as text.
func TestAnAgentsCallsEndWithIt(t *testing.T) {
	s := runCase(t, machineCase{lim: agentLimits, final: StopHang, steps: []step{
		{at: 0, in: line(lAgentCall)},
		{at: 0, in: line(lAgentFg)},
		{at: 0, in: line(lSubPrompt)},
		{at: 1 * time.Second, in: line(lSubBash)},
		{at: 2 * time.Second, in: line(lSubAnswer)},
		{at: 3 * time.Second, in: line(lAgentDone)},
		{at: 3 * time.Second, in: line(lAgentResult)},
		{at: 4 * time.Second, in: line(lMsgStart)},
		{at: 4 * time.Second, in: line(lTextStart)},
		{at: 4 * time.Second, in: line(lTextDelta), wake: 4*time.Second + time.Minute},
		{at: 4*time.Second + time.Minute, in: wakeUp, stop: StopHang},
	}})
	if d := s.HangPhase(); d.Phase != PhaseText || d.Agent != "" {
		t.Errorf("hang %+v, want the main agent's text", d)
	}
}

// A request out waits for its first byte: first_byte_timeout for a small
// one (when shorter than idle_timeout), as much more as a larger one is
// larger than firstByteTokens; the phase's room doubles it.
func TestTheFirstByteGrowsWithTheRequest(t *testing.T) {
	for _, c := range []struct {
		name   string
		lim    Limits
		tokens int64
		want   time.Duration
	}{
		{"small", agentLimits, 20_000, 45 * time.Second},
		{"twice the tokens", agentLimits, 200_000, 90 * time.Second},
		{"a million", agentLimits, 1_000_000, 450 * time.Second},
		{"idle_timeout shorter", Limits{Idle: 10 * time.Second, FirstByte: 45 * time.Second, PartialMessages: true}, 20_000, 10 * time.Second},
		{"room", Limits{Idle: time.Hour, FirstByte: 45 * time.Second, PartialMessages: true, Room: Room{PhaseWaiting: 1}}, 20_000, 90 * time.Second},
		{"no partial messages: idle_timeout", Limits{Idle: 3 * time.Minute, FirstByte: 45 * time.Second}, 20_000, 3 * time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := New(c.lim, t0)
			s.Step(line(lInit), t0)
			usage := stream.Event{Type: "assistant", HasUsage: true, Usage: stream.Tokens{InputTokens: c.tokens}, ToolUses: []stream.ToolUse{{ID: "b", Name: "Bash"}}}
			s.Step(line(usage), t0)
			s.Step(line(toolResult("b")), t0.Add(time.Second))
			if got := s.Wake().Sub(t0.Add(time.Second)); got != c.want {
				t.Errorf("first byte allowed %v, want %v", got, c.want)
			}
		})
	}
}

// A sub-agent's own sub-agent takes its call out of its caller's: the
// caller waits on it, and each is judged on its own lines.
func TestANestedSubAgentTakesItsCall(t *testing.T) {
	nestedCall := sub1(stream.Event{Type: "assistant", ToolUses: []stream.ToolUse{{ID: "toolu_n", Name: "Agent"}}})
	nestedPrompt := stream.Event{Type: "user", ParentToolUseID: "toolu_n", Texts: []string{"look deeper"}}
	nestedDone := stream.Event{Type: "user", ParentToolUseID: "toolu_1", ToolResults: []string{"toolu_n"}}
	s := runCase(t, machineCase{lim: agentLimits, final: StopHang, cut: []string{"toolu_1", "toolu_n"}, steps: []step{
		{at: 0, in: line(lAgentCall)},
		{at: 0, in: line(lAgentFg)},
		{at: 0, in: line(lSubPrompt)},
		{at: 1 * time.Second, in: line(nestedCall), wake: 1*time.Second + 15*time.Minute},
		// The outer agent waits on the nested one: only the nested is judged.
		{at: 2 * time.Second, in: line(nestedPrompt), wake: 2*time.Second + 12*time.Minute},
		{at: 2*time.Second + 12*time.Minute, in: wakeUp, stop: StopHang},
	}})
	if d := s.HangPhase(); d.Phase != PhaseSubagent || d.Agent != "a sub-agent" {
		t.Errorf("hang %+v: want the nested sub-agent (it has no task, so no name)", d)
	}
	// Once the nested agent returns, its caller works again from then.
	runCase(t, machineCase{lim: agentLimits, final: StopExited, cut: []string{"toolu_1"}, steps: []step{
		{at: 0, in: line(lAgentCall)},
		{at: 0, in: line(lAgentFg)},
		{at: 0, in: line(lSubPrompt)},
		{at: 1 * time.Second, in: line(nestedCall)},
		{at: 2 * time.Second, in: line(nestedPrompt)},
		{at: 20 * time.Minute, in: line(nestedDone), wake: 32 * time.Minute},
		{at: 21 * time.Minute, in: streamEnd, stop: StopExited},
	}})
}
