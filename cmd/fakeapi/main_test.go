package main

import (
	"strings"
	"testing"
)

func TestParseStep(t *testing.T) {
	for _, c := range []struct {
		arg  string
		want string // the step's description; "" when the argument is refused
	}{
		{"text:hello", `text "hello"`},
		{"bash:echo hi", "tool_use Bash"},
		{`tool:Bash:{"command":"make test","run_in_background":true}`, "tool_use Bash"},
		{`tool:Monitor:{"description":"d","timeout_ms":5000,"command":"tail -f x"}`, "tool_use Monitor"},
		{"tool:ToolSearch:{}", "tool_use ToolSearch"},
		{"2*error:529", "http 529 overloaded_error"},
		{"stall", "stall"},
		{"noanswer", "no answer"},
		{"{first=1s}noanswer", ""},
		{"think:hmm", `thinking "hmm" + text "Done thinking."`},
		{"{input=200s,ping=30s}bash:echo hi", "tool_use Bash + paced {FirstEvent:0s Gap:0s ThinkingGap:0s InputAfter:3m20s Ping:30s StallAfter:0}"},
		{"{stall=1}text:The answer", `text "The answer" + paced {FirstEvent:0s Gap:0s ThinkingGap:0s InputAfter:0s Ping:0s StallAfter:1}`},
		{"2*{first=1s}text:x", `text "x" + paced {FirstEvent:1s Gap:0s ThinkingGap:0s InputAfter:0s Ping:0s StallAfter:0}`},
		{"{input=200s}stall", ""},
		{"{input=soon}text:x", ""},
		{"{stall=0}text:x", ""},
		{"{colour=1s}text:x", ""},
		{"{input=1s text:x", ""},
		{"tool:Bash", ""},
		{"tool::{}", ""},
		{"tool:Bash:null", ""},
		{`tool:Bash:["a"]`, ""},
		{`tool:Bash:{"command":`, ""},
		{"error:500", ""},
		{"nope", ""},
	} {
		st, err := parseStep(c.arg)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("parseStep(%q) accepted it as %s", c.arg, st)
		case c.want != "" && err != nil:
			t.Errorf("parseStep(%q): %v", c.arg, err)
		case c.want != "" && st.String() != c.want:
			t.Errorf("parseStep(%q) = %s, want %s", c.arg, st, c.want)
		}
	}
}

// -h prints the step grammar and exits 0.
func TestHelpShowsTheStepGrammar(t *testing.T) {
	var stdout, stderr strings.Builder
	if code := run(t.Context(), []string{"-h"}, &stdout, &stderr); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
	for _, want := range []string{"text:REPLY", "{PACE}STEP", "limit:SECONDS", "-dump"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("-h does not show %q:\n%s", want, stderr.String())
		}
	}
}

// A bad step is reported before the server starts, with exit code 2.
func TestRunRefusesABadStep(t *testing.T) {
	var stdout, stderr strings.Builder
	if code := run(t.Context(), []string{"tool:Bash:[]"}, &stdout, &stderr); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if !strings.Contains(stderr.String(), "want tool:NAME:{...JSON object...}") || stdout.Len() != 0 {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}
