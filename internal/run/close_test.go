package run

import (
	"reflect"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/usagelimit"
)

// How a run stands at its end, in the style of paths_test.go: from the
// state the run left and how the driver saw it end, what Close makes of
// it (what the record, the report and the finished event read). Resumable
// ends keep their session, a usage limit its retry_at, an interruption
// its reclaim count; a success forgets what was cut off.
func TestClose(t *testing.T) {
	at := time.Date(2026, 11, 27, 13, 0, 0, 0, time.UTC)
	limit := record.UsageLimit{RetryAt: at, LimitType: "five_hour"}
	cut := record.InFlight{Running: []stream.ToolUse{{Name: "Bash", Input: "make"}}, RunningMore: 3, Tasks: []stream.Task{{ID: "b1"}}}
	running := Standing{Status: record.Processing, Reclaims: 2, Cut: cut}
	// stoppedOn: the attempt's limit decided an end (onLimit): the limit
	// is in force, the status still processing until Close.
	stoppedOn := running
	stoppedOn.Limit = limit
	waiting := State{Standing: Standing{Status: record.Waiting, Limit: limit, Reclaims: 2, Cut: cut}, Sleeping: SleepLimit}
	cases := []struct {
		name string
		s    State
		e    Ending
		want Standing
	}{
		{"success: no call is cut off, no death stands", State{Standing: running}, Ending{Outcome: outcome.Success},
			Standing{Status: record.Succeeded, Outcome: outcome.Success}},
		{"retries exhausted: stopped, resumable, what was cut off kept", State{Standing: running},
			Ending{Outcome: outcome.RetriesExhausted, Reason: "r", ExitCode: 3},
			Standing{Status: record.Stopped, Cut: cut, Outcome: outcome.RetriesExhausted, Reason: "r", ExitCode: 3}},
		{"a usage limit: waiting until its reset", State{Standing: stoppedOn}, Ending{Outcome: outcome.RateLimit, Reason: "r", ExitCode: 75},
			Standing{Status: record.Waiting, Limit: limit, Cut: cut, Outcome: outcome.RateLimit, Reason: "r", ExitCode: 75}},
		{"a usage limit with an unknown reset: waiting, no retry_at", State{Standing: Standing{Status: record.Processing, Limit: record.UsageLimit{LimitType: "overage"}}},
			Ending{Outcome: outcome.RateLimit, Reason: "r", ExitCode: 75},
			Standing{Status: record.Waiting, Limit: record.UsageLimit{LimitType: "overage"}, Outcome: outcome.RateLimit, Reason: "r", ExitCode: 75}},
		{"interrupted in a limit wait: still waiting for the same reset, the deaths stand", waiting,
			Ending{Outcome: outcome.Interrupted, Reason: "r", ExitCode: 130},
			Standing{Status: record.Waiting, Limit: limit, Reclaims: 2, Cut: cut, Outcome: outcome.Interrupted, Reason: "r", ExitCode: 130}},
		{"interrupted: resumable, the deaths stand", State{Standing: running}, Ending{Outcome: outcome.Interrupted, Reason: "r", ExitCode: 143},
			Standing{Status: record.Interrupted, Reclaims: 2, Cut: cut, Outcome: outcome.Interrupted, Reason: "r", ExitCode: 143}},
		{"session_timeout in a limit wait: stopped, the limit no longer waited for", waiting,
			Ending{Outcome: outcome.SessionTimeout, Reason: "r", ExitCode: 124},
			Standing{Status: record.Stopped, Cut: cut, Outcome: outcome.SessionTimeout, Reason: "r", ExitCode: 124}},
		{"an error result: failed", State{Standing: running}, Ending{Outcome: outcome.ErrorResult, Reason: "r", ExitCode: 1},
			Standing{Status: record.Failed, Cut: cut, Outcome: outcome.ErrorResult, Reason: "r", ExitCode: 1}},
		{"malarun's own trouble before the first step: the run as taken, failed", Taken(Beginning{Record: Recorded{Reclaims: 1, InFlight: cut, Limit: limit}}),
			Ending{Outcome: outcome.Error, Reason: "read the run's prompt: gone", ExitCode: 1},
			Standing{Status: record.Failed, Cut: cut, Outcome: outcome.Error, Reason: "read the run's prompt: gone", ExitCode: 1}},
		{"closed again (its record could not be saved): the last ending stands",
			Close(State{Standing: stoppedOn}, Ending{Outcome: outcome.RateLimit, Reason: "r", ExitCode: 75}),
			Ending{Outcome: outcome.Error, Reason: "the run ended: r, but record the run: disk full", ExitCode: 1},
			Standing{Status: record.Failed, Cut: cut, Outcome: outcome.Error, Reason: "the run ended: r, but record the run: disk full", ExitCode: 1}},
	}
	for _, c := range cases {
		got := Close(c.s, c.e)
		if !reflect.DeepEqual(got.Standing, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got.Standing, c.want)
		}
		if c.s.Attempts != got.Attempts || c.s.Sleeping != got.Sleeping {
			t.Errorf("%s: Close changed the decisions' state: %+v", c.name, got)
		}
	}
}

// What the report and the finished event name as the limit that ended
// the run: only a usage limit's end (exit 75) names one; an interrupted
// wait leaves it to the record's retry_at.
func TestStoppedBy(t *testing.T) {
	limit := record.UsageLimit{RetryAt: time.Date(2026, 11, 27, 13, 0, 0, 0, time.UTC), LimitType: "seven_day"}
	cases := []struct {
		name string
		s    Standing
		want record.UsageLimit
	}{
		{"a run that stopped on a limit", Standing{Status: record.Waiting, Limit: limit, Outcome: outcome.RateLimit}, limit},
		{"a wait that was interrupted", Standing{Status: record.Waiting, Limit: limit, Outcome: outcome.Interrupted}, record.UsageLimit{}},
		{"a run that waits now", Standing{Status: record.Waiting, Limit: limit}, record.UsageLimit{}},
		{"a success", Standing{Status: record.Succeeded, Outcome: outcome.Success}, record.UsageLimit{}},
	}
	for _, c := range cases {
		if got := c.s.StoppedBy(); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// How the run stands from when this malarun takes it to its first step:
// as the record left it, processing; then Begin decides the limit in force.
func TestTakenThenBegin(t *testing.T) {
	reset := t0.Add(time.Hour)
	recorded := record.UsageLimit{RetryAt: reset, LimitType: "five_hour"}
	cut := record.InFlight{Running: []stream.ToolUse{{Name: "Bash", Input: "make"}}}
	cases := []struct {
		name         string
		b            Beginning
		taken, begun string // stood's spelling
	}{
		{"a new run", Beginning{FirstAttempt: 1}, "processing", "processing"},
		{"a waiting run whose reset is past: no limit once begun", Beginning{Continued: true, FirstAttempt: 2,
			Record: Recorded{Attempts: 1, SessionID: "s", Limited: true, Limit: record.UsageLimit{RetryAt: t0.Add(-time.Hour), LimitType: "five_hour"}, InFlight: cut}},
			"processing limit five_hour 11:00:00 cut 1+0 calls 0+0 tasks", "processing cut 1+0 calls 0+0 tasks"},
		{"a waiting run whose reset is ahead: waiting for it again", Beginning{Continued: true, FirstAttempt: 2,
			Record: Recorded{Attempts: 1, SessionID: "s", Limited: true, Limit: recorded}},
			"processing limit five_hour 13:00:00", "waiting limit five_hour 13:00:00"},
		{"a new run of an account another malarun found limited: waiting for that", Beginning{FirstAttempt: 1,
			Shared: usagelimit.Limit{RetryAt: reset.Add(time.Hour), Type: "seven_day", Waitable: true}},
			"processing", "waiting limit seven_day 14:00:00"},
		{"a reclaimed run: its deaths in a row", Beginning{Continued: true, FirstAttempt: 3,
			Record: Recorded{Attempts: 2, SessionID: "s", Reclaims: 2, InFlight: cut}},
			"processing cut 1+0 calls 0+0 tasks reclaims 2", "processing cut 1+0 calls 0+0 tasks reclaims 2"},
	}
	p := Policy{MaxAttempts: 5, LimitWait: 2 * time.Hour}
	for _, c := range cases {
		if got := stood(Taken(c.b).Standing); got != c.taken {
			t.Errorf("%s: taken %q, want %q", c.name, got, c.taken)
		}
		s, _ := Begin(p, c.b, t0, Draws{NewSession: "n", Jitter: 0})
		if got := stood(s.Standing); got != c.begun {
			t.Errorf("%s: begun %q, want %q", c.name, got, c.begun)
		}
	}
	// Taken decides nothing: no attempt numbered, nothing counted.
	if s := Taken(Beginning{FirstAttempt: 4, Record: Recorded{Attempts: 3}}); s.Next != 0 || s.Attempts != 0 || s.Room != (attempt.Room{}) {
		t.Errorf("Taken %+v", s)
	}
}

// The usage limit known before the first attempt: the record's own
// retry_at while it is ahead, or another malarun's note for the account,
// whichever resets later.
func TestPendingLimit(t *testing.T) {
	own := record.UsageLimit{RetryAt: t0.Add(time.Hour), LimitType: "five_hour"}
	ownLimit := usagelimit.Limit{RetryAt: own.RetryAt, Type: "five_hour", Waitable: true}
	later := usagelimit.Limit{RetryAt: t0.Add(2 * time.Hour), Type: "seven_day", Waitable: true}
	sooner := usagelimit.Limit{RetryAt: t0.Add(time.Minute), Type: "seven_day", Waitable: true}
	cases := []struct {
		name string
		b    Beginning
		want usagelimit.Limit
	}{
		{"none", Beginning{}, usagelimit.Limit{}},
		{"the record's own, ahead", Beginning{Record: Recorded{Limit: own}}, ownLimit},
		{"the record's own, past", Beginning{Record: Recorded{Limit: record.UsageLimit{RetryAt: t0.Add(-time.Minute), LimitType: "five_hour"}}}, usagelimit.Limit{}},
		{"the record's own, now: past", Beginning{Record: Recorded{Limit: record.UsageLimit{RetryAt: t0}}}, usagelimit.Limit{}},
		{"another malarun's only", Beginning{Shared: sooner}, sooner},
		{"another malarun's, later than the record's", Beginning{Record: Recorded{Limit: own}, Shared: later}, later},
		{"the record's, later than another malarun's", Beginning{Record: Recorded{Limit: own}, Shared: sooner}, ownLimit},
		{"both at once: the record's", Beginning{Record: Recorded{Limit: own}, Shared: usagelimit.Limit{RetryAt: own.RetryAt, Type: "seven_day", Waitable: true}}, ownLimit},
	}
	for _, c := range cases {
		if got := c.b.pending(t0); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
