package main

import (
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/malarun/malarun/internal/manpage"
)

// newManCmd is the hidden `malarun man`: the manual page, made from the
// command tree itself (every command, flag and help text) and the exit
// code table, so it cannot drift from --help. `make man` writes it to
// man/malarun.1 and `make install` installs it. Hidden: it is a build
// step, not something a user of the page needs.
func newManCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:    "man",
		Short:  "Write malarun's manual page (roff, section 1) to stdout",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := readVersion(versionOptions{version: version, buildInfo: debug.ReadBuildInfo})
			return manpage.Write(a.deps.stdout, manPage(cmd.Root(), v.Version, sourceDate(debug.ReadBuildInfo)))
		},
	}
}

// sourceDate is the day of the commit the binary was built from, for the
// page's footer: a date that says how old the page is, and the same for
// the same source (no build date). "" when the build recorded no commit.
func sourceDate(buildInfo func() (*debug.BuildInfo, bool)) string {
	info, ok := buildInfo()
	if !ok {
		return ""
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.time" && len(s.Value) >= len("2006-01-02") {
			return s.Value[:len("2006-01-02")]
		}
	}
	return ""
}

// manPage describes the page of root's tree.
func manPage(root *cobra.Command, ver, date string) manpage.Page {
	name := root.Name()
	cmds := visibleCommands(root)
	synopsis := [][]manpage.Span{useLine(root)}
	for _, c := range cmds {
		synopsis = append(synopsis, useLine(c))
	}
	return manpage.Page{
		Name: name, Section: "1", Date: date, Source: name + " " + ver, Manual: "User Commands",
		Sections: []manpage.Section{
			{Title: "NAME", Blocks: []manpage.Block{manpage.Para(name + " - " + root.Short)}},
			{Title: "SYNOPSIS", Blocks: []manpage.Block{manpage.Lines(synopsis...)}},
			{Title: "DESCRIPTION", Blocks: manpage.Text(root.Long)},
			{Title: "COMMANDS", Blocks: commandBlocks(cmds)},
			{Title: "OPTIONS", Blocks: append(flagItems(root),
				manpage.Para("Every command also takes -h, --help, which prints its help."))},
			{Title: "EXIT STATUS", Blocks: exitStatusBlocks()},
			{Title: "ENVIRONMENT", Blocks: environmentBlocks()},
			{Title: "FILES", Blocks: fileBlocks()},
			{Title: "EXAMPLES", Blocks: manpage.Text(root.Example)},
			{Title: "SEE ALSO", Blocks: []manpage.Block{manpage.Para(name + " --help, " + name +
				" exit-codes --json, and the README and docs/design.md of the source: https://github.com/malarun/malarun")}},
		},
	}
}

// visibleCommands is every command a user may type, depth first, in the
// order --help lists them; hidden ones (man, cobra's __complete) and the
// help command are left out.
func visibleCommands(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			out = append(out, sub)
			out = append(out, visibleCommands(sub)...)
		}
	}
	return out
}

// usePattern matches what a use line types as shown (a flag) or has the
// reader replace (an upper-case placeholder).
func usePattern() *regexp.Regexp {
	return regexp.MustCompile(`--?[a-z][a-z-]*|[A-Z][A-Z_]*[A-Z]`)
}

// useLine is c's use line: the command in bold, its flags in bold and the
// placeholders in italic.
func useLine(c *cobra.Command) []manpage.Span {
	path := c.CommandPath()
	rest := strings.TrimPrefix(c.UseLine(), path)
	spans := []manpage.Span{manpage.B(path)}
	last := 0
	for _, m := range usePattern().FindAllStringIndex(rest, -1) {
		spans = append(spans, manpage.R(rest[last:m[0]]))
		if rest[m[0]] == '-' {
			spans = append(spans, manpage.B(rest[m[0]:m[1]]))
		} else {
			spans = append(spans, manpage.I(rest[m[0]:m[1]]))
		}
		last = m[1]
	}
	return append(spans, manpage.R(rest[last:]))
}

// commandBlocks gives each command a subsection, headed by its use line:
// its help, its examples and its flags.
func commandBlocks(cmds []*cobra.Command) []manpage.Block {
	var out []manpage.Block
	for _, c := range cmds {
		out = append(out, manpage.Sub(c.UseLine()))
		if c.Long != "" {
			out = append(out, manpage.Text(c.Long)...)
		} else {
			out = append(out, manpage.Para(c.Short+"."))
		}
		if c.Example != "" {
			out = append(out, manpage.Para("Examples:"))
			out = append(out, manpage.Text(c.Example)...)
		}
		if items := flagItems(c); len(items) > 0 {
			out = append(out, manpage.Para("Options:"))
			out = append(out, items...)
		}
	}
	return out
}

// flagItems is one tagged paragraph per flag of c (not inherited ones),
// in --help's order: "-q, --quiet" or "--prompt FILE", then the help and
// the default, as pflag writes them.
func flagItems(c *cobra.Command) []manpage.Block {
	var out []manpage.Block
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		varname, usage := pflag.UnquoteUsage(f)
		var tag []manpage.Span
		if f.Shorthand != "" {
			tag = append(tag, manpage.B("-"+f.Shorthand), manpage.R(", "))
		}
		tag = append(tag, manpage.B("--"+f.Name))
		if varname != "" {
			tag = append(tag, manpage.R(" "), manpage.I(varname))
		}
		if d := f.DefValue; d != "" && !(f.Value.Type() == "bool" && d == "false") {
			usage += fmt.Sprintf(" (default %s)", d)
		}
		out = append(out, manpage.Item(tag, usage))
	})
	return out
}

// exitStatusBlocks is the exit code table, the one the run maps errors
// with (exitCodes).
func exitStatusBlocks() []manpage.Block {
	var out []manpage.Block
	for _, r := range exitCodes() {
		out = append(out, manpage.Item([]manpage.Span{manpage.B(fmt.Sprint(r.code))},
			fmt.Sprintf("%s: %s. Retry: %s; next invocation: %s.", string(r.outcome), r.doc, r.retry, r.next)))
	}
	return append(out, manpage.Para(`Retry says whether running the issue again can help, and when; next
invocation what the issue's next malarun does with the recorded run (see malarun exit-codes --help).
malarun exit-codes --json prints this table for the programs that run malarun.`))
}
