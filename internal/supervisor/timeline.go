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
func (f *runFolder) timelineEvent(e event.Event) {
	if e.Kind == event.Progress || f.dir == "" {
		return
	}
	f.openTimeline()
	f.timeline.Append(e.Entry())
	f.warnTimeline()
}

// timelineLine records when a whole message of attempt n was read. The
// CLI's partial-message lines (stream_event, many a second) get none: a
// replay shows whole messages, and a silence ends at the next line of any kind,
// which hang_detected's limit already measures.
func (f *runFolder) timelineLine(n int, ev *stream.Event, at time.Time) {
	if ev.Type == "stream_event" || f.dir == "" {
		return
	}
	f.openTimeline()
	off := ev.Offset
	f.timeline.Append(timeline.Entry{Time: at.UTC(), Event: timeline.EventLine, Issue: f.issue, Attempt: n, Offset: &off})
	f.warnTimeline()
}

func (f *runFolder) openTimeline() {
	if f.timeline == nil {
		f.timeline = timelinefile.NewWriter(filepath.Join(f.dir, timeline.FileName))
	}
}

// warnTimeline says once that the timeline stopped: the run goes on, and
// malarun show lacks the times from then on.
func (f *runFolder) warnTimeline() {
	if err := f.timeline.Err(); err != nil && !f.timelineWarned {
		f.timelineWarned = true
		f.log.Warn().Err(err).Msg("cannot write the run folder's timeline; the run goes on, and malarun show lacks times from here on")
	}
}
