package main

import (
	"os"
	"os/signal"
	"syscall"

	iproc "github.com/malarun/malarun/internal/proc"
	"github.com/spf13/cobra"
)

// newGuardCmd is the hidden command a run starts as its guard on a kernel
// with no parent-death signal (darwin; internal/proc/guard.go): it reads
// malarun's notes on stdin and, at EOF (malarun gone, however it died),
// ends the trees still watched.
func newGuardCmd() *cobra.Command {
	return &cobra.Command{
		Use:    iproc.GuardCommand,
		Short:  "internal: end a killed malarun's process tree",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			// A closed terminal or a Ctrl-C is for malarun, which stops its
			// tree itself; the guard's work starts only when malarun is gone.
			signal.Ignore(os.Interrupt, syscall.SIGHUP)
			// main catches SIGTERM and SIGQUIT for a run; the guard takes
			// their default action (a user may end it).
			signal.Reset(syscall.SIGTERM, syscall.SIGQUIT)
			iproc.RunGuard(os.Stdin)
			return nil
		},
	}
}

// guardCommand is how the supervisor starts the guard: this very binary.
// nil (no guard) if it cannot be found.
func guardCommand() []string {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return []string{exe, iproc.GuardCommand}
}
