package attempt

import (
	"time"

	"github.com/malarun/malarun/internal/stream"
)

// Phase is what the CLI's stream shows it doing, as far as silence goes
// (docs/design.md §D30): each phase has its own allowance of silence,
// because a healthy stream is silent for seconds in one and for minutes in
// another (§F32).
type Phase int

const (
	// PhaseStarting: before the CLI's first line (MCP servers, SessionStart
	// hooks): at least firstLineWait.
	PhaseStarting Phase = iota
	// PhaseWaiting: a request is out and no event of its reply has come, or
	// the CLI is between requests (idle_timeout). With partial messages off
	// the whole of a reply is this phase: the stream shows no more.
	PhaseWaiting
	// PhaseReplying: a reply has begun and no block of it is open (between
	// its blocks, or after the last one): idle_timeout.
	PhaseReplying
	// PhaseThinking: a thinking block is open (thinking_timeout): the API
	// sends thought in bursts, minutes apart.
	PhaseThinking
	// PhaseText: a text block is open (text_timeout): its deltas flow.
	PhaseText
	// PhaseToolInput: a tool call's block is open (tool_input_timeout): the
	// API sends its input whole, once the model has written it.
	PhaseToolInput
	// PhaseBlock: a block of a kind malarun does not know is open: the
	// longest of the streaming allowances, since its silences are unknown.
	PhaseBlock
	// PhaseTool: a tool call has no result yet, or a hook runs (tool_timeout).
	PhaseTool
	// PhaseRetry: the CLI waits to send a request again (api_retry): the
	// wait it announced, then the first byte's allowance.
	PhaseRetry
	// PhaseSubagent: a sub-agent writes its next message, which the CLI
	// prints only whole: its request, its first byte, its thinking, its
	// text and its tool calls' inputs are all one silence to malarun
	// (tool_input_timeout + subagent_timeout; the CLI itself ends a
	// sub-agent whose stream is silent for subagent_timeout: §D33, §F35).
	PhaseSubagent
	// PhaseCompacting: the CLI writes its summary of the conversation
	// (status compacting, until compact_boundary): a request of its own
	// whose reply it does not print (idle_timeout, and the first byte's
	// allowance for the conversation's size).
	PhaseCompacting
)

// phaseCount is how many phases there are.
const phaseCount = int(PhaseCompacting) + 1

// String is the phase's name for programs (--events, the record, show).
func (p Phase) String() string {
	names := [phaseCount]string{"starting", "waiting", "replying", "thinking", "text", "tool_input", "block", "tool", "retry", "subagent", "compacting"}
	if p < 0 || int(p) >= phaseCount {
		return "unknown"
	}
	return names[p]
}

// Phases lists every phase, in order (for docs and tests).
func Phases() []Phase {
	out := make([]Phase, phaseCount)
	for i := range out {
		out[i] = Phase(i)
	}
	return out
}

// Grows reports whether a hang in this phase gives the next attempt more
// room there (§D30): a healthy model can be silent in it for longer than
// any fixed allowance (a long tool input, long thinking, a huge prompt's
// first token), so the same kill must not come on every resume. Text
// deltas flow, and tools and hooks have their own bound.
//
// A sub-agent's silence does not grow: claude, which sees its stream,
// judges it (subagent_timeout), and malarun's allowance there is already
// the longest a healthy message can take plus claude's own (§D33).
func (p Phase) Grows() bool {
	return p == PhaseWaiting || p == PhaseThinking || p == PhaseToolInput || p == PhaseBlock || p == PhaseCompacting
}

// writing reports whether the model is writing a block in this phase.
func (p Phase) writing() bool {
	return p == PhaseThinking || p == PhaseText || p == PhaseToolInput || p == PhaseBlock
}

// Doing is a phase as it is told: what the CLI was doing when it was
// silent ("writing the input of a Write call").
type Doing struct {
	Phase Phase
	// What is the tool whose input is written (PhaseToolInput), the block
	// type (PhaseBlock), or the tools and hooks running (PhaseTool).
	What string
	// Agent names the sub-agent whose phase it is ("" for the main agent):
	// "the sub-agent «Explore the code»".
	Agent string
	// FirstByte (PhaseWaiting): a request is out and no event of its reply
	// has come; Tokens is about how many tokens it carries (0: unknown),
	// which its allowance grows with (first_byte_timeout).
	FirstByte bool
	Tokens    int64
}

// Label is the phase in a sentence: "while writing text", "while Bash
// ran in the sub-agent «Explore the code»".
func (d Doing) Label() string {
	switch {
	case d.Agent == "":
		return d.label()
	case d.Phase == PhaseSubagent:
		return "while " + d.Agent + " wrote its next message (claude prints a sub-agent's messages only whole)"
	}
	return d.label() + " in " + d.Agent
}

func (d Doing) label() string {
	switch d.Phase {
	case PhaseStarting:
		return "before claude's first line"
	case PhaseWaiting:
		return "while waiting for the API's reply"
	case PhaseReplying:
		return "in a reply, between its parts"
	case PhaseThinking:
		return "while thinking"
	case PhaseText:
		return "while writing text"
	case PhaseToolInput:
		if d.What == "" {
			return "while writing a tool call's input"
		}
		return "while writing the input of a " + d.What + " call"
	case PhaseBlock:
		return "while writing a " + d.What + " block"
	case PhaseTool:
		return "while " + d.What + " ran"
	case PhaseRetry:
		return "while waiting to retry a request"
	case PhaseSubagent:
		return "while it wrote its next message"
	case PhaseCompacting:
		return "while claude compacted the conversation"
	}
	return "while " + d.Phase.String()
}

// streamPhase follows the phase of the model's own stream from the lines
// of the top level (a sub-agent's stream runs inside a tool call, whose
// bound covers it): requests, replies and their blocks.
type streamPhase struct {
	phase Phase
	what  string    // PhaseToolInput's tool, PhaseBlock's block type
	since time.Time // when the phase began
}

// observe moves the phase for a line that came at now.
func (s *streamPhase) observe(ev *stream.Event, now time.Time) {
	next, what := s.phase, s.what
	switch ev.Type {
	case "stream_event":
		next, what = s.onStreamEvent(ev)
	case "system":
		switch ev.Subtype {
		case "api_retry":
			next, what = PhaseRetry, ""
		case "init":
			next, what = PhaseWaiting, ""
		case "status":
			next, what = PhaseWaiting, ""
			if ev.Status == "compacting" {
				next = PhaseCompacting
			}
		case "compact_boundary":
			next, what = PhaseWaiting, ""
		}
	case "user", "result":
		next, what = PhaseWaiting, ""
	case "assistant":
		// With partial messages the assistant line of a block comes
		// before its content_block_stop: the block is still open.
		if s.phase == PhaseStarting || s.phase == PhaseRetry {
			next, what = PhaseWaiting, ""
		}
	}
	if s.phase == PhaseStarting && next == PhaseStarting {
		next = PhaseWaiting // a first line of any other kind
	}
	if next != s.phase || what != s.what {
		s.phase, s.what, s.since = next, what, now
	}
}

func (s *streamPhase) onStreamEvent(ev *stream.Event) (Phase, string) {
	switch ev.StreamEventType {
	case "message_start", "content_block_stop", "message_delta":
		return PhaseReplying, ""
	case "message_stop":
		return PhaseWaiting, ""
	case "content_block_start":
		return blockPhase(ev.StreamBlockType, ev.StreamBlockName)
	case "content_block_delta":
		if s.phase == PhaseReplying || s.phase == PhaseWaiting {
			// The block's start was not seen (a line lost, a CLI that
			// prints no starts): its deltas say what it is.
			return deltaPhase(ev.StreamDeltaType)
		}
	}
	return s.phase, s.what
}

// blockPhase is the phase of an open block of type t (name: a tool's).
func blockPhase(t, name string) (Phase, string) {
	switch t {
	case "text":
		return PhaseText, ""
	case "thinking", "redacted_thinking":
		return PhaseThinking, ""
	case "tool_use", "server_tool_use", "mcp_tool_use":
		return PhaseToolInput, name
	case "":
		return PhaseReplying, ""
	}
	return PhaseBlock, t
}

func deltaPhase(t string) (Phase, string) {
	switch t {
	case "text_delta":
		return PhaseText, ""
	case "thinking_delta", "signature_delta":
		return PhaseThinking, ""
	case "input_json_delta":
		return PhaseToolInput, ""
	}
	return PhaseReplying, ""
}

// progress reports whether a line shows work (docs/design.md §D34): the
// model's stream (any event of it but a ping), its messages, a result, and
// the CLI's own lines about requests, retries, compaction, tools, hooks
// and tasks. Anything else says at most that the CLI is alive: a ping (the
// API's, or the CLI's own heartbeat, both printed while a stream that died
// mid-sentence is held open: §F32, §F33), a keep_alive, a rate_limit_event,
// a line that is not JSON, a type or system subtype malarun does not know.
// Such a line moves no deadline, however many come.
func progress(ev *stream.Event) bool {
	if ev.Kind != stream.KindJSON {
		return false
	}
	switch ev.Type {
	case "stream_event":
		return ev.StreamEventType != "ping"
	case "assistant", "user", "result":
		return true
	case "system":
		switch ev.Subtype {
		case "init", "status", "api_retry", "compact_boundary", "thinking_tokens",
			"hook_started", "hook_progress", "hook_response",
			"task_started", "task_progress", "task_updated", "task_notification", "background_tasks_changed":
			return true
		}
	}
	return false
}
