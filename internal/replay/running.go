package replay

import (
	"sort"
	"time"

	"github.com/malarun/malarun/internal/event"
)

// While a run is followed, a tool call is told when it starts, and told
// again while it runs, at growing steps of its time so far (5 s, 10 s,
// 20 s, 30 s, 1 m, 2 m, 5 m, 10 m, then every 10 m): someone watching
// sees what the agent is waiting for, in any output (a pipe, Markdown),
// without a line every second.

// runningCall is a call told and not answered yet.
type runningCall struct {
	item  Item // the call as told: its tool, id, summary, attempt and time
	shown time.Duration
}

// nextStep is the first time so far, after shown, at which a call is
// told again.
func nextStep(shown time.Duration) time.Duration {
	steps := [...]time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 30 * time.Second,
		time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute}
	for _, s := range steps {
		if s > shown {
			return s
		}
	}
	return shown + steps[len(steps)-1]
}

// track keeps the calls still running, while following: a call with a
// time enters, its result or its attempt's end takes it out.
func (w *walk) track(it *Item) {
	if w.src.Follow == nil {
		return
	}
	switch it.Kind {
	case KindToolCall:
		if !it.Time.IsZero() && it.ToolID != "" && len(w.running) < maxRunning {
			w.running[it.ToolID] = &runningCall{item: *it}
		}
	case KindToolResult:
		delete(w.running, it.ToolID)
	case event.AttemptEnded, event.AttemptStarted:
		// An attempt's end takes its calls out; so does the next one's
		// start (an attempt whose malarun was killed has no recorded end).
		for id, c := range w.running {
			if c.item.Attempt == it.Attempt || it.Kind == event.AttemptStarted {
				delete(w.running, id)
			}
		}
	}
}

// maxRunning bounds the calls followed at once (a transcript may hold
// any number of calls never answered).
const maxRunning = 64

// stillRunning tells each call whose time so far passed its next step,
// oldest first, once the story has caught up with the run.
func (w *walk) stillRunning() error {
	now := w.src.Now()
	var due []*runningCall
	for _, c := range w.running {
		if now.Sub(c.item.Time) >= nextStep(c.shown) {
			due = append(due, c)
		}
	}
	sort.Slice(due, func(i, j int) bool { return due[i].item.Seq < due[j].item.Seq })
	for _, c := range due {
		so := now.Sub(c.item.Time)
		for next := nextStep(c.shown); next <= so; next = nextStep(c.shown) {
			c.shown = next
		}
		it := Item{Kind: KindToolRunning, Attempt: c.item.Attempt, Time: now, Tool: c.item.Tool, ToolID: c.item.ToolID,
			Summary: firstNonEmpty(c.item.Summary, c.item.Input), TookMS: so.Milliseconds(), Agent: c.item.Agent}
		if err := w.emit(&it); err != nil {
			return err
		}
	}
	return nil
}
