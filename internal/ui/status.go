package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/event"
)

// Countdown thresholds: the idle countdown shows once a hang is this close,
// in time or as a fraction of the limit, whichever comes first.
const (
	countdownWithin   = 30 * time.Second
	countdownFraction = 4 // the last quarter of the limit
)

// Status is the state the status line shows, folded from events. It is not
// safe for concurrent use: one goroutine applies events and renders.
type Status struct {
	issue       string
	maxAttempts int

	started   time.Time // the run's start: elapsed counts from here
	attempt   int
	session   string
	phase     phase
	messages  int
	tools     []string
	tasks     []string // background tasks running
	occupancy int64
	window    int64
	cost      float64
	lastLine  time.Time     // the last line of the stream
	deadline  time.Time     // when the current silence becomes a hang
	allowed   time.Duration // the silence allowed in the stream's phase (0: unknown)
	// streamPhase and doing are what the stream shows claude doing (a
	// name, and in words), since phaseSince (docs/design.md §D30).
	streamPhase string
	doing       string
	phaseSince  time.Time
	stopReason  string    // while stopping the tree
	next        string    // the retry decision, while waiting for the next attempt
	nextAt      time.Time // when the next attempt starts (after a backoff or a limit wait)
	limitType   string    // while waiting for a usage limit to reset
	// endedReason is the reason the last attempt's "ended" event line gave
	// ("" when that attempt had no such line): a decision to give up for
	// the same reason does not repeat it.
	endedReason string
}

type phase int

const (
	phaseIdle     phase = iota // before the run starts and after it ends: no status line
	phaseStarting              // an attempt started, no line yet
	phaseRunning
	phaseStopping // the process tree is being stopped
	phaseWaiting  // between attempts
	phaseLimit    // waiting for a usage limit to reset
)

// NewStatus returns the status of a run of issue, allowed maxAttempts
// attempts (0: not shown).
func NewStatus(issue string, maxAttempts int) *Status {
	return &Status{issue: issue, maxAttempts: maxAttempts}
}

// Apply folds one event into the status.
func (s *Status) Apply(e event.Event) {
	switch e.Kind {
	case event.RunStarted:
		s.started = e.Time
		s.session = e.Session
		s.phase = phaseStarting
	case event.AttemptStarted:
		s.attempt, s.session = e.Attempt, e.Session
		s.phase = phaseStarting
		s.messages, s.tools, s.lastLine, s.deadline, s.stopReason, s.next = 0, nil, time.Time{}, time.Time{}, "", ""
		s.streamPhase, s.doing, s.allowed = "", "", 0
		s.endedReason = ""
	case event.Progress:
		if s.phase == phaseStarting {
			s.phase = phaseRunning
		}
		s.session = firstNonEmpty(e.Session, s.session)
		s.messages, s.tools, s.tasks = e.Messages, e.ToolsRunning, e.Tasks
		s.occupancy, s.window, s.cost = e.Occupancy, e.Window, e.CostUSD
		s.lastLine, s.deadline = e.Time, e.IdleDeadline
		s.streamPhase, s.doing, s.phaseSince, s.allowed = e.Phase, e.Doing, e.PhaseSince, e.Limit
	case event.KillSent:
		s.phase, s.stopReason = phaseStopping, e.Reason
	case event.AttemptEnded:
		s.phase, s.tools, s.tasks = phaseWaiting, nil, nil
		s.endedReason = ""
		if endedLine(e.Outcome) {
			s.endedReason = e.Reason
		}
	case event.RetryDecided:
		s.phase, s.next, s.nextAt = phaseWaiting, e.Action, e.Time.Add(e.Backoff)
	case event.LimitWait:
		s.phase, s.tools, s.tasks = phaseLimit, nil, nil
		s.nextAt, s.limitType = e.Until, e.LimitType
	case event.Restart:
		s.occupancy = 0
	case event.RunFinished:
		s.phase = phaseIdle
		if e.CostUSD > 0 {
			s.cost = e.CostUSD
		}
	}
}

// Visible reports whether there is a status line to draw.
func (s *Status) Visible() bool { return s.phase != phaseIdle }

// Started is when the run started (zero before run_started).
func (s *Status) Started() time.Time { return s.started }

// Attempt is the current attempt number.
func (s *Status) Attempt() int { return s.attempt }

// Line is the status line at now, e.g.
//
//	issue-123 · attempt 2/10 · session 5fcbbccf · elapsed 4m12s · 38 msgs · running Bash for 2m10s · 63% of 200k · $0.4210 · hang in 25s
//
// It is not cut to the terminal's width (LineWithin is); "" when nothing
// is running.
func (s *Status) Line(now time.Time) string { return s.LineWithin(now, 0) }

// LineWithin is Line for a terminal of width columns (0: any width). When
// the whole line does not fit, the parts that matter least go first (the
// session id, the message count, the task list, the cost, ...), never
// what is about to happen ("hang in 25s", "resume in 5s", "stopping"):
// cutting the end of the line, as a terminal does, would cut exactly that.
func (s *Status) LineWithin(now time.Time, width int) string {
	if !s.Visible() {
		return ""
	}
	parts := s.parts(now)
	line := joinParts(parts)
	for width > 0 && Width(line) > width {
		drop, rank := -1, 0
		for k, p := range parts {
			if p.rank > rank {
				drop, rank = k, p.rank
			}
		}
		if drop < 0 {
			break // only what must stay is left: the terminal cuts it
		}
		parts = append(parts[:drop], parts[drop+1:]...)
		line = joinParts(parts)
	}
	return line
}

// statusPart is a part of the status line and how soon it goes when the
// line is too long: the highest rank first, rank 0 never.
type statusPart struct {
	text string
	rank int
}

// The ranks, in the order parts go when space is short.
const (
	keepAlways = iota
	rankIssue
	rankTool
	rankAttempt
	rankElapsed
	rankOccupancy
	rankCost
	rankTasks
	rankMessages
	rankSession
)

func joinParts(parts []statusPart) string {
	texts := make([]string, len(parts))
	for i, p := range parts {
		texts[i] = p.text
	}
	// Cleaned whole, whoever set each part: the line must stay one line
	// of text for the terminal to redraw it in place.
	return Clean(strings.Join(texts, " · "), 0)
}

// parts are the status line's parts at now, in the order they are shown.
func (s *Status) parts(now time.Time) []statusPart {
	parts := []statusPart{{s.issue, rankIssue}}
	add := func(text string, rank int) { parts = append(parts, statusPart{text, rank}) }
	if s.attempt > 0 {
		a := fmt.Sprintf("attempt %d", s.attempt)
		if s.maxAttempts > 0 {
			a += fmt.Sprintf("/%d", s.maxAttempts)
		}
		add(a, rankAttempt)
	}
	if s.session != "" {
		add("session "+ShortSession(s.session), rankSession)
	}
	if !s.started.IsZero() {
		add("elapsed "+Duration(now.Sub(s.started).Truncate(time.Second)), rankElapsed)
	}
	switch s.phase {
	case phaseStarting:
		add("starting claude", keepAlways)
	case phaseRunning:
		add(Plural(s.messages, "msg"), rankMessages)
		if len(s.tools) > 0 {
			add("running "+Clean(strings.Join(s.tools, ", "), 40)+s.inPhase(now, 0), rankTool)
		} else if d := s.doingNow(now); d != "" {
			add(d, rankTool)
		}
		if len(s.tasks) > 0 {
			add(Plural(len(s.tasks), "background task")+": "+Clean(strings.Join(s.tasks, ", "), 60), rankTasks)
		}
	case phaseStopping:
		add("stopping ("+s.stopReason+")", keepAlways)
	case phaseLimit:
		w := "usage limit"
		if s.limitType != "" {
			w += " (" + Clean(s.limitType, 40) + ")" // the CLI's word
		}
		add(w+": resuming in "+Duration(max(0, s.nextAt.Sub(now)).Round(time.Second)), keepAlways)
	case phaseWaiting:
		if s.next != "" && s.next != "fail" && s.next != "done" {
			w := s.next
			if left := s.nextAt.Sub(now); left > 0 {
				w += " in " + Duration(left.Round(time.Second))
			}
			add(w, keepAlways)
		}
	}
	if s.occupancy > 0 {
		add(Occupancy(s.occupancy, s.window), rankOccupancy)
	}
	if s.cost > 0 {
		add(Cost(s.cost), rankCost)
	}
	if c := s.countdown(now); c != "" {
		add(c, keepAlways)
	}
	return parts
}

// doingNow is what the stream shows claude doing, for the status line
// ("writing the input of a Write call for 2m10s"): the model's writing
// phases always, a wait for the API's reply once it has lasted
// waitShownAfter; "" otherwise (the parts of a reply come and go
// in milliseconds).
func (s *Status) doingNow(now time.Time) string {
	d, ok := strings.CutPrefix(s.doing, "while ")
	switch {
	case !ok:
		return ""
	case s.streamPhase == attempt.PhaseWaiting.String():
		if now.Sub(s.phaseSince) < waitShownAfter {
			return ""
		}
	case s.streamPhase == attempt.PhaseReplying.String() || s.streamPhase == attempt.PhaseStarting.String():
		return ""
	}
	return Clean(d, 60) + s.inPhase(now, time.Second)
}

// inPhase is " for 2m10s", the time in the current phase, once it is at
// least from: labelled, so that it is not read as the run's elapsed time
// (issue 49).
func (s *Status) inPhase(now time.Time, from time.Duration) string {
	in := now.Sub(s.phaseSince).Truncate(time.Second)
	if s.phaseSince.IsZero() || in < from || in < time.Second {
		return ""
	}
	return " for " + Duration(in)
}

// waitShownAfter is how long a wait for the API's reply lasts before the
// status line says so.
const waitShownAfter = 5 * time.Second

// countdown is "hang in 25s" once the limit of the stream's phase is close.
func (s *Status) countdown(now time.Time) string {
	if s.phase != phaseRunning || s.deadline.IsZero() || s.lastLine.IsZero() || len(s.tasks) > 0 {
		return ""
	}
	limit := s.deadline.Sub(s.lastLine)
	if s.allowed > 0 {
		limit = s.allowed // lines that are no progress (pings) come without moving the deadline
	}
	left := s.deadline.Sub(now)
	if left > countdownWithin && left > limit/countdownFraction {
		return ""
	}
	if left < 0 {
		left = 0
	}
	return "hang in " + Duration(left.Round(time.Second))
}

// Plural counts n of word: "1 tool call", "2 tool calls", "2 crashes".
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if strings.HasSuffix(word, "sh") || strings.HasSuffix(word, "ch") {
		return fmt.Sprintf("%d %ses", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
