package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/event"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/malarun/malarun/internal/ui"
)

// A program that runs `malarun ISSUE --json` reads stdout as a report
// whatever happened, so every exit of the run command prints one, a
// mistake on the command line included (docs/design.md §D19). A run that
// began prints its own (runOutput.finish); these helpers cover the exits
// before it: cobra's flag parsing, the argument checks, the config file.

// jsonRunRequested reads args as pflag would, up to "--" (the rest is
// claude's), and reports whether they run the run command with --json
// set, and the issue they name ("" for none). It does not depend on
// cobra's parse, which stops at the first bad flag, perhaps before --json.
func jsonRunRequested(root *cobra.Command, args []string) (issue string, ok bool) {
	if cmd, _, err := root.Find(args); err != nil || cmd != root {
		return "", false // a subcommand has its own --json, or none
	}
	flags := root.Flags()
	takesValue := func(f *pflag.Flag) bool { return f != nil && f.NoOptDefVal == "" }
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return issue, ok
		case strings.HasPrefix(a, "--"):
			name, value, hasValue := strings.Cut(a[2:], "=")
			if name == "json" {
				b, err := strconv.ParseBool(value)
				ok = !hasValue || err == nil && b
			} else if !hasValue && takesValue(flags.Lookup(name)) {
				i++ // the next argument is this flag's value, even "--json"
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			// Shorthands in a group (-q); one that takes a value takes the
			// rest of the group, or the next argument when it ends it.
			for j := 1; j < len(a); j++ {
				if takesValue(flags.ShorthandLookup(a[j : j+1])) {
					if j == len(a)-1 {
						i++
					}
					break
				}
			}
		case issue == "":
			issue = a
		}
	}
	return issue, ok
}

// writeUsageReport prints the --json report of a run that never began:
// outcome usage (or whatever err is), the error as its reason.
func writeUsageReport(d *deps, issue string, err error, started time.Time) {
	report := ui.NewReport(event.Report{}, ui.Ending{Issue: issue, Outcome: string(outcomeFor(err)), ExitCode: exitCodeFor(err),
		Reason: err.Error(), Started: started, Duration: time.Since(started)})
	if werr := (&runOutput{d: d}).writeJSON(report, stringWriterTo("")); werr != nil {
		io.WriteString(d.stderr, fmt.Sprintf("malarun: could not write the --json report: %v\n", ui.Inert(werr.Error())))
	}
}
