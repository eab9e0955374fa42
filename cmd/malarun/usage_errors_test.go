package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// probeCommand is a subcommand as a new one would be written: it sets no
// flag of the app's and marks nothing but the one error it calls a usage
// error.
func probeCommand() *cobra.Command {
	var mark bool
	probe := &cobra.Command{
		Use:  "probe [ARG]",
		Args: cobra.MaximumNArgs(1),
		RunE: func(*cobra.Command, []string) error {
			if mark {
				return usagef("probe: marked by the command")
			}
			return errors.New("probe: failed at run time")
		},
	}
	probe.Flags().BoolVar(&mark, "mark", false, "")
	probe.Flags().Int("count", 0, "")
	probe.Flags().Bool("left", false, "")
	probe.Flags().Bool("right", false, "")
	probe.MarkFlagsMutuallyExclusive("left", "right")
	needs := &cobra.Command{
		Use:  "needs",
		RunE: func(*cobra.Command, []string) error { return errors.New("needs: failed at run time") },
	}
	needs.Flags().String("name", "", "")
	if err := needs.MarkFlagRequired("name"); err != nil {
		panic(err)
	}
	probe.AddCommand(needs)
	return probe
}

// runProbe runs the real command tree with probeCommand added.
func runProbe(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	c := newCLI(t)
	a := &app{deps: &deps{stdin: c.stdin, stdout: &stdout, stderr: &stderr,
		getenv: func(k string) string { return c.env[k] }, environ: c.environ, signals: c.signals}}
	root := newRootCmd(a)
	root.AddCommand(probeCommand())
	return a.execute(context.Background(), root, args), stderr.String()
}

// A command's own errors are not usage errors unless it marks them; every
// check cobra makes of the command line is one.
func TestUsageErrorsOfANewCommand(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"run-time error", []string{"probe"}, exitFailure, "probe: failed at run time"},
		{"run-time error with an argument", []string{"probe", "x"}, exitFailure, "probe: failed at run time"},
		{"run-time error, any arguments", []string{"probe", "needs", "--name", "n", "x", "y"}, exitFailure, "needs: failed at run time"},
		{"error the command marks", []string{"probe", "--mark"}, exitUsage, "probe: marked by the command"},
		{"unknown flag", []string{"probe", "--bogus"}, exitUsage, "unknown flag: --bogus"},
		{"flag typo", []string{"probe", "--cont", "1"}, exitUsage, "did you mean --count?"},
		{"bad flag value", []string{"probe", "--count", "x"}, exitUsage, `invalid argument "x" for "--count"`},
		{"flag without its value", []string{"probe", "--count"}, exitUsage, "flag needs an argument"},
		{"too many arguments", []string{"probe", "x", "y"}, exitUsage, "accepts at most 1 arg(s), received 2"},
		{"flags that exclude each other", []string{"probe", "--left", "--right"}, exitUsage, "[left right] were all set"},
		{"missing required flag", []string{"probe", "needs"}, exitUsage, `required flag(s) "name" not set`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stderr := runProbe(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, want %d with %q; stderr:\n%s", code, tt.code, tt.want, stderr)
			}
		})
	}
}

// Every command of the real tree, cobra's own included, answers a bad flag
// and bad arguments with exit 2.
func TestUsageErrorsOfEveryCommand(t *testing.T) {
	root := newRootCmd(&app{deps: &deps{}})
	markUsageErrors(root)
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
	}
	walk(root, nil)
	for _, want := range []string{"version", "status", "help", "completion"} {
		found := false
		for _, p := range paths {
			found = found || len(p) == 1 && p[0] == want
		}
		if !found {
			t.Errorf("no command %q in the tree %q", want, paths)
		}
	}
	for _, path := range paths {
		t.Run("malarun "+strings.Join(path, " ")+" --no-such-flag", func(t *testing.T) {
			c := newCLI(t)
			c.run(append(path, "--no-such-flag")...).wantUsage(t, "unknown flag: --no-such-flag")
		})
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"version", "x"}, `unknown command "x" for "malarun version"`},
		{[]string{"status", "a", "b"}, "accepts at most 1 arg(s), received 2"},
		{[]string{"completion", "bash", "x"}, `unknown command "x" for "malarun completion bash"`},
	} {
		t.Run("malarun "+strings.Join(tt.args, " "), func(t *testing.T) {
			newCLI(t).run(tt.args...).wantUsage(t, tt.want)
		})
	}
}
