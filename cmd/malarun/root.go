package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/malarun/malarun/internal/supervisor"
)

// deps are the command line's connections to the outside world; tests
// replace any of them.
type deps struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	environ        func() []string
	signals        <-chan os.Signal
	// runSupervisor executes the run (supervisor.Run outside tests).
	runSupervisor func(context.Context, supervisor.Config, supervisor.Deps) (supervisor.Report, error)
}

// app is one execution of the command line.
type app struct {
	deps *deps
	// reached is set once a command's own code runs: an error before that
	// came from cobra's parsing (unknown flag, bad arguments): a usage error.
	reached bool
}

// run is main without the globals; it returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer,
	getenv func(string) string, environ func() []string, sigs <-chan os.Signal) int {
	return execute(ctx, args, &deps{
		stdin: stdin, stdout: stdout, stderr: stderr,
		getenv: getenv, environ: environ, signals: sigs,
		runSupervisor: supervisor.Run,
	})
}

func execute(ctx context.Context, args []string, d *deps) int {
	a := &app{deps: d}
	root := newRootCmd(a)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err != nil && !a.reached {
		err = usage(err)
	}
	code := exitCodeFor(err)
	if ue, ok := errors.AsType[*usageError](err); err != nil && (!ok || !ue.quiet) {
		for line := range strings.SplitSeq(strings.TrimRight(err.Error(), "\n"), "\n") {
			fmt.Fprintf(d.stderr, "malarun: %s\n", line)
		}
	}
	return code
}

func newRootCmd(a *app) *cobra.Command {
	var opts runOptions
	root := &cobra.Command{
		Use:   "malarun ISSUE_ID --prompt FILE [flags] [-- extra claude args]",
		Short: "Supervise one headless Claude Code run",
		Long: `malarun runs one headless Claude Code session (claude -p, stream-json) for one
unit of work, an issue, under supervision: it follows the output, kills the
whole process tree of a run that goes silent or stays stuck, and exits with a
documented code. The final result text goes to stdout; logs go to stderr.

ISSUE_ID names the run's folder under state_dir: letters, digits, '.', '_' and
'-', at most 128 characters, not "." or "..", not a command name.
The prompt is sent to claude on stdin; --prompt - reads it from malarun's stdin.
Arguments after -- go to claude, except the flags malarun owns (-p/--print,
--output-format, --input-format, --verbose, --resume/-r, --continue/-c,
--session-id, --fork-session, --include-partial-messages).`,
		Example: `  malarun issue-123 --prompt task.md
  cat task.md | malarun issue-123 --prompt -
  malarun issue-123 --prompt task.md -- --model sonnet --allowedTools Bash`,
		Args:                       cobra.ArbitraryArgs,
		SilenceUsage:               true,
		SilenceErrors:              true,
		SuggestionsMinimumDistance: 2,
		RunE: func(cmd *cobra.Command, args []string) error {
			a.reached = true
			if len(args) == 0 && cmd.Flags().NFlag() == 0 {
				cmd.SetOut(a.deps.stderr)
				_ = cmd.Help()
				// The help is the whole answer to a bare "malarun".
				return &usageError{err: errors.New("no arguments"), quiet: true}
			}
			if err := opts.complete(cmd, args, a.deps); err != nil {
				return err
			}
			return runRun(cmd.Context(), opts, a.deps)
		},
	}
	root.SetIn(a.deps.stdin)
	root.SetOut(a.deps.stdout)
	root.SetErr(a.deps.stderr)
	root.SetFlagErrorFunc(flagError)
	fl := root.Flags()
	fl.SortFlags = false
	fl.StringVar(&opts.promptPath, "prompt", "", "the task: a `FILE`, or - to read it from stdin (required for a run)")
	fl.StringVar(&opts.configPath, "config", "", "config `FILE` (YAML) to read instead of ./malarun.yaml or $XDG_CONFIG_HOME/malarun/config.yaml")
	fl.BoolVar(&opts.reset, "reset", false, "start the issue over: do not continue a poisoned, interrupted or orphaned run")
	addKeyFlags(fl, configKeys())
	root.AddCommand(newVersionCmd(a), newStatusCmd(a))

	defaultHelp := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		defaultHelp(c, args)
		if c == root {
			fmt.Fprint(c.OutOrStdout(), "\n"+configHelp()+"\n"+exitCodeHelp())
		}
	})
	return root
}

// flagError adds a hint to cobra's flag errors: the closest flag for a typo,
// or where claude's own flags go.
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return usage(err)
	}
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	if s := closest(name, names); s != "" {
		return usagef("%s; did you mean --%s?", msg, s)
	}
	if cmd == cmd.Root() {
		return usagef("%s (claude's own flags go after --, e.g. malarun ISSUE_ID --prompt FILE -- --%s ...)", msg, name)
	}
	return usage(err)
}
