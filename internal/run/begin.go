package run

import (
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/usagelimit"
)

// Beginning is how an invocation starts: a new run, or the record's run
// continued (its malarun died, was interrupted, or stopped on its limits).
type Beginning struct {
	// Continued: the run is the record's, and Record says what it holds.
	Continued bool
	Record    Recorded
	// FirstAttempt is the number of the invocation's first attempt: 1 for
	// a new run, the first unused one for a continued run.
	FirstAttempt int
	// Shared is another malarun's note of a usage limit of the same
	// account, as the driver read it (zero: none). Begin waits for it, or
	// for the record's own retry_at, whichever resets later.
	Shared usagelimit.Limit
}

// Recorded is what the record says of the run an invocation continues.
type Recorded struct {
	Attempts int
	// NotCounted are the recorded attempts max_attempts does not count for
	// this invocation: all of them when the run stopped on its own limits,
	// else those a dead malarun cut.
	NotCounted    int
	SessionID     string
	SessionTalked bool
	SideEffects   map[string]int
	CostUSD       float64
	Continuations int
	Checkpoint    string
	// InFlight were running when the last malarun stopped, as the record
	// names them.
	InFlight record.InFlight
	// Talked: the run had an answer from the API before.
	Talked bool
	// Room is the room the run gave each phase so far (§D30).
	Room attempt.Room
	// Reclaims are the malarun deaths in a row (the poison rule).
	Reclaims int
	// Limit is the usage limit the record names (zero: none); Limited says
	// the run stopped on it: the resume prompt says so, so the agent does
	// not look for a fault of its own.
	Limit   record.UsageLimit
	Limited bool
}

// Taken is the run as this malarun takes it, before Begin decides its
// first step: processing, as the record left it (its limit, its
// reclaims, what its last attempt cut off). The record saved before the
// first step, and the end of a run that never took one, read it.
func Taken(b Beginning) State {
	s := State{Standing: b.standing()}
	s.Limit = b.Record.Limit
	return s
}

// standing is how a run stands as it begins: processing, no limit in
// force until Begin decides one.
func (b Beginning) standing() Standing {
	return Standing{Status: record.Processing, Reclaims: b.Record.Reclaims, Cut: b.Record.InFlight}
}

// Begin decides the invocation's first step: its first attempt (a new
// session, or the recorded one resumed with a prompt that says what was
// cut off), a wait for a usage limit known before it, or an end.
func Begin(p Policy, b Beginning, now time.Time, d Draws) (State, Action) {
	r := b.Record
	s := State{Standing: b.standing(),
		Next: b.FirstAttempt, Attempts: r.Attempts, AttemptsAtStart: r.NotCounted,
		SessionID: r.SessionID, SessionTalked: r.SessionTalked, SideEffects: r.SideEffects, CostUSD: r.CostUSD,
		Continuations: r.Continuations, Checkpoint: r.Checkpoint, HasCheckpoint: r.Checkpoint != "", Talked: r.Talked, Room: r.Room,
		LimitWait: usagelimit.Budget{Total: p.LimitWait},
	}.clone()
	a := Attempt{N: s.take(), SessionID: r.SessionID, Resume: r.SessionID != ""}
	if !a.Resume {
		a.SessionID = d.NewSession
	}
	if b.Continued {
		cut := r.InFlight
		data := PromptData{Reason: "the previous malarun stopped before the run ended", Checkpoint: r.Checkpoint,
			Interrupted: cut.Running, InterruptedMore: cut.RunningMore, Tasks: cut.Tasks, TasksMore: cut.TasksMore}
		if r.Limited {
			data.LimitNote = limitNote(r.Limit.LimitType)
		}
		switch {
		case a.Resume:
			a.Prompt = Prompt{Template: ResumeTemplate, Data: data}
		case r.Checkpoint != "":
			a.Prompt = Prompt{Template: ContinuationTemplate, Data: data}
			s.SessionPrompt = a.N
		case s.sideEffectCount() > 0:
			return s, Action{Kind: End, Outcome: outcome.NotSafeToRetry,
				Reason: "the recorded run has no session to resume, and a fresh start would repeat tool calls with side effects"}
		default:
			a.Prompt = Prompt{Template: FallbackTemplate, Data: data}
			s.SessionPrompt = a.N
		}
	}
	// A limit known before the first attempt is waited out, or stops the
	// run, without calling the API.
	if l := b.pending(now); l.Known() {
		return s.onLimit(p, l, "", now, d, a)
	}
	return s.start(p, a, now)
}

// pending is the usage limit known before the first attempt (zero: none):
// the record's own retry_at when it is ahead (a run that exited 75, or
// whose malarun died while waiting), or another malarun's note, whichever
// resets later.
func (b Beginning) pending(now time.Time) usagelimit.Limit {
	var l usagelimit.Limit
	if own := b.Record.Limit; own.RetryAt.After(now) {
		l = usagelimit.Limit{RetryAt: own.RetryAt, Type: own.LimitType, Waitable: true}
	}
	if b.Shared.RetryAt.After(l.RetryAt) {
		l = b.Shared
	}
	return l
}
