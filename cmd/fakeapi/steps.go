package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/testing/fakeapi"
)

// usage is `fakeapi -h`: what it is for and the step grammar.
const usage = `usage: fakeapi [-dump DIR] [-follow-prompt [-stall-once N]] STEP...

A fake Anthropic Messages API on 127.0.0.1 for trying the real Claude Code
CLI (or malarun) with no network and no key. It prints its URL, logs each
request to stderr, and runs until interrupted:

  fakeapi text:hello 'bash:echo hi' stall &
  ANTHROPIC_BASE_URL=<URL> ANTHROPIC_API_KEY=dummy claude -p ...

Each conversation request of the CLI takes the next STEP (the CLI's own side
requests, a title or a compaction, take none; once the steps are used up
every request gets "fakeapi: script exhausted"):

  text:REPLY           a text reply
  think:THOUGHT        a thinking block, then the text "Done thinking."
  bash:COMMAND         a Bash tool call
  tool:NAME:JSON       any tool call, its input a JSON object
                       (tool:Bash:{"command":"make test","run_in_background":true})
  stall                message_start, then nothing until the CLI gives up
  noanswer             not even the response headers (a request never
                       answered), until the CLI gives up
  ptl                  400 prompt is too long
  error:401|429|529    an API error (the CLI retries 429 and 529 itself)
  limit:SECONDS        a five-hour usage limit resetting in SECONDS (give the
                       CLI CLAUDE_CODE_OAUTH_TOKEN, not an API key)

  N*STEP               the step for N requests in a row (0*STEP: forever)
  {PACE}STEP           a reply spaced in time as the real API spaces one
                       (docs/design.md §F32); PACE is KEY=DURATION,... of
                       first (before message_start), gap (between deltas),
                       think (between thinking deltas), input (a tool call's
                       input, which arrives whole), ping (a ping every so
                       often while silent), and stall=N (hold the stream after
                       N deltas): '{input=200s,ping=30s}bash:echo hi',
                       '{stall=1}text:The answer is'

With -follow-prompt, the requests after the steps are answered by a fake
model that follows the prompt to the letter (make try uses it): each fenced
shell block of the task (` + "```sh, ```bash or ```shell" + `) is one Bash call, in
order; a task without one gets a look at the folder (pwd, ls); then a text
says what ran. It is not Claude: it understands nothing of the task.
-stall-once N makes its answer after the Nth tool call stop mid-sentence,
once (malarun then resumes the session).

Flags:
`

// parseStep reads one step of the command line, e.g. "2*error:529".
func parseStep(s string) (fakeapi.Step, error) {
	times := 1
	if n, rest, ok := strings.Cut(s, "*"); ok {
		v, err := strconv.Atoi(n)
		if err == nil {
			times, s = v, rest
		}
	}
	var pace fakeapi.Pace
	paced := false
	if strings.HasPrefix(s, "{") {
		spec, rest, ok := strings.Cut(s[1:], "}")
		if !ok {
			return fakeapi.Step{}, fmt.Errorf("step %q: a pace is {KEY=VALUE,...} before the step", s)
		}
		p, err := parsePace(spec)
		if err != nil {
			return fakeapi.Step{}, fmt.Errorf("step %q: %w", s, err)
		}
		pace, paced, s = p, true, rest
	}
	st, err := parseKind(s)
	if err != nil {
		return fakeapi.Step{}, err
	}
	if paced {
		if !strings.HasPrefix(s, "text:") && !strings.HasPrefix(s, "think:") && !strings.HasPrefix(s, "bash:") && !strings.HasPrefix(s, "tool:") {
			return fakeapi.Step{}, fmt.Errorf("step %q: only replies (text, think, bash, tool) can be paced", s)
		}
		st = st.WithPace(pace)
	}
	return fakeapi.Repeat(st, times), nil
}

// parsePace reads "first=5s,gap=1s,think=30s,input=200s,ping=30s,stall=3".
func parsePace(spec string) (fakeapi.Pace, error) {
	var p fakeapi.Pace
	for kv := range strings.SplitSeq(spec, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return p, fmt.Errorf("pace %q: want KEY=VALUE", kv)
		}
		if k == "stall" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return p, fmt.Errorf("pace stall=%q: want a count of deltas, 1 or more", v)
			}
			p.StallAfter = n
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return p, fmt.Errorf("pace %s=%q: want a duration such as 30s", k, v)
		}
		switch k {
		case "first":
			p.FirstEvent = d
		case "gap":
			p.Gap = d
		case "think":
			p.ThinkingGap = d
		case "input":
			p.InputAfter = d
		case "ping":
			p.Ping = d
		default:
			return p, fmt.Errorf("pace key %q: want first, gap, think, input, ping or stall", k)
		}
	}
	return p, nil
}

// parseKind reads a step without its count or pace.
func parseKind(s string) (fakeapi.Step, error) {
	kind, arg, _ := strings.Cut(s, ":")
	switch kind {
	case "text":
		return fakeapi.Text(arg), nil
	case "think":
		return fakeapi.Combine(fakeapi.Thinking(arg), fakeapi.Text("Done thinking.")), nil
	case "bash":
		return fakeapi.Bash(arg), nil
	case "tool":
		name, input, ok := strings.Cut(arg, ":")
		if !ok || name == "" || !isJSONObject(input) {
			return fakeapi.Step{}, fmt.Errorf("step %q: want tool:NAME:{...JSON object...}", s)
		}
		return fakeapi.ToolUse(name, json.RawMessage(input)), nil
	case "stall":
		return fakeapi.Stall(), nil
	case "noanswer":
		return fakeapi.NoAnswer(), nil
	case "limit":
		secs, err := strconv.Atoi(arg)
		if err != nil {
			return fakeapi.Step{}, fmt.Errorf("limit:SECONDS wants the seconds until the reset, not %q", arg)
		}
		return fakeapi.UsageLimited("five_hour", time.Now().Add(time.Duration(secs)*time.Second)), nil
	case "ptl":
		return fakeapi.PromptTooLong(210000, 200000), nil
	case "error":
		switch arg {
		case "401":
			return fakeapi.AuthError(), nil
		case "429":
			return fakeapi.RateLimited(1), nil
		case "529":
			return fakeapi.Overloaded(), nil
		}
		return fakeapi.Step{}, fmt.Errorf("unknown error step %q (401, 429 or 529)", arg)
	}
	return fakeapi.Step{}, fmt.Errorf("unknown step %q (fakeapi -h lists them)", s)
}

// isJSONObject reports whether s is one valid JSON object, which is what
// fakeapi.ToolUse needs (it panics otherwise).
func isJSONObject(s string) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal([]byte(s), &m) == nil && m != nil
}
