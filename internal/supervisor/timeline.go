package supervisor

import (
	"path/filepath"
	"time"

	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/timeline"
)

// Entry is the event's JSON form: a line of --events and of the run
// folder's timeline (docs/design.md §D20).
func (e Event) Entry() timeline.Entry {
	j := timeline.Entry{
		Time: e.Time.UTC(), Event: string(e.Kind), Issue: e.Issue, Attempt: e.Attempt, Session: e.Session,
		RunDir: e.RunDir, Continued: e.Continued, Pid: e.Pid, Resume: e.Resume, Purpose: e.Purpose,
		Tool: e.Tool, ToolInput: e.ToolInput, Task: e.Task, Hook: e.Hook, Outcome: e.Outcome, Action: e.Action, Reason: e.Reason,
		BackoffMS: e.Backoff.Milliseconds(), LimitMS: e.Limit.Milliseconds(), GraceMS: e.Grace.Milliseconds(),
		TookMS: e.Took.Milliseconds(), Termed: e.Termed, Killed: e.Killed,
		ToolsRunning: e.ToolsRunning, Phase: e.Phase, Doing: e.Doing, Occupancy: e.Occupancy, Window: e.Window,
		Continuation: e.Continuation, CheckpointBytes: e.CheckpointBytes,
		Until: utcOrZero(e.Until), RetryAt: utcOrZero(e.RetryAt), LimitType: e.LimitType,
	}
	switch e.Kind {
	case EvAttemptEnded, EvRunFinished:
		code := e.ExitCode
		j.ExitCode = &code
	case EvHookFinished:
		j.ExitCode = e.HookExitCode
	}
	if e.Kind == EvRunFinished {
		cost := e.CostUSD
		j.CostUSD = &cost
	}
	return j
}

func utcOrZero(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}

// timelineEvent appends a decision to the run folder's timeline: every
// event but progress (the status line's feed, a copy of the lines' times).
func (r *runner) timelineEvent(e Event) {
	if e.Kind == EvProgress || r.runDir == "" {
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
	if ev.Type == "stream_event" || r.runDir == "" {
		return
	}
	r.openTimeline()
	off := ev.Offset
	r.timeline.Append(timeline.Entry{Time: at.UTC(), Event: timeline.EventLine, Issue: r.cfg.IssueID, Attempt: n, Offset: &off})
	r.warnTimeline()
}

func (r *runner) openTimeline() {
	if r.timeline == nil {
		r.timeline = timeline.NewWriter(filepath.Join(r.runDir, timeline.FileName))
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
