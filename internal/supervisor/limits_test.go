package supervisor_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/limitstore"
	"github.com/malarun/malarun/internal/record"

	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/supervisor"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// limited sets up a harness whose CLI is refused by a five-hour limit that
// resets at resetsAt; the CLI's OAuth token names the account. Its waits
// are fake time (synctest); w sees each one end.
func limited(t *testing.T, resetsAt time.Time, env ...string) (*harness, *waits) {
	env = append(env, testchild.EnvResetsAt+"="+fmt.Sprint(resetsAt.Unix()), "CLAUDE_CODE_OAUTH_TOKEN=token-1", "ANTHROPIC_API_KEY=")
	h := newHarness(t, testchild.UsageLimited, env...)
	h.rand = func() float64 { return 0 }
	h.waits = &waits{}
	return h, h.waits
}

// waits sees the limit waits of a run: each ends when the next attempt
// starts (in fake time, at the moment the wait was for).
type waits struct {
	mu      sync.Mutex
	waiting bool
	ends    []time.Time
}

func (w *waits) observe(e event.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case e.Kind == event.LimitWait:
		w.waiting = true
	case e.Kind == event.AttemptStarted && w.waiting:
		w.waiting = false
		w.ends = append(w.ends, e.Time)
	}
}

// endedAfter fails the test unless there were n waits, each ending at or
// after resetsAt and, with no jitter, within a second of it.
func (w *waits) endedAfter(t *testing.T, n int, resetsAt time.Time) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.ends) != n {
		t.Fatalf("%d waits, want %d", len(w.ends), n)
	}
	for _, end := range w.ends {
		if end.Before(resetsAt) || end.After(resetsAt.Add(time.Second)) {
			t.Errorf("a wait ended at %v, want at the reset %v", end, resetsAt)
		}
	}
}

// events collects a run's events, safe to read while it runs.
type events struct {
	mu  sync.Mutex
	all []event.Event
}

func (e *events) add(ev event.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

func (e *events) of(kind event.Kind) []event.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []event.Event
	for _, ev := range e.all {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

func runError(t *testing.T, err error) *supervisor.RunError {
	t.Helper()
	re, ok := err.(*supervisor.RunError)
	if !ok {
		t.Fatalf("err %v (%T), want a *RunError", err, err)
	}
	return re
}

// A limit that resets within limit_wait is waited out, and the same session
// is resumed (though the refused request was its first) with a note in the
// prompt. The wait is not a retry: max_attempts 1 still lets the run on.
func TestUsageLimitIsWaitedOutAndTheSessionResumed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		resetsAt := time.Now().Add(30 * time.Second).Truncate(time.Second)
		h, w := limited(t, resetsAt)
		h.cfg.LimitWait = time.Minute
		h.cfg.MaxAttempts = 1
		var evs events
		var recDuringWait record.Record
		h.observer = func(ev event.Event) {
			evs.add(ev)
			if ev.Kind == event.Kind("limit_wait") {
				recDuringWait, _, _ = journalOf(t, h)
			}
		}
		rep, err, _ := h.run()
		if err != nil {
			t.Fatalf("run: %v\n%s", err, h.logs.String())
		}
		w.endedAfter(t, 1, resetsAt)
		at := h.attempts()
		if len(at) != 2 || rep.Attempts != 2 {
			t.Fatalf("%d attempts, report says %d; want 2", len(at), rep.Attempts)
		}
		f1, id1 := sessionFlag(t, at[0])
		f2, id2 := sessionFlag(t, at[1])
		if f1 != "--session-id" || f2 != "--resume" || id1 != id2 {
			t.Errorf("attempt 1 %s %s, attempt 2 %s %s: want the same session resumed", f1, id1, f2, id2)
		}
		if p := stdinOf(at[1]); !strings.Contains(p, "usage limit (five_hour)") || !strings.Contains(p, "Continue on issue issue-1.") {
			t.Errorf("resume prompt lacks the limit note:\n%s", p)
		}
		waits := evs.of("limit_wait")
		if len(waits) != 1 || !waits[0].RetryAt.Equal(resetsAt) || waits[0].Until.Before(resetsAt) || waits[0].LimitType != "five_hour" {
			t.Fatalf("limit_wait events %+v, want one until the reset %v", waits, resetsAt)
		}
		if d := evs.of(event.RetryDecided); len(d) != 1 || d[0].Attempt != 2 {
			t.Errorf("a limit wait is not a retry decision: %+v", evs.of(event.RetryDecided))
		}
		if recDuringWait.Status != record.Waiting || !recDuringWait.RetryAt.Equal(resetsAt) {
			t.Errorf("record during the wait: %s retry_at %v, want waiting until %v", recDuringWait.Status, recDuringWait.RetryAt, resetsAt)
		}
		rec, _, _ := journalOf(t, h)
		if rec.Status != record.Succeeded || !rec.RetryAt.IsZero() || rec.LimitType != "" {
			t.Errorf("record after: %s retry_at %v type %q, want succeeded with no limit", rec.Status, rec.RetryAt, rec.LimitType)
		}
	})
}

// A reset beyond limit_wait ends the run at once with exit 75's error, the
// reset as retry_at, a waiting record and a note for the other malaruns;
// the next invocation, before the reset, exits 75 again without starting
// the CLI, and another issue of the same account does too.
func TestUsageLimitBeyondLimitWaitStopsAndStaysResumable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		resetsAt := time.Now().Add(time.Hour).Truncate(time.Second)
		h, w := limited(t, resetsAt)
		h.cfg.LimitWait = time.Minute
		rep, err, took := h.run()
		wantKind(t, err, outcome.RateLimit, "usage limit (five_hour) until "+resetsAt.UTC().Format("15:04")+" UTC")
		if took != 0 {
			t.Errorf("took %v: a limit beyond limit_wait must stop at once", took)
		}
		if !rep.RetryAt.Equal(resetsAt) || rep.LimitType != "five_hour" {
			t.Errorf("report retry_at %v type %q", rep.RetryAt, rep.LimitType)
		}
		rec, _, _ := journalOf(t, h)
		if rec.Status != record.Waiting || !rec.RetryAt.Equal(resetsAt) || rec.LimitType != "five_hour" || rec.SessionID == "" {
			t.Fatalf("record %s retry_at %v type %q session %q: want waiting until the reset, with the session", rec.Status, rec.RetryAt, rec.LimitType, rec.SessionID)
		}
		entries, _ := os.ReadDir(filepath.Join(h.cfg.StateDir, limitstore.DirName))
		if len(entries) != 1 {
			t.Errorf("%d files in %s, want the one note", len(entries), limitstore.DirName)
		}

		_, err, took = h.run()
		wantKind(t, err, outcome.RateLimit, "usage limit (five_hour)")
		if n := len(h.attempts()); n != 1 || took != 0 {
			t.Errorf("%d attempts in all after the second invocation (took %v); want it to exit without starting claude", n, took)
		}
		if rec2, _, _ := journalOf(t, h); rec2.Status != record.Waiting || rec2.SessionID != rec.SessionID || rec2.Reclaims != 0 {
			t.Errorf("record %s session %q reclaims %d, want still waiting on %q with no reclaim", rec2.Status, rec2.SessionID, rec2.Reclaims, rec.SessionID)
		}

		h.cfg.IssueID = "issue-2"
		rep, err, _ = h.run()
		wantKind(t, err, outcome.RateLimit, "usage limit (five_hour)")
		if n := len(h.attempts()); n != 1 || !rep.RetryAt.Equal(resetsAt) {
			t.Errorf("another issue of the account: %d attempts, retry_at %v; want no claude started and the shared reset", n, rep.RetryAt)
		}
		w.endedAfter(t, 0, resetsAt)
	})
}

// Exit 75, then an invocation with a limit_wait that covers the rest of the
// wait: it waits, then continues the recorded session.
func TestWaitingRecordIsContinuedAfterItsReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		resetsAt := time.Now().Add(30 * time.Second).Truncate(time.Second)
		h, w := limited(t, resetsAt)
		_, err, _ := h.run() // limit_wait 0: exit 75 at once
		wantKind(t, err, outcome.RateLimit, "beyond what is left of limit_wait (0s)")
		first, _, _ := journalOf(t, h)
		h.cfg.LimitWait = time.Minute
		rep, err, _ := h.run()
		if err != nil {
			t.Fatalf("second invocation: %v\n%s", err, h.logs.String())
		}
		w.endedAfter(t, 1, resetsAt)
		at := h.attempts()
		if len(at) != 2 || rep.Attempts != 2 {
			t.Fatalf("%d attempts, report %d; want 2", len(at), rep.Attempts)
		}
		if f, id := sessionFlag(t, at[1]); f != "--resume" || id != first.SessionID {
			t.Errorf("second invocation ran %s %s, want --resume %s", f, id, first.SessionID)
		}
		if !strings.Contains(stdinOf(at[1]), "usage limit (five_hour)") {
			t.Errorf("resume prompt lacks the limit note:\n%s", stdinOf(at[1]))
		}
	})
}

// SIGTERM during a limit wait ends it at once (exit 143's error); the
// record stays waiting with its retry_at. A later malarun continues it with
// no reclaim counted, even if the one before died while it waited.
func TestSignalDuringUsageLimitWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		resetsAt := time.Now().Add(time.Hour).Truncate(time.Second)
		h, w := limited(t, resetsAt)
		h.cfg.LimitWait = 2 * time.Hour
		h.observer = func(ev event.Event) {
			if ev.Kind == "limit_wait" {
				h.signals <- syscall.SIGTERM
			}
		}
		_, err, took := h.run()
		wantKind(t, err, outcome.Interrupted, "while waiting for a usage limit to reset")
		if re := runError(t, err); re.Signal != syscall.SIGTERM || took != 0 {
			t.Errorf("signal %v, took %v", re.Signal, took)
		}
		rec, _, _ := journalOf(t, h)
		if rec.Status != record.Waiting || !rec.RetryAt.Equal(resetsAt) || rec.Reclaims != 0 {
			t.Fatalf("record %s retry_at %v reclaims %d, want waiting until %v", rec.Status, rec.RetryAt, rec.Reclaims, resetsAt)
		}

		// As if that malarun had died in its wait, whose reset is now near.
		soon := time.Now().Add(30 * time.Second).Truncate(time.Second)
		rec.RetryAt, rec.Owner.Pid = soon, 1<<22
		j, err := journal.Acquire(h.cfg.StateDir, h.cfg.IssueID, "test")
		if err != nil {
			t.Fatal(err)
		}
		if err := j.Save(rec); err != nil {
			t.Fatal(err)
		}
		j.Release()
		os.Remove(filepath.Join(h.cfg.StateDir, limitstore.DirName)) // fails while the note is there
		os.RemoveAll(filepath.Join(h.cfg.StateDir, limitstore.DirName))
		h.observer = nil
		h.cfg.LimitWait = time.Minute
		_, err, _ = h.run()
		if err != nil {
			t.Fatalf("continuing: %v\n%s", err, h.logs.String())
		}
		w.endedAfter(t, 1, soon)
		at := h.attempts()
		if f, id := sessionFlag(t, at[len(at)-1]); len(at) != 2 || f != "--resume" || id != rec.SessionID {
			t.Errorf("%d attempts, last %s %s; want the recorded session resumed", len(at), f, id)
		}
		if rec, _, _ := journalOf(t, h); rec.Status != record.Succeeded || rec.Reclaims != 0 {
			t.Errorf("record %s reclaims %d, want succeeded with none", rec.Status, rec.Reclaims)
		}
	})
}

// A limit still in force after the reset malarun waited for is not waited
// for again (that would loop without spending the budget): exit 75.
func TestUsageLimitAgainAfterItsResetStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		resetsAt := time.Now().Add(30 * time.Second).Truncate(time.Second)
		h, w := limited(t, resetsAt, testchild.EnvLimitAlways+"=1")
		h.cfg.LimitWait = time.Minute
		_, err, _ := h.run()
		wantKind(t, err, outcome.RateLimit, "still in force after its reset")
		if n := len(h.attempts()); n != 2 {
			t.Errorf("%d attempts, want the limited one and the one after the wait", n)
		}
		w.endedAfter(t, 1, resetsAt)
	})
}

// Waiting cannot fix a limit that needs credits: exit 75 at once, with no
// retry_at, saying so.
func TestCreditsRequiredIsNotWaitedFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ev := `{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","errorCode":"credits_required","rateLimitType":"overage"},"session_id":"` + testchild.SessionID + `"}`
		res := `{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"API Error: Request rejected (429)","session_id":"` + testchild.SessionID + `"}`
		h := newHarness(t, testchild.Replay, testchild.EnvTranscript+"="+transcriptFile(t, testchild.InitLine, ev, res), testchild.EnvExit+"=1")
		h.cfg.LimitWait = time.Hour
		rep, err, _ := h.run()
		wantKind(t, err, outcome.RateLimit, "waiting for a limit to reset fixes nothing")
		if !rep.RetryAt.IsZero() {
			t.Errorf("retry_at %v, want none", rep.RetryAt)
		}
		if entries, _ := os.ReadDir(filepath.Join(h.cfg.StateDir, limitstore.DirName)); len(entries) != 0 {
			t.Errorf("a limit waiting cannot fix was shared")
		}
	})
}

// The CLI's own wait for a 429 (api_retry) longer than limit_wait (and
// idle_timeout) stops it: exit 75 with the end of that wait as retry_at.
func TestCLIRetryLongerThanLimitWaitStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		retryLine := `{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":600000,"error_status":429,"error":"rate_limit","session_id":"` + testchild.SessionID + `"}`
		h := newHarness(t, testchild.Hang, testchild.EnvLines+"=2", testchild.EnvTranscript+"="+transcriptFile(t, testchild.InitLine, retryLine))
		h.cfg.LimitWait = time.Minute
		before := time.Now()
		rep, err, took := h.run()
		wantKind(t, err, outcome.RateLimit, "claude would wait 10m0s before retrying")
		if took > 10*time.Second {
			t.Errorf("took %v", took)
		}
		if lo, hi := before.Add(10*time.Minute), time.Now().Add(10*time.Minute); rep.RetryAt.Before(lo) || rep.RetryAt.After(hi) {
			t.Errorf("retry_at %v, want about 10 minutes from the api_retry line (%v to %v)", rep.RetryAt, lo, hi)
		}
		if got := rep.History[0].Ended; got != "usage-limit" {
			t.Errorf("attempt ended %q, want usage-limit", got)
		}
	})
}
