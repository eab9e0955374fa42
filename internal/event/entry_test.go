package event

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A finished line's cost is printed rounded (internal/usd): --events and
// the timeline carry 0.0006, not 0.0006000000000000001.
func TestEntryRoundsTheRunCost(t *testing.T) {
	e := Event{Kind: RunFinished, Time: time.Unix(0, 0), Issue: "i", CostUSD: 0.0001 + 0.0005}
	b, err := json.Marshal(e.Entry())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"cost_usd":0.0006,`) && !strings.HasSuffix(string(b), `"cost_usd":0.0006}`) {
		t.Errorf("entry: %s", b)
	}
}
