package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"
	"testing"

	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/supervisor"
)

// TestExitCodeFor is the contract, written out independently of the table.
func TestExitCodeFor(t *testing.T) {
	runErr := func(kind outcome.Outcome) error { return &supervisor.RunError{Kind: kind, Detail: "detail"} }
	interrupted := func(sig os.Signal) error {
		return &supervisor.RunError{Kind: outcome.Interrupted, Signal: sig}
	}
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"success", nil, 0},
		{"error result", runErr(outcome.ErrorResult), 1},
		{"usage", usagef("bad flag"), 2},
		{"config error found by the supervisor", runErr(outcome.Usage), 2},
		{"budget", runErr(outcome.Budget), 9},
		{"wrapped usage", fmt.Errorf("context: %w", usagef("bad")), 2},
		{"retries exhausted", runErr(outcome.RetriesExhausted), 3},
		{"not safe to retry", runErr(outcome.NotSafeToRetry), 4},
		{"busy", runErr(outcome.Busy), 7},
		{"auth", runErr(outcome.Auth), 8},
		{"rate limit", runErr(outcome.RateLimit), 75},
		{"session timeout", runErr(outcome.SessionTimeout), 124},
		{"start", runErr(outcome.StartFailed), 127},
		{"SIGINT", interrupted(syscall.SIGINT), 130},
		{"SIGTERM", interrupted(syscall.SIGTERM), 143},
		{"os.Interrupt", interrupted(os.Interrupt), 130},
		{"SIGHUP", interrupted(syscall.SIGHUP), 129},
		{"SIGQUIT", interrupted(syscall.SIGQUIT), 131},
		{"interrupted, signal unknown", interrupted(nil), 130},
		{"bare kind", outcome.RetriesExhausted, 3},
		{"kind wrapped by fmt", fmt.Errorf("attempt 2: %w", outcome.Auth), 8},
		{"RunError wrapped by fmt", fmt.Errorf("x: %w", runErr(outcome.StartFailed)), 127},
		{"unknown error", errors.New("boom"), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := exitCodeFor(tt.err); got != tt.want {
				t.Errorf("exitCodeFor(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

// TestExitCodeTableCoversEveryKind: each supervisor error kind has a row,
// and the codes the contract reserves are documented.
func TestExitCodeTableCoversEveryKind(t *testing.T) {
	kinds := []outcome.Outcome{
		outcome.ErrorResult, outcome.Error, outcome.RetriesExhausted,
		outcome.NotSafeToRetry, outcome.Auth, outcome.RateLimit, outcome.SessionTimeout,
		outcome.StartFailed, outcome.Interrupted, outcome.Busy, outcome.Usage, outcome.Budget, outcome.ContextExhausted, outcome.Poisoned,
	}
	var codes []int
	for _, r := range exitCodes() {
		codes = append(codes, r.code)
	}
	for _, k := range kinds {
		found := false
		for _, r := range exitCodes() {
			if r.outcome == k {
				found = true
			}
		}
		if !found {
			t.Errorf("no exit code row for %v", k)
		}
	}
	want := []int{0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 75, 124, 127, 129, 130, 131, 143}
	if !slices.Equal(codes, want) {
		t.Errorf("documented codes %v, want %v", codes, want)
	}
}

// Every signal malarun catches to shut down exits with a documented code
// of the outcome interrupted.
func TestEveryShutdownSignalHasARow(t *testing.T) {
	for _, sig := range shutdownSignals() {
		code := exitCodeFor(&supervisor.RunError{Kind: outcome.Interrupted, Signal: sig})
		found := false
		for _, r := range exitCodes() {
			if r.code == code && r.outcome == outcome.Interrupted {
				found = true
			}
		}
		if !found {
			t.Errorf("%v exits %d, which has no interrupted row", sig, code)
		}
	}
}

// The --events finished line (outcome.Of, in the supervisor) and the --json
// report (outcomeFor) name every exit code's outcome the same way.
func TestFinishedEventAndReportAgreeOnEveryOutcome(t *testing.T) {
	for _, r := range exitCodes() {
		var err error
		if r.outcome != outcome.Success {
			err = &supervisor.RunError{Kind: r.outcome, Detail: "d", Signal: syscall.Signal(r.code - 128)}
		}
		if got, want := string(outcome.Of(err)), string(outcomeFor(err)); got != want || got != string(r.outcome) {
			t.Errorf("exit %d: finished says %q, the report %q, the table %q", r.code, got, want, r.outcome)
		}
		if code := exitCodeFor(err); code != r.code {
			t.Errorf("exit %d: %v maps to %d", r.code, err, code)
		}
	}
	if got := outcomeFor(errors.New("disk full")); got != outcome.Error || outcome.Of(errors.New("x")) != outcome.Error {
		t.Errorf("an unexpected error: %q", got)
	}
}
