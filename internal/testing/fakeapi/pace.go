package fakeapi

import (
	"context"
	"net/http"
	"time"
)

// Pace spaces a reply's events in time as the real API does, so that a
// test meets the silences of a healthy stream (docs/design.md §F32): the
// model reading a long prompt before its first event, thinking in bursts,
// writing a tool call's input (which the API sends whole, once written),
// and a stream that dies in the middle of a sentence. Zero values are
// today's fake: every event at once.
type Pace struct {
	// FirstEvent is the silence before message_start (time to first token).
	FirstEvent time.Duration
	// Gap is the silence before each delta but a block's first (a model
	// writing text or thinking, chunk by chunk).
	Gap time.Duration
	// ThinkingGap, when set, is Gap for the deltas of thinking blocks.
	ThinkingGap time.Duration
	// InputAfter is the silence between a tool_use block's start and its
	// input: the model writing the input, which arrives whole.
	InputAfter time.Duration
	// Ping sends a ping event every Ping during any silence of the stream
	// (the real API pings about every 30 s while it holds a reply; 0: none).
	Ping time.Duration
	// StallAfter holds the stream open, sending nothing more (pings aside),
	// once this many deltas went out (0: never): a stream that died in the
	// middle of a block. The hold is counted as a stall ([Server.WaitStalls]).
	StallAfter int
}

// WithPace spaces the step's reply as p says. A non-streaming request (the
// CLI's fallback after its own watchdog) gets the whole reply once all of
// p's silences have passed, as the real API answers once the model is done.
func (s Step) WithPace(p Pace) Step {
	if s.kind != stepReply {
		panic("fakeapi.WithPace: only replies are paced")
	}
	s.pace = p
	return s
}

// Thinking is a reply part with one thinking block, to put before a Text
// or ToolUse with [Combine] (a reply of thinking alone is no answer).
func Thinking(thought string) Step {
	return Step{kind: stepReply, blocks: []blockSpec{{thinking: true, text: thought}}}
}

// duration is how long the model takes to write the whole reply: what a
// non-streaming request waits before its answer.
func (p Pace) duration(rep reply) time.Duration {
	d := p.FirstEvent
	for _, b := range rep.blocks {
		n := len(chunks(b.payload()))
		switch {
		case b.Type == "tool_use":
			d += p.InputAfter + time.Duration(max(n-1, 0))*p.Gap
		case n > 1:
			d += time.Duration(n-1) * p.gapFor(b.Type)
		}
	}
	return d
}

func (p Pace) gapFor(blockType string) time.Duration {
	if blockType == "thinking" && p.ThinkingGap > 0 {
		return p.ThinkingGap
	}
	return p.Gap
}

// pacer waits out a Pace's silences on one response, pinging as it waits,
// and ends the wait early when the client goes away or the server closes.
type pacer struct {
	ctx     context.Context
	closing <-chan struct{}
	ev      *eventWriter // nil for a non-streaming answer: no pings
	ping    time.Duration
}

// wait is a silence of d. It reports false when the answer must stop: the
// client left, the server is closing, or a ping could not be written.
func (p pacer) wait(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	end := time.NewTimer(d)
	defer end.Stop()
	var tick <-chan time.Time
	if p.ping > 0 && p.ev != nil {
		t := time.NewTicker(p.ping)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-end.C:
			return true
		case <-tick:
			if p.ev.send("ping", map[string]string{"type": "ping"}) != nil {
				return false
			}
		case <-p.ctx.Done():
			return false
		case <-p.closing:
			return false
		}
	}
}

// hold is a stall: a silence until the client or the server goes away.
func (p pacer) hold() {
	p.wait(time.Duration(1<<63 - 1))
}

// writeMessageAfter answers a non-streaming request once the model would
// have written the reply.
func (s *Server) writeMessageAfter(w http.ResponseWriter, r *http.Request, step Step, rep reply) {
	p := pacer{ctx: r.Context(), closing: s.closing}
	if !p.wait(step.pace.duration(rep)) {
		return
	}
	writeMessage(w, rep)
}
