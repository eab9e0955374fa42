package supervisor

import (
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/retry"
)

// usageLimitRe matches the CLI's usage-limit texts, such as
// "Claude AI usage limit reached|1749924000" and
// "You've hit your limit · resets 2am (Europe/Paris)".
var usageLimitRe = regexp.MustCompile(`(?i)usage limit reached|hit your limit`)

// outcomeOf turns how an attempt ended into the retry machine's input, with
// a sentence that says what happened in words a user can act on.
func outcomeOf(a *attemptResult) retry.Outcome {
	o := retry.Outcome{
		SessionID: a.log.sessionID,
		Progress:  a.log.assistants > 0,
		CostUSD:   a.log.costUSD,
	}
	for _, tu := range a.log.toolCalls {
		o.ToolCalls = append(o.ToolCalls, retry.ToolCall{Name: tu.Name, Input: tu.Input})
	}
	o.Kind, o.Reason = kindOf(a)
	return o
}

func kindOf(a *attemptResult) (retry.Kind, string) {
	if a.ending == attempt.BackgroundTimeout {
		// Whatever the result said, background work was cut off: resume, and
		// the prompt names the tasks so the agent checks and redoes them.
		return retry.Hang, fmt.Sprintf("background tasks still ran background_timeout after the result (%s); the process tree was killed",
			strings.Join(taskLabels(a.cutTasks), "; "))
	}
	if a.succeeded() {
		// The work is done, whatever stopped the process after it said so.
		return retry.Success, "claude reported success"
	}
	switch a.ending {
	case attempt.Interrupted:
		return retry.Interrupted, "malarun was asked to stop; the run can be resumed"
	case attempt.SessionTimeout:
		return retry.SessionTimeout, "session_timeout elapsed; the process tree was stopped"
	case attempt.UsageLimit:
		return retry.RateLimit, a.cliLimit.Reason
	case attempt.Unreachable:
		return retry.Unreachable, unreachableReason(a.apiAt, a.unreachable)
	case attempt.Auth:
		ar := a.log.authRetry
		return retry.Auth, fmt.Sprintf("the API answered %d %s (claude retry %d of %d); check ANTHROPIC_API_KEY or the CLI's login",
			ar.ErrorStatus, ar.Error, ar.Attempt, ar.MaxRetries)
	}
	if r := a.log.result; r != nil {
		c := classifyResult(r)
		switch {
		case a.ending == attempt.Hang && strings.HasPrefix(r.TerminalReason, "aborted_"):
			// The CLI aborted because malarun killed it: malarun's reason wins.
			return hangOutcome(a)
		case c.unknown != "":
			return retry.ErrorResult, describeResult(a) + " (unknown " + c.unknown + ": this CLI is newer than malarun knows)"
		case c.kind == retry.BudgetExceeded:
			return c.kind, describeResult(a) + " (max_cost_usd reached)"
		case c.kind == retry.MaxTurns:
			return c.kind, describeResult(a) + " (raise --max-turns to allow more)"
		case c.kind == retry.RateLimit:
			return c.kind, describeResult(a) + resetSuffix(a)
		case c.kind == retry.ResumeNotFound:
			return c.kind, "the session cannot be resumed: " + oneLine(strings.Join(r.Errors, "; "), 200)
		}
		return c.kind, describeResult(a)
	}
	if a.ending == attempt.Pressure {
		return retry.ContextPressure, "the context window is nearly full"
	}
	if a.log.rateLimit != nil {
		return retry.RateLimit, "claude reported a " + a.log.rateLimit.RateLimitType + " rate limit" + resetSuffix(a)
	}
	if a.ending == attempt.Hang {
		return hangOutcome(a)
	}
	if !a.log.sawInit {
		return retry.EarlyExit, fmt.Sprintf("claude %s before its first line%s", describeExit(a), stderrSuffix(a))
	}
	cut := ""
	if a.log.cutShort {
		cut = ", its last line cut short"
	}
	return retry.Crash, fmt.Sprintf("claude %s without a result line%s%s", describeExit(a), cut, stderrSuffix(a))
}

func hangOutcome(a *attemptResult) (retry.Kind, string) {
	what := "idle_timeout"
	if len(a.hangTools) > 0 {
		what = "tool_timeout, while " + strings.Join(a.hangTools, ", ") + " ran"
	}
	return retry.Hang, fmt.Sprintf("no output for %s (%s); the process tree was killed", a.hangLimit, what)
}

// contextFull recognises the CLI saying the conversation no longer fits:
// the API's 400 "prompt is too long", the CLI's own refusal at its blocking
// limit (docs/design.md §F14), or compaction that keeps failing.
func contextFull(result, terminalReason string) bool {
	switch terminalReason {
	case "blocking_limit", "prompt_too_long":
		return true
	}
	return strings.Contains(result, "Prompt is too long") || strings.Contains(result, "Autocompact is thrashing")
}

// resetSuffix names when a rate limit resets, when the stream said.
func resetSuffix(a *attemptResult) string {
	if a.log.rateLimit == nil || a.log.rateLimit.ResetsAt == 0 {
		return ""
	}
	return "; it resets at " + time.Unix(a.log.rateLimit.ResetsAt, 0).UTC().Format(time.RFC3339)
}

func describeExit(a *attemptResult) string {
	if a.exit.Signal != nil {
		if s, ok := a.exit.Signal.(syscall.Signal); ok {
			return fmt.Sprintf("was killed by signal %d (%s)", int(s), s)
		}
		return "was killed by " + a.exit.Signal.String()
	}
	return fmt.Sprintf("exited with code %d", a.exit.Code)
}

// describeResult says what a result that is not a success reported. The
// CLI marks a failed turn with is_error and often keeps subtype "success"
// (§F10, §F25): that word never reaches the message.
func describeResult(a *attemptResult) string {
	r := a.log.result
	msg := "result " + r.Subtype
	if r.Subtype == "success" || r.Subtype == "" {
		msg = "error result"
	}
	var parts []string
	if r.APIErrorStatus != 0 {
		parts = append(parts, fmt.Sprintf("API status %d", r.APIErrorStatus))
	}
	if r.TerminalReason != "" {
		parts = append(parts, "terminal reason "+r.TerminalReason)
	}
	if len(parts) > 0 {
		msg += " (" + strings.Join(parts, ", ") + ")"
	}
	if text := firstNonEmpty(r.Result, strings.Join(r.Errors, "; ")); text != "" {
		msg += ": " + oneLine(text, 400)
	}
	return msg
}

func stderrSuffix(a *attemptResult) string {
	if a.stderrTail == "" {
		return " (stderr empty)"
	}
	return "; stderr: " + oneLine(a.stderrTail, 600)
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// oneLine flattens s for a log line or an error message and cuts it to n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
