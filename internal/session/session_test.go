package session

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Lines shaped as both pinned CLIs write them (docs/design.md §F38).
func userLine(content string) string {
	c, _ := json.Marshal(content)
	return `{"parentUuid":null,"isSidechain":false,"promptId":"p","type":"user","message":{"role":"user","content":` + string(c) +
		`},"uuid":"u","timestamp":"2026-11-27T22:01:37.968Z","permissionMode":"default","promptSource":"sdk","sessionId":"s"}`
}

func queued(content string) string {
	c, _ := json.Marshal(content)
	return `{"type":"queue-operation","operation":"enqueue","timestamp":"2026-11-27T22:01:37.808Z","sessionId":"s","content":` + string(c) + `}`
}

const (
	answer     = `{"parentUuid":"a","isSidechain":false,"message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{"type":"text","text":"I don't see a request in your message."}]},"type":"assistant","uuid":"b"}`
	synthetic  = `{"parentUuid":"a","message":{"id":"x","model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"(no content)"}]},"type":"assistant","uuid":"c"}`
	toolResult = `{"parentUuid":"b","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"ok"}]},"uuid":"d"}`
	attachment = `{"parentUuid":"u","attachment":{"type":"date","date":"2026-11-27"},"type":"attachment","uuid":"e"}`
)

func lines(ls ...string) *strings.Reader { return strings.NewReader(strings.Join(ls, "\n") + "\n") }

func TestTold(t *testing.T) {
	prompt := "Fix the \"flaky\" test:\n\tsee ci.log — it fails ✓\n"
	for _, c := range []struct {
		name   string
		prompt string
		in     *strings.Reader
		want   Verdict
	}{
		{"the prompt, answered", prompt, lines(queued(prompt), userLine(prompt), attachment, answer), Seen},
		{"the prompt, not answered yet", prompt, lines(userLine(prompt)), Seen},
		{"a resumed session: the CLI's own lines, then the prompt", prompt,
			lines(userLine("Continue from where you left off."), userLine("No response requested."), userLine(prompt), answer), Seen},
		{"an empty user message, answered (cc#85040)", prompt, lines(queued(prompt), userLine(""), answer), NotSeen},
		{"another prompt, answered", prompt, lines(userLine("something else"), answer), NotSeen},
		{"no user message, answered", prompt, lines(answer), Unknown},
		{"another prompt, only claude's own message", prompt, lines(userLine("/clear"), synthetic), Unknown},
		{"tool results are no prompt", prompt, lines(toolResult, answer), Unknown},
		{"nothing new", prompt, lines(), Unknown},
		{"leading white space and a byte order mark are not looked for", "\ufeff \n" + prompt, lines(userLine(prompt), answer), Seen},
		{"the start of a long prompt is enough", strings.Repeat("ab\"\\\x01", 1000), lines(userLine(strings.Repeat("ab\"\\\x01", 1000)), answer), Seen},
		{"a control character escaped as JSON.stringify does", "\x1b[31mred", lines(`{"type":"user","message":{"role":"user","content":"\u001b[31mred"}}`, answer), Seen},
		{"U+2028 and DEL as they are", "a\u2028b\x7fc", lines(`{"type":"user","message":{"role":"user","content":"a`+"\u2028"+`b`+"\x7f"+`c"}}`, answer), Seen},
		{"a prompt that starts with bytes that are not UTF-8 is not judged", "\xff\xfeFix it", lines(userLine("x"), answer), Unknown},
		{"a prompt of white space only is not judged", " \n\t", lines(userLine("x"), answer), Unknown},
	} {
		if got := told(c.in, []byte(c.prompt)); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// A line too long to look at might be the prompt's: nothing is judged.
func TestAnOverlongLineIsUnknown(t *testing.T) {
	long := userLine(strings.Repeat("x", 200<<10))
	if got := toldWithin(lines(userLine("other"), long, answer), []byte("the prompt"), 100<<10); got != Unknown {
		t.Errorf("%v, want unknown", got)
	}
	if got := toldWithin(lines(userLine("other"), long, answer), []byte("the prompt"), 300<<10); got != NotSeen {
		t.Errorf("%v, want unknown", got)
	}
}

// The file is found under CLAUDE_CONFIG_DIR, else HOME/.claude, in any
// folder of projects/; only what an attempt added is read.
func TestPathAndCheck(t *testing.T) {
	home := t.TempDir()
	const id = "5fcbbccf-06da-4fd6-8405-d704e7fbd2c7"
	env := []string{"HOME=" + home}
	if p := Path(env, id); p != "" {
		t.Errorf("no file yet, Path = %q", p)
	}
	dir := filepath.Join(home, ".claude", "projects", "-work-repo")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, id+".jsonl")
	first := userLine("the first prompt") + "\n" + answer + "\n"
	if err := os.WriteFile(file, []byte(first), 0o600); err != nil {
		t.Fatal(err)
	}
	if p := Path(env, id); p != file {
		t.Fatalf("Path = %q, want %q", p, file)
	}
	if Path(env, "../../etc/passwd") != "" || Path([]string{}, id) != "" {
		t.Error("a bad id or no HOME found a file")
	}
	if p := Path([]string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + t.TempDir()}, id); p != "" {
		t.Errorf("CLAUDE_CONFIG_DIR is not where the CLI keeps it: %q", p)
	}
	from := Size(file)
	if Check(file, 0, []byte("the first prompt")) != Seen {
		t.Error("the first prompt is not seen")
	}
	// A resume whose prompt never made it: only the new part is read, so
	// the first prompt's resume text earlier in the file does not count.
	f, _ := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(userLine("") + "\n" + answer + "\n")
	f.Close()
	if got := Check(file, from, []byte("the first prompt")); got != NotSeen {
		t.Errorf("a resume without its prompt: %v", got)
	}
	if got := Check(file, Size(file)+1, []byte("x")); got != Unknown {
		t.Errorf("a file shorter than before: %v", got)
	}
	link := filepath.Join(dir, "link.jsonl")
	os.Symlink(file, link)
	if got := Check(link, 0, []byte("the first prompt")); got != Unknown {
		t.Errorf("through a link: %v", got)
	}
}

// What a success costs: reading what the attempt added to its session (a
// long attempt's: 10,000 lines of tool results, about 10 MB), the prompt
// at its start, and at its end (a resume).
func BenchmarkTold(b *testing.B) {
	prompt := []byte("Fix the flaky test in ci.log and report what you changed.\n")
	var body strings.Builder
	for i := 0; i < 10000; i++ {
		body.WriteString(`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t","type":"tool_result","content":"` + strings.Repeat("x", 1000) + `"}]}}` + "\n")
		body.WriteString(answer + "\n")
	}
	for _, c := range []struct {
		name string
		data string
	}{
		{"prompt first", userLine(string(prompt)) + "\n" + body.String()},
		{"prompt last", body.String() + userLine(string(prompt)) + "\n"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				if told(strings.NewReader(c.data), prompt) != Seen {
					b.Fatal("not seen")
				}
			}
		})
	}
}
