package main

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// markUsageErrors makes cobra's own checks of a command line return usage
// errors (exit 2), in every command of root's tree, cobra's help and
// completion commands included: flag errors through flagError (the root's
// flag error func serves every subcommand), argument errors, required
// flags and flag groups through each command's Args, which cobra calls
// once the flags are parsed and before any hook or RunE. What a RunE
// returns is left as it is: only what a command marks with usage() is a
// usage error, so a new command needs nothing set for its failures to keep
// their own exit codes. (cobra's hidden __complete, for shells, is created
// during execution and stays unmarked.)
func markUsageErrors(root *cobra.Command) {
	root.SetFlagErrorFunc(flagError)
	// cobra adds these when it executes; added now, they get marked too.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var mark func(*cobra.Command)
	mark = func(c *cobra.Command) {
		c.Args = usageArgs(c.Args)
		for _, sub := range c.Commands() {
			mark(sub)
		}
	}
	mark(root)
}

// usageArgs wraps an argument check (nil: any arguments, as cobra reads it
// for a subcommand; the root sets its own) so that its error, and those of
// the flag checks cobra makes after it, are usage errors. cobra checks
// required flags and flag groups again afterwards; by then they pass.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if check != nil {
			if err := check(cmd, args); err != nil {
				return usage(err)
			}
		}
		if err := cmd.ValidateRequiredFlags(); err != nil {
			return usage(err)
		}
		return usage(cmd.ValidateFlagGroups())
	}
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
	if flag, _, _ := strings.Cut(name, "="); cmd.Root().Flags().Lookup(flag) != nil {
		// `malarun status --prompt task.md`: a run of an issue named like a
		// command. cobra chose the command, whose flags do not include the
		// run's: say why the run cannot be.
		return usagef("%s: %q is a malarun command, so it cannot be an issue id (the run's flags do not apply to it): choose another id",
			msg, cmd.Name())
	}
	return usage(err)
}
