package attempt

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/endpoint"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/usagelimit"
)

// Exit is how the CLI's process ended: its exit code, or the signal that
// killed it, as the driver read them from the process's status (attempt
// holds no process, nor the system's types for one).
type Exit struct {
	Code int
	// Signal is the number of the signal that killed the process (0:
	// none), SignalName the system's name for it ("killed", "terminated").
	// A signal the system gives no number has only its name.
	Signal     int
	SignalName string
}

// Killed reports whether a signal killed the process.
func (e Exit) Killed() bool { return e.Signal != 0 || e.SignalName != "" }

// Ended is everything Classify needs of an attempt whose tree is gone.
type Ended struct {
	Machine *State // its timing machine
	Log     *Log   // what its stream said
	Exit    Exit
	// StderrTail is the end of the CLI's stderr, for a crash's message.
	StderrTail string
	// APIAt is the API's address as it is safe to print (endpoint.Target), for
	// an unreachable API's message.
	APIAt string
	// PromptNotSeen, when not "", is the session file whose new user
	// messages do not hold the attempt's prompt although the model
	// answered (session.NotSeen): the model worked without the task.
	PromptNotSeen string
}

// Classify decides how an attempt ended, with a sentence that says what
// happened in words a user can act on.
func Classify(a Ended) (Ending, string) {
	m, log := a.Machine, a.Log
	stop := m.FinalStop()
	if stop == StopBackgroundTimeout {
		// Whatever the result said, background work was cut off: resume, and
		// the prompt names the tasks so the agent checks and redoes them.
		_, tasks := m.CutOff()
		return Hang, fmt.Sprintf("background tasks still ran background_timeout after the result (%s); the process tree was killed",
			strings.Join(TaskLabels(tasks), "; "))
	}
	if log.Succeeded() && m.ResultStands() {
		if why, lost := promptLost(log); lost {
			return PromptLost, why
		}
		if a.PromptNotSeen != "" {
			// The field's "I don't see a request" (§F38): the model ran a
			// turn, but not on the prompt malarun gave.
			return PromptLost, "claude reported success, but the model answered without the prompt: no user message of the attempt in its session file (" +
				a.PromptNotSeen + ") holds it"
		}
		// The work is done, whatever stopped the process after it said so.
		return Success, "claude reported success"
	}
	if e, why, ok := byStop(a, stop); ok {
		return e, why
	}
	// A success that no longer stands (a turn began after it, and did not
	// end) decides nothing: the stop, or the exit, does.
	if log.Result != nil && !log.Succeeded() {
		return byResult(a, stop)
	}
	switch {
	case stop == StopPressure:
		return ContextPressure, "the context window is nearly full"
	case log.RateLimit != nil:
		return RateLimit, "claude reported a " + log.RateLimit.RateLimitType + " rate limit" + resetSuffix(log)
	case stop == StopHang:
		return hangEnding(m)
	case !log.SawInit && a.Exit.Killed():
		// Killed from outside (the OOM killer, an orchestrator's SIGKILL):
		// malarun's own stops are decided above. Nothing ran, so this is a
		// crash like any other, and starting again can work; only a CLI
		// that exits on its own before its first line (a bad flag, a
		// broken install) is final.
		return Crash, fmt.Sprintf("claude %s before its first line (a signal malarun did not send)%s", describeExit(a.Exit), stderrSuffix(a.StderrTail))
	case !log.SawInit && a.Exit.Code == 0 && a.StderrTail == "":
		// 2.1.197 exits so, saying nothing, on a proxy variable that is not
		// a URL or a temporary directory it cannot make (§F37).
		return EarlyExit, "claude exited with code 0 before its first line, saying nothing (stderr empty): 2.1.197 does so when a proxy variable (HTTPS_PROXY, HTTP_PROXY) is not a complete URL, or its temporary directory (CLAUDE_CODE_TMPDIR) cannot be made"
	case !log.SawInit:
		return EarlyExit, fmt.Sprintf("claude %s before its first line%s", describeExit(a.Exit), stderrSuffix(a.StderrTail))
	}
	cut := ""
	if log.CutShort {
		cut = ", its last line cut short"
	}
	switch {
	case log.Succeeded() && m.TurnsQueued():
		return Crash, fmt.Sprintf("claude %s with a turn still queued after its last result%s%s", describeExit(a.Exit), cut, stderrSuffix(a.StderrTail))
	case log.Succeeded():
		return Crash, fmt.Sprintf("claude %s in a turn that began after its last result, before that turn's result%s%s", describeExit(a.Exit), cut, stderrSuffix(a.StderrTail))
	}
	return Crash, fmt.Sprintf("claude %s without a result line%s%s", describeExit(a.Exit), cut, stderrSuffix(a.StderrTail))
}

// promptLost reports whether a successful result came without the model:
// the CLI's own count of model round-trips in the turn (num_turns, on
// every result of both pinned versions) is 0. Then the prompt never
// reached the model (a prompt read as one of the CLI's own commands:
// docs/design.md §F38), and nothing was done. A result without num_turns
// (a CLI before it) is not judged.
func promptLost(log *Log) (string, bool) {
	r := log.Result
	if !r.HasNumTurns || r.NumTurns != 0 {
		return "", false
	}
	why := "claude reported success, but the model never saw the prompt: the turn made no model call (num_turns 0)"
	if r.Result != "" {
		why += "; claude answered by itself: " + oneLine(r.Result, 200)
	}
	return why + " (claude takes a prompt that begins with / for one of its own commands, such as /clear)", true
}

// byStop decides the stops that say on their own how the attempt ended,
// whatever the stream said after them.
func byStop(a Ended, stop StopReason) (Ending, string, bool) {
	switch stop {
	case StopInterrupted:
		return Interrupted, "malarun was asked to stop; the run can be resumed", true
	case StopSessionTimeout:
		return SessionTimeout, "session_timeout elapsed; the process tree was stopped", true
	case StopUsageLimit:
		return RateLimit, a.Machine.Limit().Reason, true
	case StopUnreachable:
		return Unreachable, unreachableReason(a.APIAt, a.Machine.Unreachable()), true
	case StopAuth:
		return Auth, authReason(a.Log.AuthRetry), true
	}
	return 0, "", false
}

// authReason says that the API refused claude's credentials. The line
// that says so announces a retry (attempt N of max_retries), which malarun
// does not let happen: a refusal at the first request is no retry.
func authReason(ar *stream.Event) string {
	status := "refused claude's credentials"
	if ar.ErrorStatus != 0 {
		status = fmt.Sprintf("answered %d", ar.ErrorStatus)
	}
	if ar.Error != "" {
		status += " " + ar.Error
	}
	when := "at claude's first request"
	if ar.Attempt > 1 {
		when = fmt.Sprintf("after claude had sent the request %d times", ar.Attempt)
	}
	return fmt.Sprintf("the API %s %s (malarun stops claude there); check ANTHROPIC_API_KEY or the CLI's login", status, when)
}

// byResult decides an attempt whose last result was an error, by the
// result table (results.go).
func byResult(a Ended, stop StopReason) (Ending, string) {
	r := a.Log.Result
	if r.StartupFailureReason != "" {
		// The CLI refused to start and said why (2.1.332, §F37).
		e, why, _ := byStartup(r)
		return e, why
	}
	c := classifyResult(r)
	switch {
	case stop == StopHang && strings.HasPrefix(r.TerminalReason, "aborted_"):
		// The CLI aborted because malarun killed it: malarun's reason wins.
		return hangEnding(a.Machine)
	case c.unknown != "":
		return ErrorResult, describeResult(a.Log) + " (unknown " + c.unknown + ": this CLI is newer than malarun knows)"
	case c.ending == BudgetExceeded:
		return c.ending, describeResult(a.Log) + " (max_cost_usd reached)"
	case c.ending == MaxTurns:
		return c.ending, describeResult(a.Log) + " (raise --max-turns to allow more)"
	case c.ending == RateLimit:
		return c.ending, describeResult(a.Log) + resetSuffix(a.Log)
	case c.ending == ResumeNotFound:
		return c.ending, "the session cannot be resumed: " + oneLine(strings.Join(r.Errors, "; "), 200)
	}
	return c.ending, describeResult(a.Log)
}

func hangEnding(m *State) (Ending, string) {
	limit, _ := m.Hang()
	d := m.HangPhase()
	return Hang, fmt.Sprintf("no output for %s %s (%s); the process tree was killed", limit, d.Label(), m.lim.whose(d))
}

// LimitOf is what an attempt said about the usage limit that stopped it:
// the CLI's own announced wait when malarun cut that short, else the
// rejected rate_limit_event (exact to the second) completed by the result
// text (the only source when the CLI printed no event). zone is where the
// CLI prints a reset that names none (nil: such a reset stays unknown).
func LimitOf(m *State, log *Log, now time.Time, zone *time.Location) usagelimit.Limit {
	if m.FinalStop() == StopUsageLimit {
		// Reason keeps the CLI's own words (how long it would have waited).
		d := m.Limit()
		l := usagelimit.Limit{RetryAt: d.RetryAt, Waitable: true, Reason: d.Reason}
		if ev := log.RateLimit; ev != nil {
			l.Type = ev.RateLimitType
		}
		return l
	}
	text := usagelimit.FromText(log.LastReply(), now, zone)
	var ev usagelimit.Event
	if rl := log.RateLimit; rl != nil {
		ev = usagelimit.Event{Status: rl.RateLimitStatus, ResetsAt: rl.ResetsAt, RateLimitType: rl.RateLimitType,
			ErrorCode: rl.RateLimitErrorCode, UsingOverage: rl.RateLimitUsingOverage}
	}
	if r := log.Result; r != nil {
		ev.APIError = r.APIError // 2.1.332 names some causes no reset clears
	}
	fromEvent, ok := usagelimit.FromEvent(ev)
	if !ok {
		return text
	}
	return usagelimit.Merge(fromEvent, text)
}

// unreachableReason says why the run stops, naming the address as it is
// safe to print (endpoint.Target.Shown) and the cause in malarun's words.
func unreachableReason(apiAt string, f endpoint.Finding) string {
	by := ""
	if f.FromCLI {
		by = " (claude's own error)"
	}
	return fmt.Sprintf("cannot reach the API at %s: %s%s; %s", apiAt, f, by, f.Hint())
}

// resetSuffix names when a rate limit resets, when the stream said.
func resetSuffix(log *Log) string {
	if log.RateLimit == nil || log.RateLimit.ResetsAt == 0 {
		return ""
	}
	return "; it resets at " + time.Unix(log.RateLimit.ResetsAt, 0).UTC().Format(time.RFC3339)
}

func describeExit(e Exit) string {
	switch {
	case e.Signal != 0:
		return fmt.Sprintf("was killed by signal %d (%s)", e.Signal, e.SignalName)
	case e.SignalName != "":
		return "was killed by " + e.SignalName
	}
	return fmt.Sprintf("exited with code %d", e.Code)
}

// describeResult says what a result that is not a success reported. The
// CLI marks a failed turn with is_error and often keeps subtype "success"
// (§F10, §F25): that word never reaches the message.
func describeResult(log *Log) string {
	r := log.Result
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
	if text := cmp.Or(r.Result, strings.Join(r.Errors, "; ")); text != "" {
		msg += ": " + oneLine(text, 400)
	}
	return msg
}

func stderrSuffix(tail string) string {
	if tail == "" {
		return " (stderr empty)"
	}
	return "; stderr: " + oneLine(tail, 600)
}

// oneLine flattens s for a log line or an error message and cuts it to n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// TaskLabel names a background task for people: its description, else the
// command that started it, else its type.
func TaskLabel(tk stream.Task) string {
	return cmp.Or(tk.Description, tk.Command, tk.Type, tk.ID)
}

// TaskLabels names tasks as "id (label)".
func TaskLabels(tasks []stream.Task) []string {
	if len(tasks) == 0 {
		return nil
	}
	out := make([]string, len(tasks))
	for i, tk := range tasks {
		out[i] = tk.ID + " (" + TaskLabel(tk) + ")"
	}
	return out
}
