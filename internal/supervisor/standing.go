package supervisor

import (
	"path/filepath"
	"time"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/run"
)

// What the run's standing (run.State.Standing: its status, the usage
// limit in force, its end) tells the observers, each read in one
// function: the record reads it in record (record.go), the report in
// endReport, the events here. No fact of it is copied from one struct to
// another on its way out.

// limitWaitEvent is the limit_wait event of a sleep for a usage limit's
// reset: when malarun resumes, the limit waited for, and why.
func limitWaitEvent(s *run.State, act run.Action) event.Event {
	return event.Event{Kind: event.LimitWait, Until: act.Until, UsageLimit: s.Limit, Reason: act.Reason}
}

// endReport completes the report once the run is closed: where the
// record is, when the run started and how long it took, what the record
// says of its sessions, restarts and reclaims, and the usage limit that
// stopped it (exit 75).
func (k *recordKeeper) endReport(rep event.Report, pl *plan, started time.Time) event.Report {
	rep.Issue, rep.Record, rep.Started, rep.Duration = k.issue, filepath.Join(k.journal.Dir(), journal.RecordFile), started, time.Since(started)
	rec := k.record(time.Now())
	rep.Sessions, rep.Continuations = rec.Sessions, rec.Continuations
	rep.Reclaims, rep.Reclaimed = rec.RunReclaims, pl.reclaimed
	rep.UsageLimit = k.state.StoppedBy()
	return rep
}

// finishedEvent is the finished event: how the run ended (its outcome,
// exit code and sentence, and the limit that stopped it), with the
// report's cost, tokens, session and requests lost.
func finishedEvent(st *run.State, rep event.Report) event.Event {
	s := st.Standing
	return event.Event{Kind: event.RunFinished, Outcome: string(s.Outcome), ExitCode: s.ExitCode, Reason: s.Reason, UsageLimit: s.StoppedBy(),
		CostUSD: rep.CostUSD, Tokens: rep.Usage, Session: rep.SessionID, NoResponse: rep.NoResponse, ResultsLost: rep.ResultsLost}
}
