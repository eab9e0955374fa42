package run

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/ctxpressure"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/record"
)

// Next folds the attempt that ended into the state and decides what
// follows (docs/design.md §D4, §D5, §D6, §D10).
func Next(p Policy, s State, e Ended, now time.Time, d Draws) (State, Action) {
	s = s.clone()
	wasCheckpoint := s.Checkpointing
	s.fold(p, e)
	if e.Ending == attempt.RateLimit {
		// Retrying cannot fix a usage limit, and waiting for its reset is
		// not a retry: the limited attempt uses none of max_attempts and no
		// idle-retry count goes up (§D10).
		then := s.afterLimit(e, wasCheckpoint)
		next, act := s.onLimit(p, e.Limit, e.Reason, now, d, then)
		if act.Kind == Sleep {
			next.AttemptsAtStart++
			next.Checkpointing = wasCheckpoint // a refused checkpoint is asked for again
			next.SessionID = then.SessionID
		}
		return next, act
	}
	dec, failure := s.decide(p, e, wasCheckpoint)
	switch dec.Kind {
	case Done:
		return s, Action{Kind: End, Outcome: outcome.Success, Reason: dec.Reason, Decision: dec}
	case Fail:
		return s, Action{Kind: End, Outcome: failure, Reason: dec.Reason, Decision: dec}
	}
	return s.after(p, s.nextAttempt(dec, e, d), now, dec)
}

// fold takes in what the attempt did.
func (s *State) fold(p Policy, e Ended) {
	s.Attempts++
	s.CostUSD += e.CostUSD
	switch {
	case e.Ending == attempt.ResumeNotFound:
		s.SessionID, s.SessionTalked = "", false
	case e.SessionID != "" && e.SessionID != s.SessionID:
		s.SessionID, s.SessionTalked = e.SessionID, e.Progress
	default:
		s.SessionTalked = s.SessionTalked || e.Progress
	}
	for _, c := range e.ToolCalls {
		if !p.SideEffectFree[c.Name] {
			s.SideEffects[c.Name]++
		}
	}
	if e.Reason != "" {
		s.LastReason = e.Reason
	}
	s.Checkpointing = false
	s.Talked = s.Talked || e.Talked
	firstByte := e.Ending == attempt.Hang && e.Hung != nil && e.Hung.FirstByte
	switch {
	case firstByte:
		// A request never answered is answered at once when asked again
		// (§F36): only a first byte that hangs twice in a row is a slow
		// model's, and gets more room; a lost request now and then does
		// not make every later one wait longer.
		s.FirstByteHangs++
		if s.FirstByteHangs >= 2 {
			// The first byte's room, whether the wait began with a
			// request or with a retry the CLI announced.
			s.Room.Grow(attempt.PhaseWaiting)
		}
	case e.Ending == attempt.Hang && e.Hung != nil:
		// A healthy model can be silent there for longer than the
		// allowance: the next attempt gets more room, so the same kill
		// does not come on every resume (§D30).
		s.Room.Grow(e.Hung.Phase)
	}
	if !firstByte {
		s.FirstByteHangs = 0
	}
	// The CLI's own sleeps through a usage limit came out of limit_wait.
	s.LimitWait.Spend(e.CLIWaited)
	s.Cut = cutOf(e)
}

// cutOf is what the attempt left running, as the record names it: the
// first record.MaxInFlight calls and tasks, and how many more.
func cutOf(e Ended) record.InFlight {
	calls, callsMore := record.Named(e.CutCalls, 0)
	tasks, tasksMore := record.Named(e.CutTasks, 0)
	return record.InFlight{Running: kept(calls), RunningMore: callsMore, Tasks: kept(tasks), TasksMore: tasksMore}
}

// kept is a copy of items for the state (nil: none): the driver's attempt
// machine keeps changing its own.
func kept[T any](items []T) []T {
	if len(items) == 0 {
		return nil
	}
	return slices.Clone(items)
}

// decide is the retry decision proper: what follows an attempt that did
// not stop on a usage limit, and for Fail the run's outcome.
func (s *State) decide(p Policy, e Ended, checkpointing bool) (Decision, outcome.Outcome) {
	if fail, ok := finalOutcome(e.Ending); ok && (!checkpointing || stopsCheckpoint(e.Ending)) {
		return Decision{Kind: Fail, Reason: e.Reason}, fail
	}
	if e.Ending == attempt.ContextFull && !s.SessionTalked && !checkpointing {
		return Decision{Kind: Fail, Reason: e.Reason +
			" (on the first exchange of a session: a fresh session cannot help; shorten the prompt)"}, outcome.ErrorResult
	}
	if e.Ending != attempt.Success || checkpointing {
		// Every way on starts another attempt: the caps apply to all of them.
		if p.MaxCostUSD > 0 && s.CostUSD >= p.MaxCostUSD {
			return Decision{Kind: Fail, Reason: overBudget(s.CostUSD, p.MaxCostUSD)}, outcome.Budget
		}
		if n := s.Attempts - s.AttemptsAtStart; n >= p.MaxAttempts {
			return Decision{Kind: Fail, Reason: fmt.Sprintf(
				"%d attempts, the most max_attempts allows; last: %s", n, s.LastReason)}, outcome.RetriesExhausted
		}
	}
	switch {
	case e.Ending == attempt.PromptLost:
		return s.again(p, e, checkpointing)
	case checkpointing && e.Ending == attempt.Success:
		return s.restart(p, Continue, "the checkpoint is written", ctxpressure.ExtractCheckpoint(e.Reply))
	case checkpointing:
		// The checkpoint request failed (hung, crashed, or the context was
		// too full even for it): go on without one.
		return s.restart(p, Fallback, "no checkpoint: "+e.Reason, "")
	case e.Ending == attempt.Success:
		return Decision{Kind: Done, Reason: "claude reported success"}, ""
	case e.Ending == attempt.ContextPressure:
		if p.MaxContinuations > 0 && s.Continuations >= p.MaxContinuations {
			return Decision{Kind: Fail, Reason: continuationsExhausted(s.Continuations, p.MaxContinuations)}, outcome.ContextExhausted
		}
		s.Checkpointing = true
		return Decision{Kind: Checkpoint, SessionID: s.SessionID, Reason: e.Reason}, ""
	case e.Ending == attempt.ContextFull:
		return s.restart(p, Fallback, e.Reason, "")
	}
	return s.retry(p, e)
}

// retry decides after a hang, a crash, an API failure, or a session that
// cannot be resumed: resume, start fresh, or stop.
func (s *State) retry(p Policy, e Ended) (Decision, outcome.Outcome) {
	if e.Progress && e.Ending != attempt.ResumeNotFound {
		s.IdleRetries = 0
	} else {
		s.IdleRetries++
	}
	if s.IdleRetries > p.MaxIdleRetries {
		return Decision{Kind: Fail, Reason: fmt.Sprintf(
			"%d attempts in a row without progress (max_idle_retries %d); last: %s", s.IdleRetries, p.MaxIdleRetries, s.LastReason)}, outcome.RetriesExhausted
	}
	if e.Ending == attempt.ResumeNotFound && s.HasCheckpoint {
		return s.restart(p, Continue, e.Reason+"; continuing from the last checkpoint", s.Checkpoint)
	}
	if s.SessionID != "" && s.SessionTalked {
		s.Retries++
		return Decision{Kind: Resume, SessionID: s.SessionID, Backoff: p.backoff(s.Retries), Reason: e.Reason}, ""
	}
	if n := s.sideEffectCount(); n > 0 {
		return Decision{Kind: Fail, Reason: fmt.Sprintf(
			"no session to resume, and a fresh start would repeat %d tool call(s) with side effects (%s)", n, s.sideEffectTools())}, outcome.NotSafeToRetry
	}
	s.Retries++
	s.SessionID, s.SessionTalked = "", false
	return Decision{Kind: Fresh, Backoff: p.backoff(s.Retries), Reason: e.Reason}, ""
}

// again makes an attempt whose prompt never reached the model once more,
// with that prompt (docs/design.md §D36): in the session it resumed, or, if
// it started one, in a fresh session (the CLI made the one it was given).
// It repeats what was decided before it, so nothing new is judged (no
// side-effect check); like any attempt without progress it counts toward
// max_idle_retries, so a prompt that never gets through (one claude takes
// for its own /command) ends the run.
func (s *State) again(p Policy, e Ended, checkpointing bool) (Decision, outcome.Outcome) {
	s.IdleRetries++
	if s.IdleRetries > p.MaxIdleRetries {
		return Decision{Kind: Fail, Reason: fmt.Sprintf(
			"%d attempts in a row without progress (max_idle_retries %d); last: %s", s.IdleRetries, p.MaxIdleRetries, s.LastReason)}, outcome.RetriesExhausted
	}
	s.Retries++
	s.Checkpointing = checkpointing // a checkpoint request is asked again
	if e.Attempt.Resume {
		return Decision{Kind: Resume, SessionID: e.Attempt.SessionID, Backoff: p.backoff(s.Retries), Reason: e.Reason}, ""
	}
	s.SessionID, s.SessionTalked = "", false
	s.SessionPrompt = writtenOf(e.Attempt)
	return Decision{Kind: Fresh, Backoff: p.backoff(s.Retries), Reason: e.Reason}, ""
}

// writtenOf is where attempt a's prompt is written: a prompt it reused, or
// its own (NoTemplate's numbering).
func writtenOf(a Attempt) int {
	if a.Prompt.Template == NoTemplate {
		return a.Prompt.Written
	}
	return a.N
}

// restart starts a new session because the context filled, from
// checkpoint (Continue) or from the task (Fallback): the new session
// starts with a clean slate (no idle retries, no side effects it would
// repeat).
func (s *State) restart(p Policy, kind DecisionKind, reason, checkpoint string) (Decision, outcome.Outcome) {
	if p.MaxContinuations > 0 && s.Continuations >= p.MaxContinuations {
		return Decision{Kind: Fail, Reason: continuationsExhausted(s.Continuations, p.MaxContinuations)}, outcome.ContextExhausted
	}
	s.Continuations++
	s.HasCheckpoint = s.HasCheckpoint || kind == Continue
	// A fallback starts from the task, not an older checkpoint.
	s.Checkpoint = checkpoint
	s.SessionID, s.SessionTalked, s.IdleRetries = "", false, 0
	s.SideEffects = map[string]int{}
	return Decision{Kind: kind, Reason: reason}, ""
}

// nextAttempt is the attempt a decision to go on starts: its session and
// its prompt, chosen here and nowhere else.
func (s *State) nextAttempt(dec Decision, e Ended, d Draws) Attempt {
	a := Attempt{N: s.take(), Because: dec}
	if e.Ending == attempt.PromptLost {
		// The same prompt again, word for word (again).
		a.SessionID, a.Resume, a.Checkpoint = dec.SessionID, dec.Kind == Resume, e.Attempt.Checkpoint
		if dec.Kind == Fresh {
			a.SessionID = d.NewSession
		}
		a.Prompt = Prompt{Template: NoTemplate, Written: writtenOf(e.Attempt)}
		return a
	}
	data := PromptData{Reason: e.Reason, Checkpoint: s.Checkpoint}
	switch dec.Kind {
	case Resume:
		a.SessionID, a.Resume = dec.SessionID, true
		data.Interrupted, data.Tasks, data.Hooks = e.CutCalls, e.CutTasks, e.CutHooks
		data.CutReply = cutReply(e.Hung)
		a.Prompt = Prompt{Template: ResumeTemplate, Data: data}
	case Checkpoint:
		a.SessionID, a.Resume, a.Checkpoint = dec.SessionID, true, true
		a.Prompt = Prompt{Template: CheckpointTemplate, Data: data}
	case Continue, Fallback:
		// An empty checkpoint would seed a session that knows nothing: the
		// fallback prompt carries the task instead.
		t := FallbackTemplate
		if dec.Kind == Continue && s.Checkpoint != "" {
			t = ContinuationTemplate
		}
		a.SessionID, a.Prompt = d.NewSession, Prompt{Template: t, Data: data}
		s.SessionPrompt = a.N
	case Fresh:
		// The prompt the current session started with: the task, or a
		// continuation's checkpoint.
		a.SessionID, a.Prompt = d.NewSession, Prompt{Template: NoTemplate, Written: s.SessionPrompt}
	}
	return a
}

// cutReply tells the model what it was writing when a hang cut its reply
// off ("" when it was not writing: a tool ran, a request waited).
func cutReply(d *attempt.Doing) string {
	if d == nil {
		return ""
	}
	const lost = " The API stopped sending it, so none of that part is in your history."
	switch d.Phase {
	case attempt.PhaseToolInput:
		what := "a tool call"
		if d.What != "" {
			what = "a " + d.What + " call"
		}
		return "Your last reply was cut off while you were writing the input of " + what + ": that call never ran." + lost
	case attempt.PhaseText:
		return "Your last reply was cut off while you were writing text." + lost
	case attempt.PhaseThinking:
		return "Your last reply was cut off while you were thinking." + lost
	case attempt.PhaseBlock:
		return "Your last reply was cut off while you were writing a " + d.What + " block." + lost
	case attempt.PhaseReplying:
		return "Your last reply was cut off between two of its parts." + lost
	}
	return ""
}

// afterLimit is the attempt that follows a usage limit's reset: the same
// session resumed (it exists even if the refused request was its first),
// told why it stopped; a refused checkpoint request is asked again.
func (s *State) afterLimit(e Ended, checkpoint bool) Attempt {
	a := Attempt{N: s.take(), SessionID: cmp.Or(s.SessionID, e.SessionID), Resume: true, Checkpoint: checkpoint}
	data := PromptData{Reason: e.Reason, Checkpoint: s.Checkpoint, Interrupted: e.CutCalls, Tasks: e.CutTasks, Hooks: e.CutHooks, LimitNote: limitNote(e.Limit.Type)}
	a.Prompt = Prompt{Template: ResumeTemplate, Data: data}
	if checkpoint {
		a.Prompt.Template = CheckpointTemplate // the checkpoint was refused, not written: ask again
	}
	return a
}

// take numbers the next attempt.
func (s *State) take() int {
	n := s.Next
	s.Next++
	return n
}

// after starts a (the wait first, when the decision has a backoff).
func (s State) after(p Policy, a Attempt, now time.Time, dec Decision) (State, Action) {
	if dec.Backoff <= 0 {
		s, act := s.start(p, a, now)
		act.Decision = dec
		return s, act
	}
	until := now.Add(dec.Backoff)
	if !p.Deadline.IsZero() && p.Deadline.Before(until) {
		until = p.Deadline // session_timeout ends the wait, and the run
	}
	s.Sleeping, s.Pending = SleepBackoff, a
	return s, Action{Kind: Sleep, Until: until, Decision: dec}
}

// Woke decides once a sleep is over: the pending attempt starts, unless
// session_timeout ended the wait.
func Woke(p Policy, s State, now time.Time) (State, Action) {
	s = s.clone()
	if !p.Deadline.IsZero() && !now.Before(p.Deadline) {
		return s, Action{Kind: End, Outcome: outcome.SessionTimeout, Reason: "session_timeout elapsed while waiting " + s.Sleeping.What()}
	}
	if s.Sleeping == SleepLimit {
		// The limit reset: the run is no longer waiting for it.
		s.Limit, s.Status = record.UsageLimit{}, record.Processing
	}
	s.Sleeping = SleepNone
	return s.start(p, s.Pending, now)
}

// start starts a now, unless the session deadline has passed (a backoff of
// 0 does not look) or max_cost_usd leaves nothing for it.
func (s State) start(p Policy, a Attempt, now time.Time) (State, Action) {
	if !p.Deadline.IsZero() && !now.Before(p.Deadline) {
		return s, Action{Kind: End, Outcome: outcome.SessionTimeout, Reason: "session_timeout elapsed before the next attempt"}
	}
	if p.MaxCostUSD > 0 {
		a.BudgetUSD = p.MaxCostUSD - s.CostUSD
		if a.BudgetUSD <= 0 {
			return s, Action{Kind: End, Outcome: outcome.Budget, Reason: overBudget(s.CostUSD, p.MaxCostUSD)}
		}
	}
	s.Sleeping, s.Pending = SleepNone, Attempt{}
	return s, Action{Kind: Start, Attempt: a}
}

// stopsCheckpoint: endings that end the run even while a checkpoint is
// being asked for; any other failure of the checkpoint request falls back.
func stopsCheckpoint(e attempt.Ending) bool {
	switch e {
	case attempt.Auth, attempt.RateLimit, attempt.SessionTimeout, attempt.Interrupted, attempt.BudgetExceeded, attempt.Unreachable:
		return true
	}
	return false
}

// finalOutcome is the one mapping from how an attempt ended to how the run
// ends (docs/design.md §D13): the endings that retrying cannot fix.
func finalOutcome(e attempt.Ending) (outcome.Outcome, bool) {
	switch e {
	case attempt.ErrorResult, attempt.MaxTurns, attempt.EarlyExit:
		return outcome.ErrorResult, true
	case attempt.Auth:
		return outcome.Auth, true
	case attempt.Unreachable:
		return outcome.APIUnreachable, true
	case attempt.RateLimit:
		return outcome.RateLimit, true
	case attempt.SessionTimeout:
		return outcome.SessionTimeout, true
	case attempt.Interrupted:
		return outcome.Interrupted, true
	case attempt.BudgetExceeded:
		return outcome.Budget, true
	}
	return "", false
}

func overBudget(cost, max float64) string {
	return fmt.Sprintf("the run has cost $%.4f, at or above max_cost_usd $%.4f", cost, max)
}

func continuationsExhausted(n, max int) string {
	return fmt.Sprintf("the context filled up again after %d continuation(s) (max_continuations %d)", n, max)
}

// backoff is the wait before retry n (1-based); the last entry repeats.
func (p Policy) backoff(n int) time.Duration {
	if len(p.Backoff) == 0 {
		return 0
	}
	return p.Backoff[min(n, len(p.Backoff))-1]
}

func (s State) sideEffectCount() int {
	n := 0
	for _, v := range s.SideEffects {
		n += v
	}
	return n
}

// sideEffectTools lists the tools as "Bash ×3, Write".
func (s State) sideEffectTools() string {
	names := make([]string, 0, len(s.SideEffects))
	for k := range s.SideEffects {
		names = append(names, k)
	}
	sort.Strings(names)
	for i, k := range names {
		if n := s.SideEffects[k]; n > 1 {
			names[i] = fmt.Sprintf("%s ×%d", k, n)
		}
	}
	return strings.Join(names, ", ")
}

// DefaultSideEffectFree are the tools that only read.
func DefaultSideEffectFree() []string {
	return []string{"Read", "Glob", "Grep", "LS", "WebSearch", "WebFetch", "TodoWrite"}
}

// DefaultBackoff is the wait before each retry: at once, then 5s, then 15s.
func DefaultBackoff() []time.Duration {
	return []time.Duration{0, 5 * time.Second, 15 * time.Second}
}
