package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Usage is the token usage a reply reports. It is sent both in
// message_start and in message_delta: the CLI writes its assistant line
// when a content block ends, before message_delta arrives, so only the
// message_start numbers reach that line's message.usage, while the result
// line's cumulative usage takes message_delta's.
type Usage struct {
	Input         int
	Output        int
	CacheCreation int
	CacheRead     int
}

// defaultUsage is small and non-zero, so that a test which forgets to set
// usage still sees numbers flow through.
func defaultUsage() Usage { return Usage{Input: 100, Output: 10} }

type stepKind int

const (
	stepReply stepKind = iota
	stepStall
	stepNoAnswer
	stepHTTPError
	stepStreamError
)

type blockSpec struct {
	toolUse  bool
	thinking bool // a thinking block; text is the thought
	text     string
	name     string
	input    json.RawMessage
	id       string // fixed tool_use id; "" means allocate one
}

// Step is one scripted answer to a conversation request. Build it with
// [Text], [ToolUse], [Bash], [Combine], [Stall], [HTTPError] (and its
// shorthands) or [StreamError], adjust it with its With* methods, and repeat
// it with [Repeat]. A Step is a value: the builders never share state.
type Step struct {
	kind       stepKind
	blocks     []blockSpec
	usage      *Usage
	stopReason string

	status  int
	errType string
	errMsg  string
	header  http.Header

	gate  <-chan struct{}
	times int // how many requests this step answers; <0 forever; 0 means 1
	pace  Pace
}

// Text is a reply with one text block and stop reason end_turn.
func Text(reply string) Step {
	return Step{kind: stepReply, blocks: []blockSpec{{text: reply}}}
}

// ToolUse is a reply with one tool_use block and stop reason tool_use.
// input is encoded as JSON now, and must encode to an object (e.g. a map or
// struct): ToolUse panics otherwise, in the test that wrote the script
// rather than later in a request goroutine. The block's id is allocated by
// the server (toolu_1, toolu_2, ...) unless set with [Step.WithToolUseID],
// and recorded in [Reply.ToolUseIDs].
func ToolUse(name string, input any) Step {
	raw, err := json.Marshal(input)
	if err != nil || len(raw) == 0 || raw[0] != '{' {
		panic(fmt.Sprintf("fakeapi.ToolUse(%q): input must encode to a JSON object, got %s (%v)", name, raw, err))
	}
	return Step{kind: stepReply, blocks: []blockSpec{{toolUse: true, name: name, input: raw}}}
}

// Bash is ToolUse for the CLI's Bash tool running command.
func Bash(command string) Step {
	return ToolUse("Bash", map[string]string{"command": command, "description": "fakeapi step"})
}

// Combine merges the blocks of several Text and ToolUse steps into one
// assistant message, e.g. a text followed by two parallel tool calls. Usage
// and stop reason come from the first part that sets them.
func Combine(parts ...Step) Step {
	s := Step{kind: stepReply}
	for _, p := range parts {
		if p.kind != stepReply {
			panic("fakeapi.Combine: only Text and ToolUse steps can be combined")
		}
		s.blocks = append(s.blocks, p.blocks...)
		if s.usage == nil {
			s.usage = p.usage
		}
		if s.stopReason == "" {
			s.stopReason = p.stopReason
		}
	}
	return s
}

// Stall sends the response headers and message_start, then holds the
// connection open, sending nothing more, until the client goes away or the
// server is closed (the CLI's hang-after-init, docs/design.md §F8). The start of
// each stall is announced on [Server.Stalled] and counted by
// [Server.WaitStalls].
func Stall() Step { return Step{kind: stepStall} }

// NoAnswer takes the request and never answers it: no headers, no byte,
// the connection held open until the client gives up or the server
// closes (a request the API never answers, reported for about 5 % of
// requests on some accounts: docs/design.md §F36). The hold is counted as
// a stall ([Server.WaitStalls]).
func NoAnswer() Step { return Step{kind: stepNoAnswer} }

// HTTPError answers with an HTTP error status and an Anthropic-style JSON
// error body {"type":"error","error":{"type":errType,"message":message}}.
// header may be nil; it is added to the response (e.g. retry-after).
func HTTPError(status int, errType, message string, header http.Header) Step {
	return Step{kind: stepHTTPError, status: status, errType: errType, errMsg: message, header: header.Clone()}
}

// PromptTooLong is the API's 400 for a conversation that does not fit the
// context window, "prompt is too long: 210000 tokens > 200000 maximum".
// The CLI does not retry it (docs/design.md §F10).
func PromptTooLong(tokens, maximum int) Step {
	return HTTPError(http.StatusBadRequest, "invalid_request_error",
		fmt.Sprintf("prompt is too long: %d tokens > %d maximum", tokens, maximum), nil)
}

// AuthError is the API's 401 for a bad key. The CLI retries it (up to
// CLAUDE_CODE_MAX_RETRIES times, 10 by default, with backoff: minutes)
// unless the response carries x-should-retry: false (see
// [Step.WithHeader]).
func AuthError() Step {
	return HTTPError(http.StatusUnauthorized, "authentication_error", "invalid x-api-key", nil)
}

// RateLimited is the API's 429 with a retry-after header in seconds.
func RateLimited(retryAfterSeconds int) Step {
	h := http.Header{}
	h.Set("Retry-After", strconv.Itoa(retryAfterSeconds))
	return HTTPError(http.StatusTooManyRequests, "rate_limit_error",
		"This request would exceed the rate limit for your organization", h)
}

// UsageLimited is a subscription's usage limit as the API answers a
// request made with an OAuth token (docs/design.md §F19): a 429 whose
// unified rate-limit headers say the window (claim: five_hour, seven_day,
// ...) is rejected until resetsAt. The CLI 2.1.330 then prints a
// rate_limit_event with that resetsAt and the result "You've hit your
// 5-hour limit · resets 4:57pm (UTC)". With an API key instead, the CLI
// ignores the headers ("API Error: Request rejected (429)").
func UsageLimited(claim string, resetsAt time.Time) Step {
	reset := strconv.FormatInt(resetsAt.Unix(), 10)
	h := http.Header{}
	h.Set("Anthropic-Ratelimit-Unified-Status", "rejected")
	h.Set("Anthropic-Ratelimit-Unified-Reset", reset)
	h.Set("Anthropic-Ratelimit-Unified-Representative-Claim", claim)
	if w := unifiedWindow(claim); w != "" {
		h.Set("Anthropic-Ratelimit-Unified-"+w+"-Status", "rejected")
		h.Set("Anthropic-Ratelimit-Unified-"+w+"-Reset", reset)
	}
	return HTTPError(http.StatusTooManyRequests, "rate_limit_error", "This request would exceed your account's rate limit. Please try again later.", h)
}

// unifiedWindow is the header infix of a claim's own window headers.
func unifiedWindow(claim string) string {
	switch claim {
	case "five_hour":
		return "5h"
	case "seven_day":
		return "7d"
	}
	return ""
}

// Overloaded is the API's 529.
func Overloaded() Step {
	return HTTPError(529, "overloaded_error", "Overloaded", nil)
}

// StreamError starts a normal 200 event stream (message_start) and then
// sends an `error` event, as the real API does when it fails mid-reply
// (typically overloaded_error).
func StreamError(errType, message string) Step {
	return Step{kind: stepStreamError, errType: errType, errMsg: message}
}

// Repeat makes a step answer n consecutive conversation requests, or every
// one from then on if n <= 0. Useful because the CLI retries 401, 429 and
// 529 by itself, and retries a stalled request after its own timeout.
func Repeat(s Step, n int) Step {
	if n <= 0 {
		s.times = -1
	} else {
		s.times = n
	}
	return s
}

// WithUsage sets the usage a reply reports (default Input 100, Output 10).
func (s Step) WithUsage(u Usage) Step {
	s.usage = &u
	return s
}

// WithStopReason overrides the stop reason (default tool_use when the reply
// has a tool_use block, else end_turn), e.g. "max_tokens".
func (s Step) WithStopReason(reason string) Step {
	s.stopReason = reason
	return s
}

// WithToolUseID fixes the id of the step's last tool_use block instead of
// letting the server allocate one, so a test can name it in advance. Ids
// must stay unique within a conversation.
func (s Step) WithToolUseID(id string) Step {
	s.blocks = append([]blockSpec(nil), s.blocks...)
	for i := len(s.blocks) - 1; i >= 0; i-- {
		if s.blocks[i].toolUse {
			s.blocks[i].id = id
			return s
		}
	}
	panic("fakeapi.WithToolUseID: step has no tool_use block")
}

// WithHeader adds a response header to an HTTP error step, e.g.
// WithHeader("X-Should-Retry", "false"), which makes the CLI give up at
// once instead of retrying (measured: a 401 then ends the run in under a
// second, instead of 10 retries over minutes).
func (s Step) WithHeader(key, value string) Step {
	if s.kind != stepHTTPError {
		panic("fakeapi.WithHeader: only HTTP error steps carry headers")
	}
	s.header = s.header.Clone()
	if s.header == nil {
		s.header = http.Header{}
	}
	s.header.Add(key, value)
	return s
}

// After holds the answer until ch is closed, so a test can act while the
// CLI waits on this request (it sees nothing until then). If the client
// goes away or the server closes first, the connection is dropped unanswered.
func (s Step) After(ch <-chan struct{}) Step {
	s.gate = ch
	return s
}

func (s Step) stop() string {
	if s.stopReason != "" {
		return s.stopReason
	}
	for _, b := range s.blocks {
		if b.toolUse {
			return "tool_use"
		}
	}
	return "end_turn"
}

func (s Step) usageOrDefault() Usage {
	if s.usage != nil {
		return *s.usage
	}
	return defaultUsage()
}

// String describes the step for [Reply.Step] and failure messages.
func (s Step) String() string {
	switch s.kind {
	case stepStall:
		return "stall"
	case stepNoAnswer:
		return "no answer"
	case stepHTTPError:
		return fmt.Sprintf("http %d %s", s.status, s.errType)
	case stepStreamError:
		return "stream error " + s.errType
	}
	var parts []string
	for _, b := range s.blocks {
		switch {
		case b.toolUse:
			parts = append(parts, "tool_use "+b.name)
		case b.thinking:
			parts = append(parts, "thinking "+strconv.Quote(abbreviate(b.text, 40)))
		default:
			parts = append(parts, "text "+strconv.Quote(abbreviate(b.text, 40)))
		}
	}
	if s.pace != (Pace{}) {
		parts = append(parts, fmt.Sprintf("paced %+v", s.pace))
	}
	return strings.Join(parts, " + ")
}

func abbreviate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// script is an ordered queue of steps; not safe for concurrent use (the
// Server guards it).
type script struct {
	steps []Step
	used  int // how many times steps[0] has answered
}

func (q *script) push(steps ...Step) { q.steps = append(q.steps, steps...) }

// next takes the next step, or reports false when the script is exhausted.
func (q *script) next() (Step, bool) {
	if len(q.steps) == 0 {
		return Step{}, false
	}
	s := q.steps[0]
	q.used++
	n := s.times
	if n == 0 {
		n = 1
	}
	if n > 0 && q.used >= n {
		q.steps = q.steps[1:]
		q.used = 0
	}
	return s, true
}

// remaining counts the requests the script can still answer, -1 if a step
// repeats forever.
func (q *script) remaining() int {
	total := 0
	for i, s := range q.steps {
		switch {
		case s.times < 0:
			return -1
		case s.times == 0:
			total++
		default:
			total += s.times
		}
		if i == 0 {
			total -= q.used
		}
	}
	return total
}
