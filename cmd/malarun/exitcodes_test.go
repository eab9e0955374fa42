package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"
	"testing"

	"github.com/malarun/malarun/internal/supervisor"
)

// TestExitCodeFor is the contract, written out independently of the table.
func TestExitCodeFor(t *testing.T) {
	runErr := func(kind error) error { return &supervisor.RunError{Kind: kind, Detail: "detail"} }
	interrupted := func(sig os.Signal) error {
		return &supervisor.RunError{Kind: supervisor.ErrInterrupted, Signal: sig}
	}
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"success", nil, 0},
		{"error result", runErr(supervisor.ErrErrorResult), 1},
		{"usage", usagef("bad flag"), 2},
		{"config error found by the supervisor", runErr(supervisor.ErrConfig), 2},
		{"budget", runErr(supervisor.ErrBudget), 9},
		{"wrapped usage", fmt.Errorf("context: %w", usagef("bad")), 2},
		{"retries exhausted", runErr(supervisor.ErrRetriesExhausted), 3},
		{"not safe to retry", runErr(supervisor.ErrNotSafeToRetry), 4},
		{"busy", runErr(supervisor.ErrBusy), 7},
		{"auth", runErr(supervisor.ErrAuth), 8},
		{"rate limit", runErr(supervisor.ErrRateLimit), 75},
		{"session timeout", runErr(supervisor.ErrSessionTimeout), 124},
		{"start", runErr(supervisor.ErrStart), 127},
		{"SIGINT", interrupted(syscall.SIGINT), 130},
		{"SIGTERM", interrupted(syscall.SIGTERM), 143},
		{"os.Interrupt", interrupted(os.Interrupt), 130},
		{"SIGHUP", interrupted(syscall.SIGHUP), 129},
		{"interrupted, signal unknown", interrupted(nil), 130},
		{"bare kind", supervisor.ErrRetriesExhausted, 3},
		{"kind wrapped by fmt", fmt.Errorf("attempt 2: %w", supervisor.ErrAuth), 8},
		{"RunError wrapped by fmt", fmt.Errorf("x: %w", runErr(supervisor.ErrStart)), 127},
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
	kinds := []error{
		supervisor.ErrErrorResult, supervisor.ErrRetriesExhausted,
		supervisor.ErrNotSafeToRetry, supervisor.ErrAuth, supervisor.ErrRateLimit, supervisor.ErrSessionTimeout,
		supervisor.ErrStart, supervisor.ErrInterrupted, supervisor.ErrBusy, supervisor.ErrConfig, supervisor.ErrBudget, supervisor.ErrContextExhausted, supervisor.ErrPoisoned,
	}
	var codes []int
	for _, r := range exitCodes() {
		codes = append(codes, r.code)
	}
	for _, k := range kinds {
		found := false
		for _, r := range exitCodes() {
			if slices.Contains(r.kinds, k) {
				found = true
			}
		}
		if !found {
			t.Errorf("no exit code row for %v", k)
		}
	}
	want := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 75, 124, 127, 130, 143}
	if !slices.Equal(codes, want) {
		t.Errorf("documented codes %v, want %v", codes, want)
	}
}
