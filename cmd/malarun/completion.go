package main

import (
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/malarun/malarun/internal/supervisor"
)

// completeIssueID completes an ISSUE_ID argument (the first positional
// argument of the run, status and show) with the issues in the
// configured state_dir, found as the command itself finds it: --state-dir,
// --config, MALARUN_STATE_DIR, the config file, the default. Later
// arguments get rest: the run's are claude's (after --: paths, maybe),
// status and show take no more.
//
// Whether a -- came before cannot be told here: cobra parses the line
// once with a -- of its own appended, and pflag keeps that position in
// ArgsLenAtDash. The count of arguments is enough for the issue id.
func completeIssueID(a *app, rest cobra.ShellCompDirective) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, rest
		}
		lc, err := loadConfig(configKeys(), cmd.Flags(), a.deps.getenv)
		if err != nil {
			// The command would fail the same way; the shell shows nothing.
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return issueIDsIn(lc.settings.cfg.StateDir, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// issueIDsIn lists the issue folders in stateDir whose name starts with
// prefix. A name is offered only if it is a valid issue id: the shell puts
// what it gets into the command line, and a folder under state_dir is
// anybody's to name, so a name with a control character, a space, a quote
// or a $ (which the shell could act on, or a terminal could) is never
// printed; nor is a command's name, which a run would refuse.
func issueIDsIn(stateDir, prefix string) []cobra.Completion {
	entries, err := os.ReadDir(stateDir)
	if err != nil {
		return nil
	}
	var out []cobra.Completion
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, prefix) || supervisor.ValidateIssueID(name) != nil || isReservedName(name) {
			continue
		}
		out = append(out, name)
	}
	return out
}

// completeFlagValues completes the flags whose values are a fixed list:
// the keys of kind "a|b|c" (log_format, ...) and those given.
func completeFlagValues(cmd *cobra.Command, keys []keySpec, fixed map[string][]string) {
	lists := map[string][]string{}
	for _, k := range keys {
		if strings.Contains(k.kind, "|") {
			lists[k.flagName()] = strings.Split(k.kind, "|")
		}
	}
	for name, values := range fixed {
		lists[name] = values
	}
	for name, values := range lists {
		// Fails only for a flag that does not exist or has a function
		// already: neither can happen to a command built just now.
		_ = cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
	}
}
