package main

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			c := newCLI(t)
			o := c.run(args...)
			if o.code != 0 || o.calls != 0 || o.stderr != "" {
				t.Fatalf("code %d, calls %d, stderr %q", o.code, o.calls, o.stderr)
			}
			want := []string{
				"malarun ISSUE_ID --prompt FILE [flags] [-- extra claude args]",
				"malarun issue-123 --prompt task.md\n",
				"cat task.md | malarun issue-123 --prompt -\n",
				"malarun issue-123 --prompt task.md -- --model sonnet --allowedTools Bash\n",
				"--prompt FILE", "--config FILE", "version",
				"--config FILE, ./malarun.yaml,",
				"$XDG_CONFIG_HOME/malarun/config.yaml",
				"Durations need a unit",
				"-q, --quiet", "--json", "--events FILE", "docs/report.schema.json",
				"status line", "GITHUB_ACTIONS=true", "$GITHUB_STEP_SUMMARY", "::stop-commands::",
				"malarun issue-123 --prompt task.md --json > report.json\n",
				"malarun issue-123 --prompt task.md --quiet --events events.jsonl\n",
			}
			for _, k := range configKeys() {
				want = append(want, k.name, k.envName(), "--"+k.flagName(), k.defaultDoc())
			}
			for _, r := range exitCodes() {
				want = append(want, r.doc)
			}
			// What it says, whatever the wrapping.
			words := strings.Join(strings.Fields(o.stdout), " ")
			for _, w := range want {
				if !strings.Contains(words, strings.Join(strings.Fields(w), " ")) {
					t.Errorf("help lacks %q", w)
				}
			}
			for _, r := range exitCodes() {
				if !strings.Contains(o.stdout, fmt.Sprintf("\n  %-3d  %s ", r.code, strings.Fields(r.doc)[0])) {
					t.Errorf("help lacks the row of exit code %d", r.code)
				}
			}
			if t.Failed() {
				t.Logf("help:\n%s", o.stdout)
			}
		})
	}
}

// Every command's --help fits a terminal of helpWidth columns: no row is
// cut or broken into the next by the terminal (issue 49).
func TestHelpFitsItsWidth(t *testing.T) {
	root := newRootCmd(&app{deps: &deps{}})
	cmds := append([]*cobra.Command{root}, visibleCommands(root)...)
	for _, cmd := range cmds {
		args := append(strings.Fields(strings.TrimPrefix(cmd.CommandPath(), "malarun")), "--help")
		o := newCLI(t).run(args...)
		if o.code != 0 || len(o.stdout) < 100 {
			t.Fatalf("%q: exit %d, %q", args, o.code, o.stdout)
		}
		for n, line := range strings.Split(o.stdout, "\n") {
			if w := utf8.RuneCountInString(line); w > helpWidth {
				t.Errorf("%q: line %d is %d columns wide: %s", args, n+1, w, line)
			}
		}
	}
}

func TestVersionHelpIsShort(t *testing.T) {
	o := newCLI(t).run("version", "--help")
	if o.code != 0 || !strings.Contains(o.stdout, "malarun version") {
		t.Fatalf("code %d, stdout:\n%s", o.code, o.stdout)
	}
	if strings.Contains(o.stdout, "Exit codes:") {
		t.Errorf("the root's configuration and exit code sections belong to the root's help only")
	}
}

// Every command's help shows each of its flags and an example.
func TestSubcommandHelp(t *testing.T) {
	for _, args := range [][]string{{"status", "--help"}, {"version", "--help"}, {"help", "status"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			c := newCLI(t)
			o := c.run(args...)
			if o.code != 0 || o.calls != 0 {
				t.Fatalf("code %d, calls %d, stderr %q", o.code, o.calls, o.stderr)
			}
			root := newRootCmd(&app{deps: &deps{}})
			cmd, _, err := root.Find(args[:1])
			if args[0] == "help" {
				cmd, _, err = root.Find(args[1:])
			}
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"Examples:\n", cmd.Example}
			cmd.Flags().VisitAll(func(f *pflag.Flag) { want = append(want, "--"+f.Name) })
			for _, w := range want {
				if !strings.Contains(o.stdout, w) {
					t.Errorf("help lacks %q:\n%s", w, o.stdout)
				}
			}
		})
	}
}

func TestWrapUseLine(t *testing.T) {
	short := "malarun status [ISSUE_ID] [--json] [flags]"
	if got := wrapUseLine(short); got != short {
		t.Errorf("a short line changed: %q", got)
	}
	long := "malarun summary [--since 12h|TIME] [--since-summary FILE] [--format text|md|json|html] [--out DIR] [--page N] [flags]"
	got := wrapUseLine(long)
	if strings.Join(strings.Fields(got), " ") != long {
		t.Errorf("the words changed: %q", got)
	}
	for _, l := range strings.Split("  "+got, "\n") {
		if utf8.RuneCountInString(l) > helpWidth || !strings.HasPrefix(l, "  ") {
			t.Errorf("line %q: wider than %d or not indented", l, helpWidth)
		}
	}
}
