package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// completions runs cobra's hidden __complete, as the shell scripts that
// `malarun completion` writes do, and returns the words offered (without
// descriptions) and the directive line.
func (c *cli) completions(args ...string) ([]string, string) {
	c.t.Helper()
	o := c.run(append([]string{"__complete"}, args...)...)
	if o.code != 0 {
		c.t.Fatalf("__complete %q: exit %d, stderr %q", args, o.code, o.stderr)
	}
	if i := strings.IndexFunc(o.stdout, func(r rune) bool { return (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f }); i >= 0 {
		c.t.Errorf("__complete %q wrote control byte %#x: %q", args, o.stdout[i], o.stdout)
	}
	lines := strings.Split(strings.TrimSuffix(o.stdout, "\n"), "\n")
	var words []string
	for _, l := range lines[:len(lines)-1] {
		word, _, _ := strings.Cut(l, "\t")
		words = append(words, word)
	}
	return words, lines[len(lines)-1]
}

// stateDirWithIssues makes a state dir holding the issues and, beside
// them, names no issue can have; every one of them is a folder.
func stateDirWithIssues(t *testing.T, issues ...string) string {
	t.Helper()
	dir := t.TempDir()
	hostile := []string{
		"bad\x1b]0;pwned\a", "esc\x1b[2J", "with space", "$(touch pwned)", "semi;colon", "quote'd",
		"tab\tdesc", "new\nline", "bidi\u202eexe.txt", "caf\u00e9", "-x", "..x/",
		"usage-limits", "Usage-Limits", "status", "Show", "man", strings.Repeat("x", 129),
	}
	for _, name := range append(slices.Clone(issues), hostile...) {
		if err := os.Mkdir(filepath.Join(dir, name), 0o700); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
	}
	// A file is not an issue.
	if err := os.WriteFile(filepath.Join(dir, "issue-file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Issue ids complete from the state dir for the run, status and show;
// nothing else found there is ever printed to the shell.
func TestCompletionOfIssueIDs(t *testing.T) {
	c := newCLI(t)
	c.env["MALARUN_STATE_DIR"] = stateDirWithIssues(t, "issue-1", "issue-2", "PROJ_7", "a.b", "..x")
	all := []string{"..x", "PROJ_7", "a.b", "issue-1", "issue-2"}
	commands := []string{"completion", "exit-codes", "help", "show", "status", "summary", "version"}
	for _, tt := range []struct {
		args      []string
		want      []string
		directive string
	}{
		{[]string{"status", ""}, all, ":4"},
		{[]string{"show", ""}, all, ":4"},
		{[]string{"show", "iss"}, []string{"issue-1", "issue-2"}, ":4"},
		{[]string{"status", "--json", "P"}, []string{"PROJ_7"}, ":4"},
		{[]string{"show", "--format", "md", "a"}, []string{"a.b"}, ":4"},
		// The run's issue id, beside the commands (and man, hidden, is not one).
		{[]string{""}, append(slices.Clone(commands), all...), ":4"},
		{[]string{"iss"}, []string{"issue-1", "issue-2"}, ":4"},
		{[]string{"--quiet", "i"}, []string{"issue-1", "issue-2"}, ":4"},
		// One issue id only: status and show take nothing more; the run's
		// further arguments are claude's, files maybe (directive 0).
		{[]string{"status", "issue-1", ""}, nil, ":4"},
		{[]string{"show", "issue-1", ""}, nil, ":4"},
		{[]string{"issue-1", "--prompt", "task.md", "--", ""}, nil, ":0"},
		{[]string{"issue-1", "--prompt", "task.md", "--", "--model", ""}, nil, ":0"},
		{[]string{"nothing-here"}, nil, ":4"},
	} {
		got, directive := c.completions(tt.args...)
		if !slices.Equal(got, tt.want) || directive != tt.directive {
			t.Errorf("__complete %q: %q %s, want %q %s", tt.args, got, directive, tt.want, tt.directive)
		}
	}
}

// The state dir is found as the command finds it: the flag, then the
// variable, then the config file.
func TestCompletionFindsTheStateDir(t *testing.T) {
	c := newCLI(t)
	fromEnv, fromFlag, fromFile := stateDirWithIssues(t, "env-1"), stateDirWithIssues(t, "flag-1"), stateDirWithIssues(t, "file-1")
	cfg := c.file("malarun.yaml", "state_dir: "+fromFile+"\n")
	for _, tt := range []struct {
		env  string
		args []string
		want string
	}{
		{"", []string{"status", "--config", cfg, ""}, "file-1"},
		{fromEnv, []string{"status", "--config", cfg, ""}, "env-1"},
		{fromEnv, []string{"show", "--state-dir", fromFlag, ""}, "flag-1"},
		{fromEnv, []string{"--state-dir", fromFlag, ""}, "flag-1"},
		{fromEnv, []string{"--state-dir=" + fromFlag, "--prompt", "task.md", "f"}, "flag-1"},
	} {
		c.env["MALARUN_STATE_DIR"] = tt.env
		got, _ := c.completions(tt.args...)
		if !slices.Contains(got, tt.want) {
			t.Errorf("__complete %q (MALARUN_STATE_DIR=%q): %q, want %s", tt.args, tt.env, got, tt.want)
		}
		for _, w := range got {
			if strings.HasSuffix(w, "-1") && w != tt.want {
				t.Errorf("__complete %q: %q comes from another state dir", tt.args, w)
			}
		}
	}
	// A state dir that does not exist, or a config that does not load:
	// nothing offered, and no error in the shell.
	c.env["MALARUN_STATE_DIR"] = filepath.Join(t.TempDir(), "missing")
	if got, d := c.completions("status", ""); len(got) != 0 || d != ":4" {
		t.Errorf("missing state dir: %q %s", got, d)
	}
	c.env["MALARUN_IDLE_TIMEOUT"] = "soon"
	if got, d := c.completions("status", ""); len(got) != 0 || d != ":4" {
		t.Errorf("bad config: %q %s", got, d)
	}
}

func TestCompletionOfFlagValues(t *testing.T) {
	c := newCLI(t)
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"show", "issue-1", "--format", ""}, showFormats()},
		{[]string{"--log-format", ""}, []string{"auto", "console", "json"}},
		{[]string{"issue-1", "--prompt-change", ""}, []string{"refuse", "resume", "start_over"}},
	} {
		if got, d := c.completions(tt.args...); !slices.Equal(got, tt.want) || d != ":4" {
			t.Errorf("__complete %q: %q %s, want %q :4", tt.args, got, d, tt.want)
		}
	}
}
