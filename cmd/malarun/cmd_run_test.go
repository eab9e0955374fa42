package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/supervisor"
)

func TestRunBuildsConfig(t *testing.T) {
	c := newCLI(t)
	p := c.prompt()
	o := c.run("issue-123", "--prompt", p, "--", "--model", "sonnet", "--allowedTools", "Bash")
	cfg := o.wantRun(t)

	want := supervisor.DefaultConfig()
	want.IssueID = "issue-123"
	want.Prompt = []byte("do the task\n")
	want.PromptSource = p
	want.ExtraArgs = []string{"--model", "sonnet", "--allowedTools", "Bash"}
	want.StateDir = filepath.Join(c.home, ".local", "state", "malarun")
	want.Env = c.environ()
	assertConfig(t, cfg, want)
	if err := cfg.Validate(); err != nil {
		t.Errorf("the Config given to the supervisor does not validate: %v", err)
	}
	if !slices.Contains(cfg.Env, "ANTHROPIC_API_KEY="+testSecret) {
		t.Errorf("the child's environment lacks ANTHROPIC_API_KEY: %q", cfg.Env)
	}
	if o.stdout != "result text\n" {
		t.Errorf("stdout = %q, want the result text and a newline only", o.stdout)
	}
	if o.sdeps.Signals != (<-chan os.Signal)(c.signals) {
		t.Errorf("Deps.Signals is not the channel given to run")
	}
}

// assertConfig compares every field of the two Configs, one error per
// field that differs, for readable failures; a field added to Config is
// compared without a change here.
func assertConfig(t *testing.T, got, want supervisor.Config) {
	t.Helper()
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range g.NumField() {
		gf, wf := g.Field(i).Interface(), w.Field(i).Interface()
		if reflect.DeepEqual(gf, wf) {
			continue
		}
		t.Errorf("%s = %s, want %s", g.Type().Field(i).Name, showField(gf), showField(wf))
	}
}

// showField quotes text, so an empty or blank value is visible, and shows
// durations as durations.
func showField(v any) string {
	switch v.(type) {
	case string, []byte, []string:
		return fmt.Sprintf("%q", v)
	}
	return fmt.Sprintf("%v", v)
}

// --reset reaches the Config; the rest is as without it.
func TestResetFlag(t *testing.T) {
	c := newCLI(t)
	p := c.prompt()
	want := c.run("issue-1", "--prompt", p).wantRun(t)
	want.Reset = true
	assertConfig(t, c.run("issue-1", "--prompt", p, "--reset").wantRun(t), want)
}

func TestPromptFromStdin(t *testing.T) {
	c := newCLI(t)
	c.stdin = strings.NewReader("the task, piped\n")
	cfg := c.run("issue-123", "--prompt", "-").wantRun(t)
	if string(cfg.Prompt) != "the task, piped\n" || cfg.PromptSource != "stdin" {
		t.Errorf("prompt %q from %q, want the stdin text from \"stdin\"", cfg.Prompt, cfg.PromptSource)
	}
	if cfg.ExtraArgs != nil {
		t.Errorf("ExtraArgs = %q, want nil", cfg.ExtraArgs)
	}
}

func TestPromptErrors(t *testing.T) {
	tests := []struct {
		name  string
		setup func(c *cli) []string // returns the arguments
		want  []string
	}{
		{"missing --prompt", func(c *cli) []string { return []string{"issue-123"} }, []string{"missing --prompt"}},
		{"missing file", func(c *cli) []string {
			return []string{"issue-123", "--prompt", filepath.Join(c.home, "nope.md")}
		}, []string{"prompt file", "nope.md", "does not exist"}},
		{"relative missing file", func(c *cli) []string { return []string{"issue-123", "--prompt", "task.md"} },
			[]string{"prompt file task.md does not exist"}},
		{"empty file", func(c *cli) []string { return []string{"issue-123", "--prompt", c.file("empty.md", "")} },
			[]string{"empty.md is empty"}},
		{"blank file", func(c *cli) []string { return []string{"issue-123", "--prompt", c.file("blank.md", " \n\t\n")} },
			[]string{"blank.md is empty"}},
		{"directory", func(c *cli) []string { return []string{"issue-123", "--prompt", c.home} },
			[]string{"cannot read prompt file", "is a directory"}},
		{"empty stdin", func(c *cli) []string { return []string{"issue-123", "--prompt", "-"} },
			[]string{"prompt from stdin is empty"}},
		{"empty --prompt", func(c *cli) []string { return []string{"issue-123", "--prompt", ""} },
			[]string{"--prompt is empty"}},
		{"--prompt without a value", func(c *cli) []string { return []string{"issue-123", "--prompt"} },
			[]string{"--prompt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCLI(t)
			c.run(tt.setup(c)...).wantUsage(t, tt.want...)
		})
	}
}

func TestIssueIDs(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"dot dot slash", []string{"../x", "--prompt", "P"}, []string{`"../x"`, "only letters, digits"}},
		{"dot", []string{".", "--prompt", "P"}, []string{`"."`, "not allowed"}},
		{"dot dot", []string{"..", "--prompt", "P"}, []string{`".."`}},
		{"slash", []string{"a/b", "--prompt", "P"}, []string{`"a/b"`}},
		{"space", []string{"a b", "--prompt", "P"}, []string{`"a b"`}},
		{"empty", []string{"", "--prompt", "P"}, []string{"issue id is empty"}},
		{"129 characters", []string{strings.Repeat("x", 129), "--prompt", "P"}, []string{"129 characters", "at most 128"}},
		{"status with --prompt", []string{"status", "--prompt", "P"}, []string{"unknown flag: --prompt", `"status" is a malarun command, so it cannot be an issue id`}},
		{"exit-codes with --prompt=", []string{"exit-codes", "--prompt=P"}, []string{`"exit-codes" is a malarun command, so it cannot be an issue id`}},
		{"help with --prompt", []string{"help", "--prompt", "P"}, []string{`"help" is a malarun command, so it cannot be an issue id`}},
		{"the usage-limit store's folder", []string{"usage-limits", "--prompt", "P"}, []string{`"usage-limits" is not allowed`, "state_dir/usage-limits holds the usage limits"}},
		{"the store's folder, other case", []string{"Usage-Limits", "--prompt", "P"}, []string{`"Usage-Limits" is not allowed`}},
		{"status of the store's folder", []string{"status", "usage-limits"}, []string{`"usage-limits" is not allowed`}},
		{"status of an id starting with -", []string{"status", "--", "-x"}, []string{`issue id "-x" starts with '-'`, "could never be typed"}},
		{"reserved, other case", []string{"Version", "--prompt", "P"}, []string{`"Version" is reserved`}},
		{"command in another case", []string{"VERSION"}, []string{`unknown command "VERSION"; did you mean "version"?`}},
		{"completion", []string{"completion", "--prompt", "P"}, []string{"unknown flag: --prompt", `"completion" is a malarun command`}},
		{"version with --prompt", []string{"version", "--prompt", "P"}, []string{"unknown flag: --prompt", `"version" is a malarun command`}},
		{"man (hidden) with --prompt", []string{"man", "--prompt", "P"}, []string{"unknown flag: --prompt", `"man" is a malarun command`}},
		{"__guard (hidden) with --prompt", []string{"__guard", "--prompt", "P"}, []string{"unknown flag: --prompt", `"__guard" is a malarun command`}},
		{"man (hidden), other case", []string{"Man", "--prompt", "P"}, []string{`"Man" is reserved`}},
		{"typo", []string{"verion"}, []string{`unknown command "verion"; did you mean "version"?`}},
		{"show mistyped", []string{"shwo", "issue-1"}, []string{`unknown command "shwo"; did you mean "show"?`}},
		{"show with --prompt", []string{"show", "--prompt", "P"}, []string{"unknown flag: --prompt", `"show" is a malarun command, so it cannot be an issue id`}},
		{"show, other case", []string{"Show", "--prompt", "P"}, []string{`"Show" is reserved`}},
		{"transposition", []string{"verison"}, []string{`unknown command "verison"; did you mean "version"?`}},
		{"typo with flags", []string{"verison", "--idle-timeout", "5m"}, []string{`did you mean "version"?`}},
		{"no issue id", []string{"--prompt", "P"}, []string{"missing ISSUE_ID"}},
		{"only extra args", []string{"--prompt", "P", "--", "--model", "x"}, []string{"missing ISSUE_ID"}},
		{"two positionals", []string{"issue-1", "more", "--prompt", "P"}, []string{`unexpected argument "more"`, "after --"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCLI(t)
			p := c.prompt()
			args := slices.Clone(tt.args)
			for i, a := range args {
				if a == "P" {
					args[i] = p
				}
			}
			c.run(args...).wantUsage(t, tt.want...)
		})
	}
}

func TestValidIssueIDs(t *testing.T) {
	for _, id := range []string{"issue-123", "PROJ_42", "a.b", "...", strings.Repeat("x", 128), "versions", "v", "a-", "usage-limits-2", "x-usage-limits"} {
		t.Run(id[:min(len(id), 20)], func(t *testing.T) {
			c := newCLI(t)
			if cfg := c.run(id, "--prompt", c.prompt()).wantRun(t); cfg.IssueID != id {
				t.Errorf("IssueID = %q, want %q", cfg.IssueID, id)
			}
		})
	}
}

// A bare malarun prints a short usage to stderr and exits 2, as any other
// mistake of the command line does; --help has the rest.
func TestNoArgumentsPrintsAShortUsage(t *testing.T) {
	c := newCLI(t)
	o := c.run()
	if o.code != exitUsage || o.calls != 0 {
		t.Fatalf("code %d, calls %d; want 2, 0", o.code, o.calls)
	}
	if !strings.HasPrefix(o.stderr, "Usage: malarun ISSUE_ID --prompt FILE") || !strings.Contains(o.stderr, "malarun --help lists every flag") {
		t.Errorf("stderr lacks the short usage:\n%s", o.stderr)
	}
	if n := strings.Count(o.stderr, "\n"); n > 10 {
		t.Errorf("a bare malarun prints %d lines; want a short usage (--help has the rest):\n%s", n, o.stderr)
	}
	if o.stdout != "" {
		t.Errorf("stdout = %q, want empty", o.stdout)
	}
	if help := c.run("--help"); help.code != 0 || !strings.Contains(help.stdout, "Exit codes:") {
		t.Errorf("--help: exit %d, no exit codes:\n%s", help.code, help.stdout)
	}
}

func TestExtraArgs(t *testing.T) {
	refused := [][]string{
		{"--resume", "x"},
		{"--output-format=json"},
		{"--output-format", "text"},
		{"-p"},
		{"--print"},
		{"--verbose"},
		{"--session-id", "abc"},
		{"--continue"},
		{"-c"},
		{"--fork-session"},
		{"--input-format", "stream-json"},
		{"--include-partial-messages"},
		{"--model", "sonnet", "--", "a prompt"},
	}
	for _, extra := range refused {
		t.Run(strings.Join(extra, " "), func(t *testing.T) {
			c := newCLI(t)
			args := append([]string{"issue-1", "--prompt", c.prompt(), "--"}, extra...)
			c.run(args...).wantUsage(t, "extra claude argument")
		})
	}
	t.Run("allowed", func(t *testing.T) {
		c := newCLI(t)
		cfg := c.run("issue-1", "--prompt", c.prompt(), "--", "--model", "sonnet", "--max-turns", "3").wantRun(t)
		if want := []string{"--model", "sonnet", "--max-turns", "3"}; !slices.Equal(cfg.ExtraArgs, want) {
			t.Errorf("ExtraArgs = %q, want %q", cfg.ExtraArgs, want)
		}
	})
}

func TestUnknownFlagHints(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"issue-1", "--promt", "x"}, "did you mean --prompt?"},
		{[]string{"issue-1", "--idle-timout", "5m"}, "did you mean --idle-timeout?"},
		{[]string{"issue-1", "--prompt", "x", "--allowedTools", "Bash"}, "claude's own flags go after --"},
	}
	for _, tt := range tests {
		t.Run(tt.args[1], func(t *testing.T) {
			newCLI(t).run(tt.args...).wantUsage(t, "unknown flag", tt.want)
		})
	}
}

func TestValidateRefusesEmptyClaudeBin(t *testing.T) {
	c := newCLI(t)
	c.run("issue-1", "--prompt", c.prompt(), "--claude-bin", "").wantUsage(t, "claude_bin is empty")
}

func TestSupervisorErrorIsPrinted(t *testing.T) {
	c := newCLI(t)
	c.runErr = &supervisor.RunError{Kind: outcome.RetriesExhausted, Detail: "no output for 3m"}
	o := c.run("issue-1", "--prompt", c.prompt())
	if o.code != 3 || o.calls != 1 {
		t.Fatalf("code %d, calls %d; want 3, 1", o.code, o.calls)
	}
	if !strings.Contains(o.stderr, "malarun: retries exhausted: no output for 3m\n") {
		t.Errorf("stderr lacks the error line:\n%s", o.stderr)
	}
}

func TestSignalWhileReadingStdin(t *testing.T) {
	for _, tt := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(tt.sig.String(), func(t *testing.T) {
			c := newCLI(t)
			r, w := io.Pipe() // never written: the read blocks until the signal ends it
			t.Cleanup(func() { w.Close() })
			c.stdin = r
			c.signals <- tt.sig
			o := c.run("issue-1", "--prompt", "-")
			if o.code != tt.code || o.calls != 0 {
				t.Fatalf("code %d, calls %d; want %d, 0; stderr:\n%s", o.code, o.calls, tt.code, o.stderr)
			}
			if !strings.Contains(o.stderr, "interrupted") {
				t.Errorf("stderr lacks \"interrupted\":\n%s", o.stderr)
			}
		})
	}
}

func TestLogging(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    []string
		notWant []string
	}{
		{"auto is json off a terminal", nil, []string{`"level":"info"`, `"message":"fake run"`}, nil},
		{"json", []string{"--log-format", "json"}, []string{`"message":"fake run"`}, nil},
		{"console", []string{"--log-format", "console"}, []string{"INF", "fake run"}, []string{`"level"`}},
		{"warn hides info", []string{"--log-level", "warn"}, nil, []string{"fake run"}},
		{"debug shows the configuration, not the env", []string{"--log-level", "debug"},
			[]string{`"message":"configuration"`, `"idle_timeout":"3m (default)"`, `"claude_bin":"/x/claude (flag --claude-bin)"`},
			[]string{testSecret}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCLI(t)
			args := append([]string{"issue-1", "--prompt", c.prompt(), "--claude-bin", "/x/claude"}, tt.args...)
			o := c.run(args...)
			o.wantRun(t)
			for _, w := range tt.want {
				if !strings.Contains(o.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, o.stderr)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(o.stderr, w) {
					t.Errorf("stderr has %q:\n%s", w, o.stderr)
				}
			}
		})
	}
}

// With --json, a run that fails before the supervisor starts still prints
// its report: exit 2, outcome usage.
func TestJSONReportOfAUsageError(t *testing.T) {
	c := newCLI(t)
	o := c.run("issue-1", "--prompt", c.file("empty.md", ""), "--json")
	if o.code != exitUsage || o.calls != 0 {
		t.Fatalf("code %d, calls %d", o.code, o.calls)
	}
	r := checkReport(t, o.stdout)
	if r.Outcome != "usage" || r.ExitCode != 2 || r.Issue != "issue-1" || !strings.Contains(r.Reason, "is empty") || len(r.Attempts) != 0 {
		t.Errorf("report: %+v", r)
	}
}

// The supervisor's result text reaches stdout only after the run, and the
// observer is wired only when something uses the events.
func TestOutputWiring(t *testing.T) {
	c := newCLI(t)
	o := c.run("issue-1", "--prompt", c.prompt())
	o.wantRun(t)
	if o.sdeps.Observer != nil {
		t.Errorf("an observer with nothing to show")
	}
	events := filepath.Join(t.TempDir(), "e.jsonl")
	o = c.run("issue-1", "--prompt", c.prompt(), "--events", events)
	o.wantRun(t)
	if o.sdeps.Observer == nil {
		t.Errorf("--events without an observer")
	}
	c.run("issue-1", "--prompt", c.prompt(), "--events", filepath.Join(c.home, "no", "such", "dir", "e.jsonl")).wantUsage(t, "--events", "no such file")
}

// Under GitHub Actions a usage error gets an annotation too.
func TestGitHubAnnotationOfAUsageError(t *testing.T) {
	c := newCLI(t)
	c.env["GITHUB_ACTIONS"] = "true"
	o := c.run("issue-1", "--prompt", filepath.Join(c.home, "missing.md"))
	if o.code != exitUsage {
		t.Fatalf("code %d", o.code)
	}
	if cmds := workflowCommands(o.stderr); len(cmds) != 1 || !strings.HasPrefix(cmds[0], "::error title=malarun%3A issue-1 failed (exit 2)::prompt file ") {
		t.Errorf("workflow commands %q in:\n%s", cmds, o.stderr)
	}
}

// Every command's name is reserved, so that no issue id can shadow a
// command (summary came without it once).
func TestEveryCommandIsAReservedName(t *testing.T) {
	root := newRootCmd(&app{deps: &deps{}})
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpCmd()
	for _, c := range root.Commands() {
		if !isReservedName(c.Name()) {
			t.Errorf("the command %q is not among reservedNames: an issue could be named so", c.Name())
		}
	}
}

// A run uses one processor (design §D32), unless the user's GOMAXPROCS
// says otherwise; other commands leave it alone.
func TestARunUsesOneProcessorUnlessGOMAXPROCSIsSet(t *testing.T) {
	for _, c := range []struct {
		name string
		env  string
		args func(c *cli) []string
		want []int
	}{
		{"a run", "", func(c *cli) []string { return []string{"issue-1", "--prompt", c.prompt()} }, []int{1}},
		{"a run with GOMAXPROCS set", "4", func(c *cli) []string { return []string{"issue-1", "--prompt", c.prompt()} }, nil},
		{"status", "", func(*cli) []string { return []string{"status"} }, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := newCLI(t)
			if c.env != "" {
				cl.env["GOMAXPROCS"] = c.env
			}
			var got []int
			cl.setProcs = func(n int) int { got = append(got, n); return 2 }
			cl.run(c.args(cl)...)
			if !slices.Equal(got, c.want) {
				t.Errorf("GOMAXPROCS set to %v, want %v", got, c.want)
			}
		})
	}
}
