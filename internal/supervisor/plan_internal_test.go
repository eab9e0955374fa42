package supervisor

import (
	"testing"

	"github.com/malarun/malarun/internal/journal"
)

// A run resumed from its record knows whether it ever had an answer from
// the API: then a connection failure is transient (docs/design.md §D17).
func TestTalkedInRecord(t *testing.T) {
	cases := []struct {
		name string
		rec  journal.Record
		want bool
	}{
		{"a new run", journal.Record{}, false},
		{"a session that never got a reply", journal.Record{SessionID: "s", Attempts: 2}, false},
		{"a session that talked", journal.Record{SessionTalked: true}, true},
		{"an answer streamed, no whole message (api_answered)", journal.Record{APIAnswered: true}, true},
		{"a context restart", journal.Record{Continuations: 1}, true},
		{"a checkpoint", journal.Record{Checkpoint: "done: x"}, true},
		{"a cost", journal.Record{CostUSD: 0.01}, true},
		{"only earlier runs cost something", journal.Record{TotalCostUSD: 3}, false},
	}
	for _, c := range cases {
		if got := talkedInRecord(c.rec); got != c.want {
			t.Errorf("%s: talkedInRecord = %v, want %v", c.name, got, c.want)
		}
	}
}
