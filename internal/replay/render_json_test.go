package replay

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/testing/schemacheck"
)

// The JSON form is valid against docs/show.schema.json, decodes back to
// the story, and escapes what a terminal acts on.
func TestJSONMatchesItsSchema(t *testing.T) {
	schema, err := schemacheck.Load("../../docs/show.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	rf := hangThenResume(t)
	rf.write("attempt-2.prompt.md", "Continue\x1b]0;title\x07 \u202e now.\n")
	var out bytes.Buffer
	var r recorder
	if _, err := Tell(Source{Issue: "issue-1", RunDir: rf.dir, Status: "succeeded"}, &r); err != nil {
		t.Fatal(err)
	}
	if _, err := Tell(Source{Issue: "issue-1", RunDir: rf.dir, Status: "succeeded"}, NewJSON(&out)); err != nil {
		t.Fatal(err)
	}
	errs, err := schemacheck.Check(schema, out.Bytes(), "show")
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, e := range errs {
		t.Errorf("schema: %s", e)
	}
	var story struct {
		Version int
		Header  Header
		Items   []Item
		Summary Summary
	}
	if err := json.Unmarshal(out.Bytes(), &story); err != nil {
		t.Fatal(err)
	}
	if story.Version != version || len(story.Items) != len(r.items) || len(story.Summary.Attempts) != 2 || story.Header.RunID != r.header.RunID {
		t.Errorf("decoded: version %d, %d items (told %d), %+v", story.Version, len(story.Items), len(r.items), story.Summary)
	}
	if strings.ContainsAny(out.String(), "\x1b\x07\u202e") || !strings.Contains(out.String(), `\u202e`) {
		t.Errorf("terminal controls are not escaped: %q", out.String())
	}
	// Each item is a line of its own: a reader of a pipe sees them as they come.
	if n := strings.Count(out.String(), "\n"); n != len(r.items)+4 {
		t.Errorf("%d lines for %d items", n, len(r.items))
	}
}

// Costs print rounded to the millionth (internal/usd), in items, attempts
// and the summary, while the walk's own values stay exact.
func TestJSONRoundsCosts(t *testing.T) {
	sum := 0.0001 + 0.0005
	var out bytes.Buffer
	r := NewJSON(&out)
	info := &Attempt{N: 1, CostUSD: sum}
	it := &Item{Seq: 1, Kind: KindResult, CostUSD: sum, RunCostUSD: sum}
	ended := &Item{Seq: 2, Kind: event.AttemptEnded, Info: info}
	if r.Begin(Header{Issue: "i"}) != nil || r.Item(it) != nil || r.Item(ended) != nil ||
		r.End(Summary{CostUSD: sum, Attempts: []Attempt{*info}}) != nil {
		t.Fatal("render failed")
	}
	if strings.Contains(out.String(), "0000000") || strings.Count(out.String(), ":0.0006") != 5 {
		t.Errorf("costs not rounded:\n%s", out.String())
	}
	if it.CostUSD != sum || info.CostUSD != sum {
		t.Errorf("the walk's values changed: %v, %v", it.CostUSD, info.CostUSD)
	}
}
