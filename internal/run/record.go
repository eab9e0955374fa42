package run

import (
	"path/filepath"
	"slices"
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/record"
)

// recordedOf is what a record says of the run, for Begin.
func recordedOf(rec record.Record) Recorded {
	return Recorded{Attempts: rec.Attempts, NotCounted: rec.KilledAttempts, SessionID: rec.SessionID, SessionTalked: rec.SessionTalked,
		SideEffects: rec.SideEffects, CostUSD: rec.CostUSD, Continuations: rec.Continuations, Checkpoint: rec.Checkpoint,
		InFlight: rec.InFlight, Talked: talkedInRecord(rec), Room: roomOfRecord(rec.PhaseRoom),
		Reclaims: rec.Reclaims, Limit: rec.UsageLimit}
}

// talkedInRecord reports whether a recorded run already had an answer from
// the API (docs/design.md §D17): its session talked, it restarted on a full
// context, it wrote a checkpoint, or it cost something. A run resumed from
// such a record treats a connection failure as the network going away.
func talkedInRecord(rec record.Record) bool {
	return rec.APIAnswered || rec.SessionTalked || rec.Continuations > 0 || rec.Checkpoint != "" || rec.CostUSD > 0
}

// RoomToRecord is the run's room by phase name, for the record (nil: none
// given).
func RoomToRecord(room attempt.Room) map[string]int {
	var out map[string]int
	for _, p := range attempt.Phases() {
		if room[p] > 0 {
			if out == nil {
				out = map[string]int{}
			}
			out[p.String()] = room[p]
		}
	}
	return out
}

// roomOfRecord reads the record's room back. The record was checked
// (record: a phase that grows, 1 to attempt.MaxRoom times; anything else
// is a damaged record, docs/design.md §D37); the bounds here only keep a
// Room built otherwise within them.
func roomOfRecord(m map[string]int) attempt.Room {
	var room attempt.Room
	for _, p := range attempt.Phases() {
		room[p] = min(max(m[p.String()], 0), attempt.MaxRoom)
	}
	return room
}

// Identity is what a new run is: its issue, folder, working directory,
// HOME, prompt and start.
type Identity struct {
	Issue, RunDir, Cwd, Home, PromptSHA256 string
	Started                                time.Time
}

// NewRun is a new run's record, on the issue's history (its earlier runs,
// their total cost and prompt changes, from the record before it; empty
// for a first run): processing, no session yet.
func NewRun(history record.Record, id Identity) record.Record {
	runID := filepath.Base(id.RunDir)
	return record.Record{
		Issue: id.Issue, Status: record.Processing, Cwd: id.Cwd, Home: id.Home,
		RunID: runID, RunDir: id.RunDir, Runs: append(slices.Clone(history.Runs), runID), Sessions: []string{},
		TotalCostUSD: history.TotalCostUSD, StartedAt: id.Started,
		Marker: id.Issue + "/" + runID, PromptSHA256: id.PromptSHA256,
		PromptChanges: history.PromptChanges, // the issue's history, like Runs
	}
}
