package main

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// helpWidth is the widest line of --help: a terminal of 100 columns shows
// every row whole, without the terminal's own wrap breaking the columns
// (the flags' rows ran to 280 columns: issue 49).
const helpWidth = 100

// flagColumn is the widest a flag's name (with its value's name) may be
// and still have its help beside it; a longer one has its help on the
// next lines, so that one long name does not narrow every flag's help.
const flagColumn = 34

// helpTable lays rows out in columns two spaces apart, indented by two,
// the last column's text wrapped to helpWidth under its own start.
func helpTable(rows [][]string) string {
	var widths []int
	for _, r := range rows {
		for i, cell := range r[:len(r)-1] {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	start := 2
	for _, w := range widths {
		start += w + 2
	}
	var b strings.Builder
	for _, r := range rows {
		b.WriteString("  ")
		for i, cell := range r[:len(r)-1] {
			b.WriteString(cell + strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell)+2))
		}
		for i, line := range wrapWords(r[len(r)-1], max(helpWidth-start, 20)) {
			if i > 0 {
				b.WriteString("\n" + strings.Repeat(" ", start))
			}
			b.WriteString(line)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// wrapWords cuts text into lines of at most width runes at spaces (a
// word longer than width stands alone on its line).
func wrapWords(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		switch {
		case line == "":
			line = w
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	return append(lines, line)
}

// configHelp documents the keys from the key table itself.
func configHelp() string {
	var b strings.Builder
	b.WriteString(`Configuration:
  Each key is set by, highest first: its flag, its MALARUN_* environment
  variable (MALARUN_ and the key in capitals, e.g. MALARUN_IDLE_TIMEOUT; an
  empty value counts as unset), the config file, the default.
  The config file (YAML) is the first of: --config FILE, ./malarun.yaml,
  $XDG_CONFIG_HOME/malarun/config.yaml ($XDG_CONFIG_HOME defaults to
  ~/.config); only that one is read. Unknown keys and bad values are errors.
  Durations need a unit (30s, 5m, 1h30m); a bare number is refused.
  $XDG_STATE_HOME defaults to ~/.local/state.

`)
	// Each flag's help names its variable: a column of them here would
	// leave the defaults too little of helpWidth.
	rows := [][]string{{"KEY", "TYPE", "DEFAULT"}}
	for _, k := range configKeys() {
		rows = append(rows, []string{k.name, k.kind, k.defaultDoc()})
	}
	b.WriteString(helpTable(rows))
	return b.String()
}

// exitCodeHelp documents the exit code table.
func exitCodeHelp() string {
	var b strings.Builder
	b.WriteString("Exit codes:\n")
	var rows [][]string
	for _, r := range exitCodes() {
		rows = append(rows, []string{fmt.Sprint(r.code), r.doc})
	}
	b.WriteString(helpTable(rows))
	return b.String()
}
