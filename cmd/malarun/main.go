// Command malarun supervises one headless Claude Code run for one issue: it
// spawns the CLI, follows its stream, kills a silent or stuck process tree and
// exits with a documented code (see `malarun --help`).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// The supervisor handles SIGINT/SIGTERM itself (first: stop within
	// shutdown_grace; second: kill at once), so it needs the raw signals, not
	// a context that is cancelled once. Buffered so a quick second signal is
	// not dropped while the first is being handled.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv, os.Environ, sigs))
}
