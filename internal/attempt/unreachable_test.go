package attempt

import (
	"testing"
	"time"

	"github.com/malarun/malarun/internal/reach"
	"github.com/malarun/malarun/internal/stream"
)

// Lines of the recordings testdata/transcripts/api-unreachable-* (§F25).
var (
	unknownRetry = stream.Event{Type: "system", Subtype: "api_retry", Attempt: 1, MaxRetries: 10, RetryDelayMS: 540, Error: "unknown"}
	overloaded   = stream.Event{Type: "system", Subtype: "api_retry", Attempt: 1, MaxRetries: 10, RetryDelayMS: 540, ErrorStatus: 529, Error: "overloaded"}
	certResult   = stream.Event{Type: "result", Subtype: "success", IsError: true, TerminalReason: "api_error",
		Result: "API Error: Unable to connect to API: Self-signed certificate detected (DEPTH_ZERO_SELF_SIGNED_CERT). The certificate ..."}
	refusedResult = stream.Event{Type: "result", Subtype: "success", IsError: true, TerminalReason: "completed",
		Result: "API Error: Unable to connect to API (ConnectionRefused)"}
	synthetic   = stream.Event{Type: "assistant", Model: "<synthetic>", Texts: []string{"API Error: ..."}}
	streamStart = stream.Event{Type: "stream_event", StreamEventType: "message_start"}
)

func probed(f reach.Finding) Input { return Input{Kind: Probed, Finding: f} }

var (
	notFound = reach.FromResultText("API Error: x (ENOTFOUND)")
	reached  = reach.Finding{}
)

func TestUnreachableAPI(t *testing.T) {
	talkedBefore := limits
	talkedBefore.Talked = true
	cases := []machineCase{
		{name: "the first retry without an answer asks for a probe; a cause stops", final: StopUnreachable, steps: []step{
			{at: 1 * time.Second, in: line(initLine)},
			{at: 2 * time.Second, in: line(unknownRetry)},
			{at: 2100 * time.Millisecond, in: probed(notFound), stop: StopUnreachable},
			{at: 3 * time.Second, in: streamEnd},
		}},
		{name: "a probe that finds the host answering leaves the CLI to retry", final: StopExited, steps: []step{
			{at: 2 * time.Second, in: line(unknownRetry)},
			{at: 2100 * time.Millisecond, in: probed(reached)},
			{at: 3 * time.Second, in: line(unknownRetry)},
			{at: 4 * time.Second, in: line(textLine)},
			{at: 5 * time.Second, in: line(okResult)},
			{at: 6 * time.Second, in: streamEnd, stop: StopExited},
		}},
		{name: "an earlier attempt talked: the network went away, retry", lim: talkedBefore, final: StopExited, steps: []step{
			{at: 2 * time.Second, in: line(unknownRetry)},
			{at: 3 * time.Second, in: probed(notFound)}, // even a probe that comes anyway does not stop
			{at: 4 * time.Second, in: streamEnd, stop: StopExited},
		}},
		{name: "this attempt talked before the failure", final: StopExited, steps: []step{
			{at: 1 * time.Second, in: line(streamStart)},
			{at: 2 * time.Second, in: line(unknownRetry)},
			{at: 3 * time.Second, in: probed(notFound)},
			{at: 4 * time.Second, in: streamEnd, stop: StopExited},
		}},
		{name: "the probe came back after the CLI made progress", final: StopExited, steps: []step{
			{at: 2 * time.Second, in: line(unknownRetry)},
			{at: 3 * time.Second, in: line(textLine)},
			{at: 4 * time.Second, in: probed(notFound)},
			{at: 5 * time.Second, in: streamEnd, stop: StopExited},
		}},
		{name: "the CLI's synthetic error message is no answer", final: StopUnreachable, steps: []step{
			{at: 1 * time.Second, in: line(synthetic)},
			{at: 2 * time.Second, in: line(certResult), stop: StopUnreachable},
			{at: 3 * time.Second, in: streamEnd},
		}},
		{name: "2.1.197 gives up after its retries: its text decides", final: StopUnreachable, steps: []step{
			{at: 2 * time.Second, in: line(unknownRetry)},
			{at: 3 * time.Second, in: probed(reached)},
			{at: 180 * time.Second, in: line(synthetic)},
			{at: 181 * time.Second, in: line(refusedResult), stop: StopUnreachable},
		}},
		{name: "an error result after a success is retried as before", lim: talkedBefore, final: StopExited, steps: []step{
			{at: 2 * time.Second, in: line(certResult)},
			{at: 3 * time.Second, in: streamEnd, stop: StopExited},
		}},
		{name: "a 529 is the API answering: no probe, no stop", final: StopExited, steps: []step{
			{at: 2 * time.Second, in: line(overloaded)},
			{at: 3 * time.Second, in: line(textLine)},
			{at: 4 * time.Second, in: streamEnd, stop: StopExited},
		}},
		{name: "a probe after the stream ended changes nothing", final: StopExited, steps: []step{
			{at: 2 * time.Second, in: line(unknownRetry)},
			{at: 3 * time.Second, in: streamEnd, stop: StopExited},
			{at: 4 * time.Second, in: probed(notFound)},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runCase(t, c) })
	}
}

func TestOneProbePerAttempt(t *testing.T) {
	s := New(limits, t0)
	if eff := s.Step(line(unknownRetry), t0); !eff.Probe {
		t.Fatal("the first api_retry without a status asks for no probe")
	}
	if eff := s.Step(line(unknownRetry), t0.Add(time.Second)); eff.Probe {
		t.Fatal("a second api_retry asks for another probe")
	}
	if eff := New(limits, t0).Step(line(overloaded), t0); eff.Probe {
		t.Fatal("a 529 asks for a probe: the API answered")
	}
	s = New(limits, t0)
	s.Step(line(unknownRetry), t0)
	s.Step(probed(notFound), t0.Add(time.Second))
	if got := s.Unreachable(); got != notFound {
		t.Errorf("Unreachable() = %+v, want %+v", got, notFound)
	}
	if s.Talked() {
		t.Error("Talked() = true for an attempt that never had an answer")
	}
	s = New(limits, t0)
	s.Step(line(textLine), t0)
	if !s.Talked() {
		t.Error("Talked() = false after an assistant message")
	}
}
