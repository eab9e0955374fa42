package fakeapi

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestShellBlocks(t *testing.T) {
	task := "Fix the build.\n\n```sh\ngo build ./...\n```\n\nNot this one:\n\n```go\nfmt.Println()\n```\n\n" +
		"~~~bash\nmake test\necho done\n~~~\n\n```\nplain\n```\n\n```shell title\n\n```\n\n  ```Bash\n  ls\n  ```\n"
	want := []string{"go build ./...", "make test\necho done", "ls"}
	if got := shellBlocks(task); !slices.Equal(got, want) {
		t.Errorf("shellBlocks = %q, want %q", got, want)
	}
	if got := shellBlocks("```sh\nnever closed"); len(got) != 0 {
		t.Errorf("an unclosed block ran: %q", got)
	}
}

// taskRequest is a request of the CLI: the task (after a system reminder
// the CLI adds), then the model's calls so far, each answered.
func taskRequest(t *testing.T, task string, outputs ...string) *Request {
	t.Helper()
	msgs := []Message{{Role: "user", Content: Blocks{{Type: "text", Text: "<system-reminder>context</system-reminder>"}, {Type: "text", Text: task}}}}
	for i, out := range outputs {
		id := "toolu_" + string(rune('a'+i))
		in, _ := json.Marshal(map[string]string{"command": "cmd " + id})
		msgs = append(msgs,
			Message{Role: "assistant", Content: Blocks{{Type: "text", Text: "(fake model)"}, {Type: "tool_use", ID: id, Name: "Bash", Input: in}}},
			Message{Role: "user", Content: Blocks{{Type: "tool_result", ToolUseID: id, Content: Blocks{{Type: "text", Text: out}}, IsError: out == "boom"}}})
	}
	return &Request{Parsed: &MessagesRequest{Messages: msgs}}
}

func toolInput(t *testing.T, s Step) string {
	t.Helper()
	for _, b := range s.blocks {
		if b.toolUse {
			var in struct{ Command string }
			if err := json.Unmarshal(b.input, &in); err != nil {
				t.Fatal(err)
			}
			return in.Command
		}
	}
	return ""
}

// It runs the task's shell blocks one per turn, then says what it did and
// that it is no Claude; it carries on after a resume (a resume prompt
// appended as a later user message changes nothing).
func TestFollowPrompt(t *testing.T) {
	task := "Check the tools.\n```sh\ngo version\n```\n```bash\nnode --version\n```\n"
	if got := toolInput(t, FollowPrompt(taskRequest(t, task))); got != "go version" {
		t.Errorf("first turn runs %q", got)
	}
	r := taskRequest(t, task, "go version go1.26")
	r.Parsed.Messages = append(r.Parsed.Messages, Message{Role: "user", Content: Blocks{{Type: "text", Text: "Continue where you stopped."}}})
	if got := toolInput(t, FollowPrompt(r)); got != "node --version" {
		t.Errorf("after a resume the second turn runs %q", got)
	}
	last := FollowPrompt(taskRequest(t, task, "go version go1.26\nmore", "boom"))
	if toolInput(t, last) != "" || len(last.blocks) != 1 {
		t.Fatalf("the last turn is %v, want a text", last)
	}
	text := last.blocks[0].text
	for _, w := range []string{"fake model", "not Claude", "begins: Check the tools.", "1. cmd toolu_a -> ok: go version go1.26\n", "2. cmd toolu_b -> error: boom"} {
		if !strings.Contains(text, w) {
			t.Errorf("the answer lacks %q:\n%s", w, text)
		}
	}
}

// A task with no shell block: one look at the folder, said honestly.
func TestFollowPromptWithoutShellBlocks(t *testing.T) {
	task := "Refactor the parser so that it streams."
	first := FollowPrompt(taskRequest(t, task))
	if got := toolInput(t, first); !strings.HasPrefix(got, "pwd") || !strings.Contains(first.blocks[0].text, "no ```sh block") {
		t.Errorf("first turn %v runs %q", first, got)
	}
	last := FollowPrompt(taskRequest(t, task, "/tmp/work"))
	if text := last.blocks[0].text; !strings.Contains(text, "only looked at the folder") || !strings.Contains(text, "begins: Refactor the parser") {
		t.Errorf("the answer:\n%s", text)
	}
}

// With WithThen, the script's steps come first, then the model; no
// request is counted as exhausted.
func TestWithThenAnswersAfterTheScript(t *testing.T) {
	var got []string
	then := func(*Request) Step { got = append(got, "then"); return Text("from then") }
	s := &Server{cfg: defaultConfig()}
	WithScript(Text("scripted"))(&s.cfg)
	WithThen(then)(&s.cfg)
	s.def.push(s.cfg.steps...)
	s.nextMsg = 0
	req := taskRequest(t, "x")
	req.Kind = KindConversation
	for i, want := range []string{`text "scripted"`, `text "from then"`, `text "from then"`} {
		var rec Reply
		s.answerLocked(req, Step{}, &rec)
		if rec.Step != want || rec.Exhausted {
			t.Errorf("request %d: %q exhausted %v, want %q", i+1, rec.Step, rec.Exhausted, want)
		}
	}
	if len(got) != 2 {
		t.Errorf("then answered %d requests, want 2", len(got))
	}
}

// StallOnce stalls the answer after the given number of calls, once.
func TestStallOnce(t *testing.T) {
	task := "```sh\necho a\n```\n```sh\necho b\n```\n"
	model := StallOnce(1, FollowPrompt)
	if got := toolInput(t, model(taskRequest(t, task))); got != "echo a" {
		t.Errorf("before the stall: %q", got)
	}
	after := taskRequest(t, task, "a")
	if st := model(after); st.pace.StallAfter != 1 || toolInput(t, st) != "" {
		t.Errorf("after one call: %v, want a stalled text", st)
	}
	if got := toolInput(t, model(after)); got != "echo b" {
		t.Errorf("the same point again (the resumed session): %q, want the next call", got)
	}
}

// The README's first example for make try has blocks for the model to run.
func TestTryExampleHasShellBlocks(t *testing.T) {
	b, err := os.ReadFile("../../../scripts/try-example.md")
	if err != nil {
		t.Fatal(err)
	}
	if got := shellBlocks(string(b)); len(got) != 2 {
		t.Errorf("scripts/try-example.md has %d shell blocks: %q", len(got), got)
	}
}
