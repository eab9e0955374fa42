package supervisor

import (
	"path/filepath"
	"time"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/timelinefile"

	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/timeline"
)

// timelineEvent appends a decision to the run folder's timeline: every
// event but progress (the status line's feed, a copy of the lines' times).
func (r *runner) timelineEvent(e event.Event) {
	if e.Kind == event.Progress || r.base.RunDir == "" {
		return
	}
	r.openTimeline()
	r.timeline.Append(e.Entry())
	r.warnTimeline()
}

// timelineLine records when a whole message of attempt n was read. The
// CLI's partial-message lines (stream_event, many a second) get none: a
// replay shows whole messages, and a silence ends at the next line of any kind,
// which hang_detected's limit already measures.
func (r *runner) timelineLine(n int, ev *stream.Event, at time.Time) {
	if ev.Type == "stream_event" || r.base.RunDir == "" {
		return
	}
	r.openTimeline()
	off := ev.Offset
	r.timeline.Append(timeline.Entry{Time: at.UTC(), Event: timeline.EventLine, Issue: r.cfg.IssueID, Attempt: n, Offset: &off})
	r.warnTimeline()
}

func (r *runner) openTimeline() {
	if r.timeline == nil {
		r.timeline = timelinefile.NewWriter(filepath.Join(r.base.RunDir, timeline.FileName))
	}
}

// warnTimeline says once that the timeline stopped: the run goes on, and
// malarun show lacks the times from then on.
func (r *runner) warnTimeline() {
	if err := r.timeline.Err(); err != nil && !r.timelineWarned {
		r.timelineWarned = true
		r.log.Warn().Err(err).Msg("cannot write the run folder's timeline; the run goes on, and malarun show lacks times from here on")
	}
}
