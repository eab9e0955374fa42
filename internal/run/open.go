package run

import (
	"fmt"
	"time"

	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/record"
)

// How an invocation opens (docs/design.md §D7, §D18): from what the
// issue's record says and what this invocation asks, a new run, the
// recorded run continued or reclaimed, or a refusal. Open decides; the
// driver reads the record and the run folder before, and carries the
// decision out after (ends leftovers, makes the run folder, saves).

// Invocation is what Open decides from.
type Invocation struct {
	// Found: the issue has a record; Damaged: it could not be read (then
	// Record is empty).
	Found   bool
	Damaged error
	Record  record.Record
	// OwnerAlive: the record's owner is provably alive (same boot and PID
	// namespace, its recorded start time), though its lock was free.
	OwnerAlive bool
	// PromptSource names where this invocation's prompt came from.
	PromptSource string
	// PromptSHA256 is this invocation's prompt's; FolderPromptSHA256 is
	// the run folder's prompt.md's ("" unreadable), for a record older
	// than version 4, which does not keep its own.
	PromptSHA256, FolderPromptSHA256 string
	Reset                            bool
	// PromptChange is the policy for a changed prompt.
	PromptChange PromptChangePolicy
	MaxReclaims  int
	// PoisonedExitCode is the exit code a poisoned run records.
	PoisonedExitCode int
	// StartedAttempts are the transcripts in the recorded run's folder
	// (each an attempt started); NextAttempt the first number free there.
	StartedAttempts, NextAttempt int
	Now                          time.Time
}

// PromptChangePolicy is what a rerun does when its prompt is not the one
// the recorded, still resumable run began with (prompt_change). Refuse
// exits 2 and changes nothing; the other two are also the decisions the
// record keeps of a change (record.PromptChange.Decision), spelled as
// the record spells them.
type PromptChangePolicy string

const (
	PromptChangeRefuse    PromptChangePolicy = "refuse"
	PromptChangeResume    PromptChangePolicy = record.PromptResume    // continue that run with its own prompt
	PromptChangeStartOver PromptChangePolicy = record.PromptStartOver // start a new run with this one
)

// OpenKind says how an invocation opens.
type OpenKind int

const (
	// OpenNew: a new run; Record carries the issue's history (its runs,
	// total cost, prompt changes) for the driver to build it on.
	OpenNew OpenKind = iota
	// OpenContinue: the recorded run goes on (interrupted, stopped,
	// waiting): no reclaim.
	OpenContinue
	// OpenReclaim: the recorded run's malarun died; Record counts one more
	// reclaim, to be saved before anything starts.
	OpenReclaim
	// OpenRefused: nothing starts (Refusal, Detail); when Record is to be
	// saved (Save), it is a poisoned run's.
	OpenRefused
)

// Opened is Open's decision.
type Opened struct {
	Kind OpenKind
	// Refusal and Detail (OpenRefused): the outcome and its sentence;
	// Headline replaces the outcome's words when set.
	Refusal  outcome.Outcome
	Detail   string
	Headline string
	// EndLeftovers: a malarun died with claude running (the record says
	// processing): what it left must be ended before anything else, even
	// when the issue is reset or refused for poison.
	EndLeftovers bool
	// Reset: --reset closes the recorded run (logged).
	Reset bool
	// Record is the recorded run as it goes on, or the history a new run
	// keeps; Save says it must be saved as it is before anything starts.
	Record record.Record
	Save   bool
	// Change is the prompt change to keep in the record (nil: none).
	Change *record.PromptChange
	// Begin is how internal/run begins a continued or reclaimed run.
	Begin Beginning
}

// Open decides how an invocation opens.
func Open(in Invocation) Opened {
	old := in.Record
	switch {
	case in.Damaged != nil && !in.Reset:
		return Opened{Kind: OpenRefused, Refusal: outcome.Usage, Detail: in.Damaged.Error()}
	case in.Damaged != nil:
		return Opened{Kind: OpenNew, Reset: true}
	case in.Found && (old.Status == record.Processing || old.Status == record.Waiting) && in.OwnerAlive:
		// The lock was free only because its file was removed: the
		// malarun that holds the run is alive. Taking it over would kill
		// its work; even --reset must not.
		o := old.Owner
		return Opened{Kind: OpenRefused, Refusal: outcome.Busy, Detail: fmt.Sprintf(
			"issue %s is being run by another malarun (pid %d on %s since %s); its lock file was missing, so the record's owner was checked: it is alive",
			old.Issue, o.Pid, o.Host, o.StartedAt.UTC().Format(time.RFC3339))}
	case !in.Found:
		return Opened{Kind: OpenNew}
	}
	o := Opened{EndLeftovers: old.Status == record.Processing, Reset: in.Reset}
	if Resumable(old.Status) && !old.Poisoned && !in.Reset {
		if old.PromptSHA256 == "" {
			old.PromptSHA256 = in.FolderPromptSHA256
		}
		// Before anything changes: a refusal leaves the record, and what a
		// dead malarun left running, as they are.
		change, refused := promptChange(in, old)
		if refused != nil {
			return *refused
		}
		o.Change = change
	}
	if in.Reset {
		old.Poisoned, old.Status = false, record.Failed
	}
	if o.Change != nil && o.Change.Decision == record.PromptStartOver {
		old.Status = record.Failed // the recorded run is closed, as by --reset
	}
	old = keepPromptChange(old, o.Change)
	switch {
	case old.Poisoned:
		o.Kind, o.Refusal, o.Record = OpenRefused, outcome.Poisoned, old
		o.Detail = fmt.Sprintf("issue %s was poisoned after %d malarun deaths in a row (%s); run with --reset to try again", old.Issue, old.Reclaims, old.Reason)
		return o
	case Resumable(old.Status):
		return continued(in, old, o)
	}
	o.Kind, o.Record = OpenNew, old
	return o
}

// Resumable: a run in this state is continued by the issue's next invocation.
func Resumable(s record.Status) bool {
	return s == record.Processing || s == record.Interrupted || s == record.Stopped || s == record.Waiting
}

// continued is the recorded run going on: a reclaim when its malarun died
// (one more death, poisoned past max_reclaims), else a continuation.
func continued(in Invocation, rec record.Record, o Opened) Opened {
	o.Kind = OpenContinue
	if rec.Status == record.Processing {
		o.Kind, o.Save = OpenReclaim, true
		rec.Reclaims++
		rec.RunReclaims++
		// The attempt it was running when it died happened: the run's
		// count says so. It was cut by malarun's death, not by claude, so
		// it uses none of max_attempts (max_reclaims bounds deaths).
		cut := max(0, in.StartedAttempts-rec.Attempts)
		rec.Attempts += cut
		rec.KilledAttempts += cut
		if rec.Reclaims > in.MaxReclaims {
			rec.Poisoned, rec.Status, rec.ExitCode = true, record.Failed, in.PoisonedExitCode
			rec.Reason = fmt.Sprintf("malarun died during this run %d times in a row (max_reclaims %d)", rec.Reclaims, in.MaxReclaims)
			o.Kind, o.Refusal, o.Detail = OpenRefused, outcome.Poisoned, rec.Reason+"; run with --reset to try again"
			o.Record = rec
			return o
		}
	}
	o.Record = rec
	o.Begin = Beginning{Continued: true, FirstAttempt: max(in.NextAttempt, 1), Record: recordedOf(rec)}
	if rec.Status == record.Stopped || rec.Status == record.Waiting {
		// It stopped on its invocation's limits: the next gets its own.
		o.Begin.Record.NotCounted = rec.Attempts
	}
	if rec.Status == record.Waiting {
		o.Begin.Record.Limited = true
		if rec.SessionID == "" && rec.Checkpoint == "" && rec.Attempts == 0 {
			// Stopped by another malarun's limit before its first attempt:
			// nothing to continue, the task starts as it would have.
			o.Begin.Continued, o.Begin.Record.Limited = false, false
		}
	}
	return o
}

// promptChange compares this invocation's prompt with the recorded run's:
// nil when they are the same or the recorded one is unknown; a change to
// keep when the policy says what to do; a refusal (exit 2, nothing
// changed) when it does not.
func promptChange(in Invocation, rec record.Record) (*record.PromptChange, *Opened) {
	recorded, given := rec.PromptSHA256, in.PromptSHA256
	if recorded == "" || recorded == given {
		return nil, nil
	}
	change := &record.PromptChange{At: in.Now.UTC(), RunID: rec.RunID, RecordedSHA256: recorded, GivenSHA256: given}
	switch in.PromptChange {
	case PromptChangeResume, PromptChangeStartOver:
		change.Decision = string(in.PromptChange)
		return change, nil
	}
	saved := rec.RunDir + "/prompt.md"
	return nil, &Opened{Kind: OpenRefused, Refusal: outcome.Usage, Headline: "refused: the prompt changed", Detail: fmt.Sprintf(
		"issue %s: this prompt (%s, sha256 %.12s) is not the one its %s run %s began with (sha256 %.12s, saved as %s), which would be continued. "+
			"To continue that run, run again with its prompt (--prompt %s) or with --prompt-change=resume; "+
			"to start this task instead, use --prompt-change=start_over (the recorded run stays on disk) or --reset",
		rec.Issue, in.PromptSource, given, rec.Status, rec.RunID, recorded, saved, saved)}
}

// keepPromptChange is rec with a change added, keeping the latest
// record.MaxPromptChanges.
func keepPromptChange(rec record.Record, c *record.PromptChange) record.Record {
	if c == nil {
		return rec
	}
	rec.PromptChanges = append(append([]record.PromptChange(nil), rec.PromptChanges...), *c)
	if n := len(rec.PromptChanges); n > record.MaxPromptChanges {
		rec.PromptChanges = rec.PromptChanges[n-record.MaxPromptChanges:]
	}
	return rec
}
