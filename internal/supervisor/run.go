// Package supervisor runs one issue under supervision: it spawns the CLI for
// each attempt, follows its stream, enforces the idle and tool timers, kills
// the whole process tree when needed and reports how the run ended.
package supervisor

import (
	"context"
	"io"
	"os"

	"github.com/rs/zerolog"
)

// Deps are the supervisor's connections to the outside world.
type Deps struct {
	Log zerolog.Logger
	// Stdout receives the final result text.
	Stdout io.Writer
	// Signals delivers SIGINT/SIGTERM: the first stops the run within
	// ShutdownGrace, a second kills the tree at once.
	Signals <-chan os.Signal
}

// Report says what a run did; it is returned with or without an error.
type Report struct {
	RunDir    string
	Attempts  int
	SessionID string
	Result    string
	CostUSD   float64
}

// Run supervises cfg.IssueID until it succeeds or fails. The error is nil
// only when claude reported success; otherwise it is a *RunError.
func Run(ctx context.Context, cfg Config, deps Deps) (Report, error) {
	panic("not implemented yet")
}
