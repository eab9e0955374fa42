package attempt

import (
	"time"

	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/usagelimit"
)

// liveness decides when a model at work counts as hung. Every line pushes
// the deadline out. While a tool call is outstanding the CLI prints nothing
// until the tool ends (docs/design.md §F15), so the longer tool limit
// applies; an api_retry line announces a wait of its own, which is added.
type liveness struct {
	idle, tool  time.Duration
	outstanding []stream.ToolUse // tool calls without their result, in call order
	deadline    time.Time
	// last is when the last line came (the attempt's start before any).
	last time.Time
}

// observe updates the deadline for a line that arrived at now.
func (l *liveness) observe(ev stream.Event, now time.Time) {
	l.outstanding = append(l.outstanding, ev.ToolUses...)
	for _, id := range ev.ToolResults {
		for i, tu := range l.outstanding {
			if tu.ID == id {
				l.outstanding = append(l.outstanding[:i], l.outstanding[i+1:]...)
				break
			}
		}
	}
	l.deadline = now.Add(l.limit())
	l.last = now
	if ev.Type == "system" && ev.Subtype == "api_retry" {
		l.deadline = l.deadline.Add(usagelimit.Delay(ev.RetryDelayMS))
	}
}

// limit is the silence allowed now.
func (l *liveness) limit() time.Duration {
	if len(l.outstanding) > 0 {
		return l.tool
	}
	return l.idle
}

// toolsRunning names the outstanding tool calls, for messages.
func (l *liveness) toolsRunning() []string {
	names := make([]string, 0, len(l.outstanding))
	for _, tu := range l.outstanding {
		names = append(names, tu.Name)
	}
	return names
}
