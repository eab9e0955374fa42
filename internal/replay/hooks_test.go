package replay

import (
	"bytes"
	"strings"
	"testing"

	"github.com/malarun/malarun/internal/timeline"
)

// The CLI's hooks (§F27, a real 2.1.330 transcript): each hook that ended is
// an item of the agent's work, with its outcome, exit code and, from the
// timeline's line times, how long it ran; a failed one is an error.
func TestHooksAreTold(t *testing.T) {
	rf := newRunFolder(t)
	rf.copyTranscript(1, "hooks-2.1.330.jsonl")
	rf.entry(0, timeline.Entry{Event: "run_started", RunDir: rf.dir})
	rf.entry(0, timeline.Entry{Event: "attempt_started", Attempt: 1, Session: "s1", Pid: 100, Purpose: "work"})
	end := rf.lineTimes(1, 1)
	rf.entry(end, timeline.Entry{Event: "attempt_ended", Attempt: 1, Outcome: "success", ExitCode: code(0)})
	var r recorder
	if _, err := Tell(Source{Issue: "issue-1", RunDir: rf.dir, Status: "succeeded"}, &r); err != nil {
		t.Fatal(err)
	}
	var hooks []string
	for _, it := range r.items {
		if it.Kind == KindHook {
			hooks = append(hooks, it.Hook+" "+hookGist(&it)+" "+map[bool]string{true: "error", false: "ok"}[it.IsError])
		}
	}
	// Each line is a second apart in this timeline.
	want := "SessionStart:startup success, 1s ok|PreToolUse:Bash success, 1s ok|" +
		"PostToolUse:Bash error (exit 1), 1s error|Stop success, 1s ok"
	if got := strings.Join(hooks, "|"); got != want {
		t.Errorf("hooks:\n got %s\nwant %s", got, want)
	}
	var text bytes.Buffer
	if _, err := Tell(Source{Issue: "issue-1", RunDir: rf.dir, Status: "succeeded"}, NewText(&text, TextOptions{})); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "hook PostToolUse:Bash  error (exit 1), 1s") {
		t.Errorf("text form:\n%s", text.String())
	}
}

// An MCP server the CLI started without is a note of the attempt (§F28).
func TestMCPServersNotConnectedAreNoted(t *testing.T) {
	rf := newRunFolder(t)
	rf.copyTranscript(1, "mcp-failed-2.1.197.jsonl")
	rf.entry(0, timeline.Entry{Event: "attempt_started", Attempt: 1, Session: "s1", Pid: 100, Purpose: "work"})
	rf.entry(rf.lineTimes(1, 1), timeline.Entry{Event: "attempt_ended", Attempt: 1, Outcome: "success", ExitCode: code(0)})
	var r recorder
	if _, err := Tell(Source{Issue: "issue-1", RunDir: rf.dir, Status: "succeeded"}, &r); err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, it := range r.items {
		if it.Kind == KindNote {
			notes = append(notes, it.Text)
		}
	}
	want := []string{`MCP server "broken" was failed when attempt 1 began: the agent worked without its tools`,
		`MCP server "notthere" was failed when attempt 1 began: the agent worked without its tools`}
	if strings.Join(notes, "\n") != strings.Join(want, "\n") {
		t.Errorf("notes:\n%s", strings.Join(notes, "\n"))
	}
}
