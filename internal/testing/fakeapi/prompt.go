package fakeapi

import (
	"encoding/json"
	"fmt"
	"strings"
)

// FollowPrompt is a fake model for trying malarun on a task of one's own
// (make try): it does not understand the prompt, it follows it to the
// letter. Each fenced shell block of the task (```sh, ```bash or
// ```shell) is one Bash call, in order, one per turn; a task without one
// gets a single look at the working folder (pwd, ls). When every block has
// run, it answers with what it did: each command and the first line of its
// output, the task's first line, and that it is a fake model, not Claude.
//
// It keeps no state: what it has done is read from the conversation the
// CLI sends (its tool calls so far), so a session that malarun resumed
// after a hang, with malarun's resume prompt appended, carries on where it
// stopped. The task is the first user message's text, without the
// <system-reminder> blocks the CLI adds.
func FollowPrompt(r *Request) Step {
	task := firstUserTask(r)
	cmds := shellBlocks(task)
	looked := false
	if len(cmds) == 0 {
		cmds, looked = []string{"pwd; ls -A | head -n 20"}, true
	}
	done := calls(r)
	if len(done) < len(cmds) {
		k := len(done)
		what := fmt.Sprintf("shell block %d of %d of your prompt", k+1, len(cmds))
		intro := "(fake model) Running " + what + "."
		if looked {
			what, intro = "a look at the folder", "(fake model) Your prompt has no ```sh block for me to run, so I only look at the folder."
		}
		return Combine(Text(intro), ToolUse("Bash", map[string]string{"command": cmds[k], "description": what}))
	}
	return Text(report(task, done, looked))
}

// promptCall is a tool call of the conversation and what came back.
type promptCall struct {
	command string
	output  string
	isError bool
}

// calls are the Bash calls of the conversation so far, with their results.
func calls(r *Request) []promptCall {
	var out []promptCall
	if r.Parsed == nil {
		return nil
	}
	for _, m := range r.Parsed.Messages {
		for _, c := range m.Content {
			if m.Role != "assistant" || c.Type != "tool_use" {
				continue
			}
			var in struct {
				Command string `json:"command"`
			}
			_ = json.Unmarshal(c.Input, &in) // the model's own Bash input
			call := promptCall{command: in.Command}
			if res, ok := r.ToolResult(c.ID); ok {
				call.output, call.isError = res.Content.Text(), res.IsError
			}
			out = append(out, call)
		}
	}
	return out
}

// firstUserTask is the text of the first user message, without the CLI's
// <system-reminder> blocks.
func firstUserTask(r *Request) string {
	if r.Parsed == nil {
		return ""
	}
	for _, m := range r.Parsed.Messages {
		if m.Role != "user" {
			continue
		}
		var parts []string
		for _, c := range m.Content {
			if c.Type == "text" && !strings.HasPrefix(strings.TrimSpace(c.Text), "<system-reminder>") {
				parts = append(parts, c.Text)
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// shellBlocks are the bodies of the fenced code blocks of text (``` or
// ~~~) whose language is sh, bash or shell, in order; an empty one is
// skipped.
func shellBlocks(text string) []string {
	var blocks, body []string
	fence, shell := "", false // fence: the open block's marker, "" outside one
	for line := range strings.SplitSeq(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if fence == "" {
			for _, f := range []string{"```", "~~~"} {
				if lang, ok := strings.CutPrefix(trimmed, f); ok {
					fence, body = f, nil
					words := strings.Fields(strings.ToLower(strings.Trim(lang, "`~")))
					shell = len(words) > 0 && (words[0] == "sh" || words[0] == "bash" || words[0] == "shell")
					break
				}
			}
			continue
		}
		if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
			if cmd := strings.TrimSpace(strings.Join(body, "\n")); shell && cmd != "" {
				blocks = append(blocks, cmd)
			}
			fence = ""
			continue
		}
		body = append(body, line)
	}
	return blocks
}

// report is the fake model's last answer: what it did, and what it is.
func report(task string, done []promptCall, looked bool) string {
	var b strings.Builder
	b.WriteString("This is malarun's fake model (cmd/fakeapi), not Claude: it did not read your task, ")
	if looked {
		b.WriteString("and your prompt has no ```sh block, so it only looked at the folder.\n")
	} else {
		b.WriteString("it ran the shell blocks of your prompt as Bash calls, one per turn.\n")
	}
	first, _, _ := strings.Cut(strings.TrimSpace(task), "\n")
	fmt.Fprintf(&b, "Your prompt (%d lines) begins: %s\n", strings.Count(strings.TrimSpace(task), "\n")+1, cut(first, 100))
	for i, c := range done {
		status := "ok"
		if c.isError {
			status = "error"
		}
		out, _, _ := strings.Cut(strings.TrimSpace(c.output), "\n")
		fmt.Fprintf(&b, "%d. %s -> %s: %s\n", i+1, cut(strings.ReplaceAll(c.command, "\n", "; "), 80), status, cut(out, 100))
	}
	b.WriteString("Give malarun the real claude and a key (or a login) to have the task done.")
	return b.String()
}

func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "..."
	}
	return s
}

// StallOnce wraps a model (such as [FollowPrompt]) so that the first time
// a conversation has had `after` tool calls, its answer starts a sentence
// and stops in the middle of it, the stream held open (a stream that died:
// malarun's text_timeout finds it, and resumes the session, whose next
// request the model answers as usual). The returned function keeps that
// it stalled; the server calls it under its lock.
func StallOnce(after int, model func(*Request) Step) func(*Request) Step {
	stalled := false
	return func(r *Request) Step {
		if stalled || len(calls(r)) != after {
			return model(r)
		}
		stalled = true
		return Text("(fake model) Now I look at what that printed, and then ...").WithPace(Pace{StallAfter: 1})
	}
}
