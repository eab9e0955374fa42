package main

import (
	"fmt"
	"strings"
	"text/template"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// usageTemplate is cobra's default usage template (cobra 1.10) with the
// flags laid out by flagUsages, wrapped to helpWidth. Its functions are
// this template's own (usageFuncs), not cobra's package-wide ones.
const usageTemplate = `Usage:{{if .Runnable}}
  {{useLine .UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} [command]{{end}}{{if gt (len .Aliases) 0}}

Aliases:
  {{.NameAndAliases}}{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}

Available Commands:{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}

Flags:
{{flagUsages .LocalFlags}}{{end}}{{if .HasAvailableInheritedFlags}}

Global Flags:
{{flagUsages .InheritedFlags}}{{end}}{{if .HasAvailableSubCommands}}

Use "{{.CommandPath}} [command] --help" for more information about a command.{{end}}
`

// setUsage makes every command of root's tree write its usage (the part
// of --help after the description) with usageTemplate.
func setUsage(root *cobra.Command) {
	tmpl := template.Must(template.New("usage").Funcs(template.FuncMap{
		"rpad":       func(s string, n int) string { return s + strings.Repeat(" ", max(0, n-utf8.RuneCountInString(s))) },
		"flagUsages": flagUsages,
		"useLine":    wrapUseLine,
	}).Parse(usageTemplate))
	root.SetUsageFunc(func(c *cobra.Command) error {
		return tmpl.Execute(c.OutOrStderr(), c)
	})
}

// wrapUseLine is a command's use line, wrapped to helpWidth (after its
// two-space indent) between its bracketed parts, the lines after the first
// indented under the command's name.
func wrapUseLine(line string) string {
	if utf8.RuneCountInString(line)+2 <= helpWidth {
		return line
	}
	// The parts: what comes before the first " [", then each "[...]" with
	// what follows it up to the next.
	var parts []string
	for {
		i := strings.Index(line, " [")
		if i < 0 {
			parts = append(parts, line)
			break
		}
		parts = append(parts, line[:i])
		line = line[i+1:]
	}
	indent := "    "
	out, cur := "", parts[0]
	for _, p := range parts[1:] {
		if utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(p)+2 > helpWidth {
			out += cur + "\n  " + indent
			cur = p
			continue
		}
		cur += " " + p
	}
	return out + cur
}

// flagUsages lists the flags of fs as pflag does (-q, --quiet, a value's
// name, the default), the help wrapped to helpWidth in a column of its
// own; a name wider than flagColumn has its help on the lines below.
func flagUsages(fs *pflag.FlagSet) string {
	type row struct{ name, help string }
	var rows []row
	width := 0
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		name := "      --" + f.Name
		if f.Shorthand != "" && f.ShorthandDeprecated == "" {
			name = "  -" + f.Shorthand + ", --" + f.Name
		}
		varname, help := pflag.UnquoteUsage(f)
		if varname != "" {
			name += " " + varname
		}
		if f.NoOptDefVal != "" && f.Value.Type() != "bool" {
			name += "[=" + f.NoOptDefVal + "]"
		}
		if d := flagDefault(f); d != "" {
			help += " (default " + d + ")"
		}
		if f.Deprecated != "" {
			help += " (DEPRECATED: " + f.Deprecated + ")"
		}
		rows = append(rows, row{name, help})
		if n := utf8.RuneCountInString(name); n <= flagColumn {
			width = max(width, n)
		}
	})
	start := width + 3
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(r.name)
		pad := start - utf8.RuneCountInString(r.name)
		if pad < 2 {
			b.WriteString("\n")
			pad = start
		}
		for i, line := range wrapWords(r.help, max(helpWidth-start, 20)) {
			if i > 0 {
				b.WriteString("\n")
				pad = start
			}
			b.WriteString(strings.Repeat(" ", pad) + line)
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// flagDefault is how --help shows f's default: "" for a zero value (as
// pflag leaves it out), a string quoted.
func flagDefault(f *pflag.Flag) string {
	d := f.DefValue
	if f.Value.Type() == "string" {
		if d == "" {
			return ""
		}
		return fmt.Sprintf("%q", d)
	}
	switch d {
	case "", "<nil>", "false", "0", "[]":
		return ""
	case "0s":
		if f.Value.Type() == "duration" {
			return ""
		}
	}
	return d
}
