package run

import (
	"testing"

	"github.com/malarun/malarun/internal/attempt"
)

// A first byte that hangs after an api_retry is in the retry phase (the CLI
// prints no status line after the retry: testdata/transcripts/subagents/
// */no-answer-api-timeout-45s.timed), Doing.FirstByte true: twice in a
// row, it gives the first byte (the waiting phase's room) more room, as a
// hang in waiting does (§D33).
func TestAFirstByteHangAfterARetryGetsRoom(t *testing.T) {
	p := Policy{MaxAttempts: 10, MaxIdleRetries: 5, Backoff: DefaultBackoff()}
	s, _ := Begin(p, Beginning{FirstAttempt: 1}, t0, Draws{NewSession: "s"})
	hung := func(e *Ended) { e.Hung = &attempt.Doing{Phase: attempt.PhaseRetry, FirstByte: true} }
	for range 3 {
		s, _ = Next(p, s, *ended(attempt.Hang, "s", true, hung), t0, Draws{})
	}
	if s.Room[attempt.PhaseWaiting] == 0 {
		t.Errorf("three first-byte hangs in a row after a retry: room %v, want the first byte's (waiting) grown", s.Room)
	}
}
