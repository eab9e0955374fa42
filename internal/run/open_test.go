package run

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/record"
)

// recordOf is a recorded run of issue-1 in status s, prompt sha "aaa".
func recordOf(s record.Status, more ...func(*record.Record)) record.Record {
	r := record.Record{Issue: "issue-1", Status: s, RunID: "20261127T000000Z-aaaaaa", RunDir: "/state/issue-1/runs/20261127T000000Z-aaaaaa",
		Runs: []string{"20261127T000000Z-aaaaaa"}, SessionID: "s1", SessionTalked: true, Attempts: 2, Reclaims: 1, RunReclaims: 1,
		PromptSHA256: "aaa", TotalCostUSD: 3, CostUSD: 1, Owner: record.Owner{Pid: 42, Host: "h"}}
	for _, f := range more {
		f(&r)
	}
	return r
}

// Every way an invocation opens, in the style of paths_test.go: what the
// record says and what this invocation asks, and what Open decides.
func TestOpen(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	same := func(in *Invocation) { in.PromptSHA256 = "aaa" }
	cases := []struct {
		name  string
		in    Invocation
		kind  OpenKind
		check func(t *testing.T, o Opened)
	}{
		{"no record: a new run", Invocation{}, OpenNew, func(t *testing.T, o Opened) {
			if o.EndLeftovers || o.Save || o.Change != nil {
				t.Errorf("%+v", o)
			}
		}},
		{"a damaged record is refused", Invocation{Damaged: errors.New("record version 99")}, OpenRefused, func(t *testing.T, o Opened) {
			if o.Refusal != outcome.Usage || !strings.Contains(o.Detail, "version 99") {
				t.Errorf("%+v", o)
			}
		}},
		{"a damaged record with --reset starts over", Invocation{Damaged: errors.New("x"), Reset: true}, OpenNew, nil},
		{"an owner alive behind a removed lock: busy, even with --reset",
			Invocation{Found: true, Record: recordOf(record.Processing), OwnerAlive: true, Reset: true}, OpenRefused, func(t *testing.T, o Opened) {
				if o.Refusal != outcome.Busy || o.EndLeftovers || !strings.Contains(o.Detail, "pid 42 on h") {
					t.Errorf("%+v", o)
				}
			}},
		{"a dead malarun's run is reclaimed: one more death, its cut attempt counted",
			Invocation{Found: true, Record: recordOf(record.Processing), MaxReclaims: 3, StartedAttempts: 3, NextAttempt: 4}, OpenReclaim, func(t *testing.T, o Opened) {
				r := o.Record
				if !o.EndLeftovers || !o.Save || r.Reclaims != 2 || r.RunReclaims != 2 || r.Attempts != 3 || r.KilledAttempts != 1 {
					t.Errorf("%+v / record reclaims %d/%d attempts %d killed %d", o, r.Reclaims, r.RunReclaims, r.Attempts, r.KilledAttempts)
				}
				if !o.Begin.Continued || o.Begin.FirstAttempt != 4 || o.Begin.Record.NotCounted != 1 || o.Begin.Record.SessionID != "s1" || o.Begin.Record.Reclaims != 2 {
					t.Errorf("begin %+v", o.Begin)
				}
			}},
		{"one death too many: poisoned, saved with the poison's exit code",
			Invocation{Found: true, Record: recordOf(record.Processing, func(r *record.Record) { r.Reclaims = 3 }), MaxReclaims: 3, PoisonedExitCode: 6},
			OpenRefused, func(t *testing.T, o Opened) {
				r := o.Record
				if o.Refusal != outcome.Poisoned || !o.Save || !o.EndLeftovers || !r.Poisoned || r.Status != record.Failed || r.ExitCode != 6 ||
					!strings.Contains(o.Detail, "4 times in a row (max_reclaims 3); run with --reset") {
					t.Errorf("%+v", o)
				}
			}},
		{"a poisoned issue is refused until --reset", Invocation{Found: true, Record: recordOf(record.Failed, func(r *record.Record) { r.Poisoned = true })},
			OpenRefused, func(t *testing.T, o Opened) {
				if o.Refusal != outcome.Poisoned || o.Save {
					t.Errorf("%+v", o)
				}
			}},
		{"a poisoned issue with --reset starts over", Invocation{Found: true, Reset: true, Record: recordOf(record.Failed, func(r *record.Record) { r.Poisoned = true })},
			OpenNew, func(t *testing.T, o Opened) {
				if !o.Reset || o.Record.Runs[0] != "20261127T000000Z-aaaaaa" || o.Record.TotalCostUSD != 3 {
					t.Errorf("the new run must keep the issue's history: %+v", o.Record)
				}
			}},
		{"--reset of an orphaned run ends its leftovers and starts over", Invocation{Found: true, Reset: true, Record: recordOf(record.Processing)},
			OpenNew, func(t *testing.T, o Opened) {
				if !o.EndLeftovers || o.Save {
					t.Errorf("%+v", o)
				}
			}},
		{"an interrupted run is continued, no reclaim", Invocation{Found: true, Record: recordOf(record.Interrupted), NextAttempt: 3}, OpenContinue,
			func(t *testing.T, o Opened) {
				if o.Save || o.EndLeftovers || o.Record.Reclaims != 1 || o.Begin.Record.NotCounted != 0 {
					t.Errorf("%+v", o)
				}
			}},
		{"a stopped run is continued with fresh limits", Invocation{Found: true, Record: recordOf(record.Stopped), NextAttempt: 3}, OpenContinue,
			func(t *testing.T, o Opened) {
				if o.Begin.Record.NotCounted != 2 {
					t.Errorf("begin %+v", o.Begin)
				}
			}},
		{"a waiting run is continued, its limit pending", Invocation{Found: true, NextAttempt: 3,
			Record: recordOf(record.Waiting, func(r *record.Record) { r.RetryAt, r.LimitType = t0.Add(time.Hour), "five_hour" })}, OpenContinue,
			func(t *testing.T, o Opened) {
				r := o.Begin.Record
				if !r.Limited || !r.Limit.RetryAt.Equal(t0.Add(time.Hour)) || r.Limit.LimitType != "five_hour" || !o.Begin.Continued || r.NotCounted != 2 {
					t.Errorf("begin %+v", o.Begin)
				}
			}},
		{"a run stopped by another malarun's limit before its first attempt begins as new", Invocation{Found: true,
			Record: recordOf(record.Waiting, func(r *record.Record) { r.SessionID, r.Attempts, r.RetryAt = "", 0, t0.Add(time.Hour) })}, OpenContinue,
			func(t *testing.T, o Opened) {
				// The record's limit stands until Begin decides (it waits
				// for it); no prompt says the run stopped on it.
				if o.Begin.Continued || o.Begin.Record.Limited || !o.Begin.Record.Limit.RetryAt.Equal(t0.Add(time.Hour)) {
					t.Errorf("begin %+v", o.Begin)
				}
			}},
		{"a finished run: a new one on the issue's history", Invocation{Found: true, Record: recordOf(record.Succeeded)}, OpenNew, nil},
		{"the same prompt: no change", Invocation{Found: true, Record: recordOf(record.Interrupted)}, OpenContinue, func(t *testing.T, o Opened) {
			if o.Change != nil {
				t.Errorf("change %+v", o.Change)
			}
		}},
		{"another prompt is refused, naming both and what to do", Invocation{Found: true, Record: recordOf(record.Processing), PromptSHA256: "bbb", PromptSource: "task.md"},
			OpenRefused, func(t *testing.T, o Opened) {
				if o.Refusal != outcome.Usage || o.Headline != "refused: the prompt changed" || o.EndLeftovers ||
					!strings.Contains(o.Detail, "this prompt (task.md, sha256 bbb)") || !strings.Contains(o.Detail, "--prompt-change=start_over") {
					t.Errorf("%+v", o)
				}
			}},
		{"another prompt with resume continues the recorded task, keeping the change", Invocation{Found: true, Record: recordOf(record.Interrupted),
			PromptSHA256: "bbb", PromptChange: PromptChangeResume, Now: t0}, OpenContinue, func(t *testing.T, o Opened) {
			c := o.Change
			if c == nil || c.Decision != record.PromptResume || c.GivenSHA256 != "bbb" || len(o.Record.PromptChanges) != 1 || !c.At.Equal(t0) {
				t.Errorf("%+v, changes %+v", c, o.Record.PromptChanges)
			}
		}},
		{"another prompt with start_over closes the recorded run and starts a new one", Invocation{Found: true, Record: recordOf(record.Processing),
			PromptSHA256: "bbb", PromptChange: PromptChangeStartOver}, OpenNew, func(t *testing.T, o Opened) {
			if o.Change == nil || o.Change.Decision != record.PromptStartOver || !o.EndLeftovers || len(o.Record.PromptChanges) != 1 {
				t.Errorf("%+v", o)
			}
		}},
		{"a record older than version 4 is compared by its folder's prompt", Invocation{Found: true, PromptSHA256: "bbb", FolderPromptSHA256: "aaa",
			Record: recordOf(record.Interrupted, func(r *record.Record) { r.PromptSHA256 = "" })}, OpenRefused, nil},
		{"a recorded prompt that cannot be known is continued", Invocation{Found: true, PromptSHA256: "bbb",
			Record: recordOf(record.Interrupted, func(r *record.Record) { r.PromptSHA256 = "" })}, OpenContinue, nil},
		{"--reset ignores a changed prompt", Invocation{Found: true, Reset: true, PromptSHA256: "bbb", Record: recordOf(record.Interrupted)}, OpenNew, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.in
			in.Found = in.Found && in.Damaged == nil
			if in.PromptSHA256 == "" {
				same(&in)
			}
			o := Open(in)
			if o.Kind != c.kind {
				t.Fatalf("kind %v, want %v (%+v)", o.Kind, c.kind, o)
			}
			if c.check != nil {
				c.check(t, o)
			}
		})
	}
}

// Keeping a prompt change keeps the latest record.MaxPromptChanges and
// never writes into the recorded slice.
func TestKeepPromptChange(t *testing.T) {
	old := record.Record{}
	for i := range record.MaxPromptChanges {
		old.PromptChanges = append(old.PromptChanges, record.PromptChange{RunID: string(rune('a' + i))})
	}
	before := append([]record.PromptChange(nil), old.PromptChanges...)
	got := keepPromptChange(old, &record.PromptChange{RunID: "new"})
	if n := len(got.PromptChanges); n != record.MaxPromptChanges || got.PromptChanges[n-1].RunID != "new" || got.PromptChanges[0].RunID != "b" {
		t.Errorf("changes %+v", got.PromptChanges)
	}
	for i := range before {
		if old.PromptChanges[i] != before[i] {
			t.Errorf("the recorded slice changed at %d", i)
		}
	}
}

// A run resumed from its record knows whether it ever had an answer from
// the API: then a connection failure is transient (docs/design.md §D17).
func TestTalkedInRecord(t *testing.T) {
	cases := []struct {
		name string
		rec  record.Record
		want bool
	}{
		{"a new run", record.Record{}, false},
		{"a session that never got a reply", record.Record{SessionID: "s", Attempts: 2}, false},
		{"a session that talked", record.Record{SessionTalked: true}, true},
		{"an answer streamed, no whole message (api_answered)", record.Record{APIAnswered: true}, true},
		{"a context restart", record.Record{Continuations: 1}, true},
		{"a checkpoint", record.Record{Checkpoint: "done: x"}, true},
		{"a cost", record.Record{CostUSD: 0.01}, true},
		{"only earlier runs cost something", record.Record{TotalCostUSD: 3}, false},
	}
	for _, c := range cases {
		if got := talkedInRecord(c.rec); got != c.want {
			t.Errorf("%s: TalkedInRecord = %v, want %v", c.name, got, c.want)
		}
	}
}
