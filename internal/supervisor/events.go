package supervisor

import (
	"time"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/stream"
)

// emit records an event in the run folder's timeline and sends it to the
// observer, if there is one. The observer runs on the supervisor's
// goroutine: it must be quick and must not block.
func (r *runner) emit(e event.Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Issue = r.cfg.IssueID
	r.folder.timelineEvent(e)
	if r.deps.Observer != nil {
		r.deps.Observer(e)
	}
}

func taskIDs(tasks []stream.Task) []string {
	out := make([]string, len(tasks))
	for i, tk := range tasks {
		out[i] = tk.ID
	}
	return out
}
