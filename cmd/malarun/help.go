package main

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// configHelp documents the keys from the key table itself.
func configHelp() string {
	var b strings.Builder
	b.WriteString(`Configuration:
  Each key is set by, highest first: its flag, its MALARUN_* environment
  variable (an empty value counts as unset), the config file, the default.
  The config file (YAML) is the first of: --config FILE, ./malarun.yaml,
  $XDG_CONFIG_HOME/malarun/config.yaml ($XDG_CONFIG_HOME defaults to
  ~/.config); only that one is read. Unknown keys and bad values are errors.
  Durations need a unit (30s, 5m, 1h30m); a bare number is refused.
  $XDG_STATE_HOME defaults to ~/.local/state.

`)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  KEY\tENV\tTYPE\tDEFAULT")
	for _, k := range configKeys() {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", k.name, k.envName(), k.kind, k.defaultDoc())
	}
	tw.Flush()
	return b.String()
}

// exitCodeHelp documents the exit code table.
func exitCodeHelp() string {
	var b strings.Builder
	b.WriteString("Exit codes:\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, r := range exitCodes() {
		fmt.Fprintf(tw, "  %d\t%s\n", r.code, r.doc)
	}
	tw.Flush()
	return b.String()
}
