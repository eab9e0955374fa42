package run

import (
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/stream"
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
	// Pending is a usage limit known before any attempt (the record's own
	// retry_at, or another malarun's of the same account; zero: none).
	Pending usagelimit.Limit
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
	// Running and Tasks were in flight when the last malarun stopped;
	// RunningMore and TasksMore more of them, not named in the record.
	Running                []stream.ToolUse
	Tasks                  []stream.Task
	RunningMore, TasksMore int
	// Talked: the run had an answer from the API before.
	Talked bool
	// Room is the room the run gave each phase so far (§D30).
	Room attempt.Room
	// Limited is the usage limit the run stopped on (nil: none): the resume
	// prompt says so, so the agent does not look for a fault of its own.
	Limited *usagelimit.Limit
}

// Begin decides the invocation's first step: its first attempt (a new
// session, or the recorded one resumed with a prompt that says what was
// cut off), a wait for a usage limit known before it, or an end.
func Begin(p Policy, b Beginning, now time.Time, d Draws) (State, Action) {
	r := b.Record
	s := State{
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
		data := PromptData{Reason: "the previous malarun stopped before the run ended", Checkpoint: r.Checkpoint,
			Interrupted: r.Running, InterruptedMore: r.RunningMore, Tasks: r.Tasks, TasksMore: r.TasksMore}
		if r.Limited != nil {
			data.LimitNote = limitNote(r.Limited.Type)
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
	if b.Pending.Known() {
		return s.onLimit(p, b.Pending, "", now, d, a)
	}
	return s.start(p, a, now)
}
