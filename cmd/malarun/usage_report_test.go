package main

import (
	"slices"
	"strings"
	"testing"
)

// Every exit of the run command with --json prints one report, valid per
// the schema, with outcome usage and the error as its reason: whether the
// mistake is found by cobra's flag parsing (which may stop before it reads
// --json), by the argument checks or by the config loader.
func TestJSONReportOnEveryUsageError(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		issue string
		want  string
	}{
		{"bad flag value", []string{"issue-1", "--prompt", "P", "--json", "--idle-timeout=banana"}, "issue-1", `idle_timeout "banana"`},
		{"bad flag value before --json", []string{"issue-1", "--idle-timeout", "banana", "--prompt", "P", "--json"}, "issue-1", `idle_timeout "banana"`},
		{"unknown flag before --json", []string{"issue-1", "--bogus", "--json", "--prompt", "P"}, "issue-1", "unknown flag: --bogus"},
		{"unknown shorthand before --json", []string{"issue-1", "-x", "--json", "--prompt", "P"}, "issue-1", "unknown shorthand flag: 'x'"},
		{"bad bool value before --json", []string{"issue-1", "--reset=maybe", "--json=true", "--prompt", "P"}, "issue-1", `invalid argument "maybe"`},
		{"flag without its value", []string{"issue-1", "--json", "--prompt"}, "issue-1", "flag needs an argument: --prompt"},
		{"--json after -q", []string{"-q", "issue-1", "--json", "--bogus"}, "issue-1", "unknown flag: --bogus"},
		{"bad issue id", []string{"bad/id", "--prompt", "P", "--json"}, "bad/id", `issue id "bad/id" has '/'`},
		{"reserved issue id", []string{"Version", "--prompt", "P", "--json"}, "Version", `"Version" is reserved`},
		{"issue id of the usage-limit store", []string{"usage-limits", "--prompt", "P", "--json"}, "usage-limits", `"usage-limits" is not allowed`},
		{"mistyped command", []string{"verison", "--json"}, "verison", `did you mean "version"?`},
		{"too many arguments", []string{"issue-1", "more", "--prompt", "P", "--json"}, "issue-1", `unexpected argument "more"`},
		{"no issue id", []string{"--json", "--prompt", "P"}, "", "missing ISSUE_ID"},
		{"no prompt", []string{"issue-1", "--json"}, "issue-1", "missing --prompt"},
		{"claude flag malarun owns", []string{"issue-1", "--prompt", "P", "--json", "--", "--resume", "x"}, "issue-1", "which malarun owns"},
		{"config file missing", []string{"issue-1", "--prompt", "P", "--json", "--config", "/nonexistent/malarun.yaml"}, "issue-1", "does not exist"},
		{"config file with a bad value", []string{"issue-1", "--prompt", "P", "--json", "--config", "BADCONFIG"}, "issue-1", `idle_timeout "300"`},
		{"prompt file missing", []string{"issue-1", "--prompt", "/nonexistent/task.md", "--json"}, "issue-1", "prompt file /nonexistent/task.md does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCLI(t)
			p, cfg := c.prompt(), c.file("malarun.yaml", "idle_timeout: 300\n")
			args := slices.Clone(tt.args)
			for i, a := range args {
				switch a {
				case "P":
					args[i] = p
				case "BADCONFIG":
					args[i] = cfg
				}
			}
			o := c.run(args...)
			o.wantUsage(t, tt.want)
			r := checkReport(t, o.stdout)
			if r.Outcome != "usage" || r.ExitCode != exitUsage || r.Issue != tt.issue || !strings.Contains(r.Reason, tt.want) ||
				r.RunDir != "" || r.Record != "" || len(r.Attempts) != 0 || r.Started.IsZero() {
				t.Errorf("report %+v; want outcome usage, exit 2, issue %q, a reason with %q", r, tt.issue, tt.want)
			}
		})
	}
}

// Without --json for the run command, nothing is printed on stdout: --json
// switched off, after "--" (claude's), as another flag's value, or a
// subcommand's own --json.
func TestNoJSONReportWithoutRunJSON(t *testing.T) {
	for _, args := range [][]string{
		{"issue-1", "--json=false", "--bogus"},
		{"issue-1", "--bogus", "--", "--json"},
		{"--prompt", "--json", "issue-1", "--idle-timeout", "banana"},
		{"status", "--json", "--bogus"},
		{"exit-codes", "--json", "extra"},
		{"issue-1", "--bogus"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			o := newCLI(t).run(args...)
			if o.code != exitUsage || o.stdout != "" {
				t.Errorf("exit %d, stdout %q; want 2 and nothing", o.code, o.stdout)
			}
		})
	}
}
