package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// manPageText runs `malarun man` and returns the page.
func manPageText(t *testing.T) string {
	t.Helper()
	o := newCLI(t).run("man")
	if o.code != 0 || o.stderr != "" || o.calls != 0 {
		t.Fatalf("malarun man: code %d, %d runs, stderr %q", o.code, o.calls, o.stderr)
	}
	return o.stdout
}

// The page has the sections a man page has, in order, and documents the
// whole tree: every command a user can type, every flag of each, every
// exit code and every key's variable. Its text is roff-escaped (\-).
func TestManPageDocumentsTheTree(t *testing.T) {
	page := manPageText(t)
	var titles []string
	for _, m := range regexp.MustCompile(`(?m)^\.SH "([^"]*)"$`).FindAllStringSubmatch(page, -1) {
		titles = append(titles, m[1])
	}
	want := []string{"NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES", "SEE ALSO"}
	if strings.Join(titles, "|") != strings.Join(want, "|") {
		t.Errorf("sections %q, want %q", titles, want)
	}
	if !strings.Contains(page, ".SH \"NAME\"\nmalarun \\- Supervise one headless Claude Code run\n") {
		t.Errorf("NAME is not \"malarun \\- <summary>\" (what whatis and apropos read)")
	}
	if !strings.HasPrefix(page, `.\" `) || !strings.Contains(page, "\n.TH \"MALARUN\" \"1\" ") {
		t.Errorf("page does not start with a comment and .TH MALARUN 1:\n%.300s", page)
	}
	esc := func(s string) string { return strings.ReplaceAll(s, "-", `\-`) }

	root := newRootCmd(&app{deps: &deps{}})
	root.InitDefaultCompletionCmd()
	cmds := append([]*cobra.Command{root}, visibleCommands(root)...)
	for _, c := range cmds {
		if c != root && !strings.Contains(page, "\n.SS \""+esc(c.UseLine())+"\"\n") {
			t.Errorf("no subsection for %q", c.CommandPath())
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if !strings.Contains(page, `\fB\-\-`+esc(f.Name)+`\fR`) {
				t.Errorf("%s: flag --%s is not on the page", c.CommandPath(), f.Name)
			}
		})
	}
	for _, name := range []string{"completion", "completion bash", "status", "show", "version", "exit-codes"} {
		if !strings.Contains(page, ".SS \"malarun "+esc(name)) {
			t.Errorf("command %q is not on the page", name)
		}
	}
	if strings.Contains(page, `.SS "malarun man`) || strings.Contains(page, "__complete") {
		t.Error("a hidden command is on the page")
	}
	for _, r := range exitCodes() {
		if !strings.Contains(page, fmt.Sprintf(".TP\n\\fB%d\\fR\n%s: ", r.code, esc(string(r.outcome)))) {
			t.Errorf("exit code %d (%s) is not in EXIT STATUS", r.code, r.outcome)
		}
	}
	for _, k := range configKeys() {
		if !strings.Contains(page, ".TP\n\\fB"+k.envName()+"\\fR\n") {
			t.Errorf("%s is not in ENVIRONMENT", k.envName())
		}
	}
}

// groff reads the page without one warning (-ww: all of them).
func TestManPageFormats(t *testing.T) {
	groff, err := exec.LookPath("groff")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no groff on PATH (apt-get install groff-base); CI=true, so this is a failure")
		}
		t.Skip("!!! SKIPPING: no groff on PATH (apt-get install groff-base) !!!")
	}
	cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z")
	cmd.Stdin = strings.NewReader(manPageText(t))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Errorf("groff -man -Tutf8 -ww -z: %v\n%s", err, stderr.String())
	}
}

func TestSourceDate(t *testing.T) {
	for _, tt := range []struct {
		settings []debug.BuildSetting
		want     string
	}{
		{nil, ""},
		{[]debug.BuildSetting{{Key: "vcs.time", Value: "2026-11-22T12:04:01Z"}}, "2026-11-22"},
		{[]debug.BuildSetting{{Key: "vcs.time", Value: "2026"}}, ""},
	} {
		info := func() (*debug.BuildInfo, bool) { return &debug.BuildInfo{Settings: tt.settings}, true }
		if got := sourceDate(info); got != tt.want {
			t.Errorf("sourceDate(%v) = %q, want %q", tt.settings, got, tt.want)
		}
	}
}
