package attempt

import (
	"testing"
	"time"

	"github.com/malarun/malarun/internal/endpoint"
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

func probed(f endpoint.Finding) Input { return Input{Kind: Probed, Finding: f} }

var (
	notFound = endpoint.FromResultText("API Error: x (ENOTFOUND)")
	reached  = endpoint.Finding{}
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

// With unreachable_window, a certain finding must hold look after look
// (every ProbeEvery) for the window before the attempt stops; a look that
// finds the address answering ends the streak, and an answer in the stream
// ends the looks.
func TestUnreachableWindow(t *testing.T) {
	lim := limits
	lim.Idle = time.Hour
	lim.UnreachableWindow = 12 * time.Second
	look := func(s *State, at time.Duration, f endpoint.Finding) Effects { return s.Step(probed(f), t0.Add(at)) }
	wake := func(s *State, at time.Duration) Effects { return s.Step(wakeUp, t0.Add(at)) }

	s := New(lim, t0)
	s.Step(line(unknownRetry), t0)
	for _, at := range []time.Duration{1, 6, 11} {
		if eff := look(s, at*time.Second, notFound); eff.Stop {
			t.Fatalf("stopped at %vs, inside the window", at)
		}
		want := min(at+5, 13) * time.Second // the next look: ProbeEvery on, at most the window's end
		if got := s.Wake().Sub(t0); got != want {
			t.Fatalf("after the look at %vs: wake at %v, want %v", at, got, want)
		}
		if eff := wake(s, want); !eff.Probe {
			t.Fatalf("no look asked for at %v", want)
		}
	}
	if eff := look(s, 13*time.Second, notFound); !eff.Stop || s.StopReason() != StopUnreachable {
		t.Fatalf("not stopped once the window was over: %+v %v", eff, s.StopReason())
	}

	s = New(lim, t0)
	s.Step(line(unknownRetry), t0)
	look(s, time.Second, notFound)
	look(s, 6*time.Second, reached) // the gateway is up
	if !s.Wake().After(t0.Add(time.Minute)) {
		t.Errorf("a look after the address answered is still pending: wake at %v", s.Wake().Sub(t0))
	}
	look(s, 20*time.Second, notFound) // a new streak starts here
	if eff := look(s, 31*time.Second, notFound); eff.Stop {
		t.Error("a new streak stopped before its own window was over")
	}
	if eff := look(s, 32*time.Second, notFound); !eff.Stop {
		t.Error("the new streak did not stop once its window was over")
	}

	s = New(lim, t0)
	s.Step(line(unknownRetry), t0)
	look(s, time.Second, notFound)
	s.Step(line(streamStart), t0.Add(2*time.Second)) // the API answers
	if eff := look(s, 13*time.Second, notFound); eff.Stop {
		t.Error("a run that had an answer was stopped as unreachable")
	}
}
