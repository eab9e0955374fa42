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
	// The supervisor handles every signal that would end malarun itself
	// (first: stop within shutdown_grace; second: kill at once), so it
	// needs the raw signals, not a context that is cancelled once. Buffered
	// so a quick second signal is not dropped while the first is handled.
	sigs := make(chan os.Signal, 2)
	notify(sigs, shutdownSignals())
	// SIGPIPE is caught, not ignored: caught, a write to a reader that went
	// away fails with EPIPE (which the output sinks note) instead of
	// killing malarun mid-run; ignored, the disposition would pass through
	// exec to claude and every tool it runs, and `yes | head` would behave
	// otherwise for the agent. Nobody reads this channel: signal.Notify
	// drops what does not fit, and catching is all that is wanted. If
	// malarun was started with SIGPIPE ignored, that is left as it is.
	notify(make(chan os.Signal, 1), []os.Signal{syscall.SIGPIPE})
	stop := startProfile()
	code := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv, os.Environ, sigs)
	stop()
	os.Exit(code)
}

// shutdownSignals end a run as an interruption: the tree is stopped, the
// record says interrupted (resumable, no reclaim counted) and malarun exits
// 128 + the signal. SIGHUP is a closed terminal or a dropped ssh session,
// SIGQUIT a Ctrl-\ (no goroutine dump: that is Go's default for it).
func shutdownSignals() []os.Signal {
	return []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}
}

// notify relays sigs to c, but for those malarun was started with
// ignored: `nohup malarun ...` ignores SIGHUP, a shell's background job
// SIGINT. signal.Notify would catch them again and undo that choice
// (os/signal: a signal passed to Notify "will no longer be ignored"). Go's
// runtime keeps only SIGHUP and SIGINT ignored that way; SIGQUIT it takes
// over at start-up in any case and keeps the inherited disposition only in
// its own unexported state (runtime.fwdSig), so an ignored SIGQUIT cannot
// be seen here: docs/record.md names the exception (issue 32). With none left,
// nothing is relayed (Notify with no signal would relay every signal).
func notify(c chan<- os.Signal, sigs []os.Signal) {
	var caught []os.Signal
	for _, s := range sigs {
		if !signal.Ignored(s) {
			caught = append(caught, s)
		}
	}
	if len(caught) > 0 {
		signal.Notify(c, caught...)
	}
}
