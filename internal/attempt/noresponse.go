package attempt

import (
	"time"

	"github.com/malarun/malarun/internal/stream"
)

// NoResponses counts an attempt's requests that the API never answered,
// asked again: by the CLI itself (api_retry lines with no_response: 2.1.332
// with its first-byte watchdog armed, docs/design.md §F37), or by malarun,
// which found the first byte late and resumes the session (Found), and the
// time they cost. Like the machine it holds no clock: the driver gives each
// line's time.
type NoResponses struct {
	// Retries is how many such lines came.
	Retries int
	// Waited is what the CLI says it waited for each failed request's
	// response headers (no_response.waited_ms), summed.
	Waited time.Duration
	// Cost is Waited plus, for each, the time from its api_retry line to
	// the next line of progress (the retried request's answer, or any
	// later line of the model's work), or to the attempt's end when none
	// came.
	Cost time.Duration
	// since is when the retry still waiting for an answer was announced
	// (zero: none waits).
	since time.Time
}

// Observe folds in one line that arrived at now.
func (n *NoResponses) Observe(ev *stream.Event, now time.Time) {
	if ev.Type == "system" && ev.Subtype == "api_retry" && ev.NoResponse {
		n.settle(now)
		n.Retries++
		// waited_ms is at most stream.maxRetryDelayMS (a year): it fits.
		w := time.Duration(ev.NoResponseWaitedMS * float64(time.Millisecond))
		n.Waited = addDuration(n.Waited, w)
		n.Cost = addDuration(n.Cost, w)
		n.since = now
		return
	}
	if answer(ev) {
		n.settle(now)
	}
}

// Found counts a request malarun itself found never answered: the attempt
// hung waiting for its first byte (docs/design.md §D33), was stopped, and
// the session is resumed, which asks again. The silence malarun waited is
// what it cost; it is counted as a request asked again, as claude's own.
func (n *NoResponses) Found(silence time.Duration) {
	n.Retries++
	n.Waited = addDuration(n.Waited, silence)
	n.Cost = addDuration(n.Cost, silence)
}

// End closes a retry still waiting when the attempt ended at now.
func (n *NoResponses) End(now time.Time) { n.settle(now) }

func (n *NoResponses) settle(now time.Time) {
	if n.since.IsZero() {
		return
	}
	if d := now.Sub(n.since); d > 0 {
		n.Cost = addDuration(n.Cost, d)
	}
	n.since = time.Time{}
}

// answer reports whether a line shows the work going on again after a
// retry: the model's stream (but a ping), a message or a result; not a line
// that only says the CLI is still at the request (a status, another retry,
// a ping, a keep-alive, a rate limit's state).
func answer(ev *stream.Event) bool {
	switch ev.Type {
	case "stream_event":
		return ev.StreamEventType != "ping"
	case "assistant", "user", "result":
		return true
	}
	return false
}

// addDuration adds without overflow: the durations come from the stream.
func addDuration(a, b time.Duration) time.Duration {
	if b > 0 && a > time.Duration(1<<63-1)-b {
		return time.Duration(1<<63 - 1)
	}
	return a + b
}
