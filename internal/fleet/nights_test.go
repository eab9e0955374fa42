package fleet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/notrun"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/timeline"
	"github.com/malarun/malarun/internal/usd"
)

// Two nights of one fleet, a night apart, with different faults. The
// first: a and b succeed, c runs out of retries, d cannot authenticate, e
// succeeds after a hang and a request never answered. The second: a hangs
// until its retries run out, the first hang after two requests never
// answered, b succeeds after one, c succeeds this time, d still cannot
// authenticate, e spends its budget, f is new and waits on a limit no wait
// lifts (credits), and the recipe could not run two prompt files (a name,
// a configuration error).
func firstNight() []issueSpec {
	day := func(h, m int) time.Time { return at(h, m).Add(-24 * time.Hour) }
	tok := stream.Tokens{InputTokens: 1000, OutputTokens: 100}
	return []issueSpec{
		{id: "a", status: record.Succeeded, cost: 0.30, started: day(0, 0), attempts: 1,
			timeline: []timeline.Entry{ev("run_started", day(0, 0)), finishedLine(day(0, 20), "success", 0, 0.30, tok)}},
		{id: "b", status: record.Succeeded, cost: 0.20, started: day(0, 5), attempts: 1,
			timeline: []timeline.Entry{ev("run_started", day(0, 5)), finishedLine(day(0, 15), "success", 0, 0.20, tok)}},
		{id: "c", status: record.Stopped, reason: "no output for 180s (3 attempts)", exit: 3, cost: 0.0002, started: day(0, 10), attempts: 3,
			timeline: []timeline.Entry{ev("run_started", day(0, 10)),
				ev("hang_detected", day(0, 13), func(e *timeline.Entry) { e.Phase, e.LimitMS = "waiting", 180000 }),
				ev("attempt_started", day(0, 14)),
				finishedLine(day(0, 30), "retries_exhausted", 3, 0.0002, tok)}},
		{id: "d", status: record.Failed, reason: "claude: authentication failed (401)", exit: 8, started: day(0, 1), attempts: 1,
			timeline: []timeline.Entry{ev("run_started", day(0, 1)), finishedLine(day(0, 1), "auth", 8, 0, stream.Tokens{})}},
		{id: "e", status: record.Succeeded, cost: 0.50, started: day(1, 0), attempts: 2,
			timeline: []timeline.Entry{ev("run_started", day(1, 0)),
				ev("hang_detected", day(1, 10), func(e *timeline.Entry) { e.Phase, e.LimitMS = "tool", 900000 }),
				ev("attempt_ended", day(1, 10), func(e *timeline.Entry) { e.Outcome = "hang" }),
				ev("attempt_started", day(1, 11)),
				ev("attempt_ended", day(1, 40), func(e *timeline.Entry) { e.Outcome = "success" }, noResponse(1, 12, 30)),
				finishedLine(day(1, 40), "success", 0, 0.50, tok)}},
	}
}

func secondNight() []issueSpec {
	tok := stream.Tokens{InputTokens: 2000, OutputTokens: 200}
	return []issueSpec{
		{id: "a", status: record.Stopped, reason: "no output for 60s while writing text (3 attempts)", exit: 3, cost: 0.0004, started: at(0, 0), attempts: 3,
			timeline: []timeline.Entry{ev("run_started", at(0, 0)),
				ev("hang_detected", at(0, 5), func(e *timeline.Entry) { e.Phase, e.LimitMS = "text", 60000 }),
				ev("attempt_ended", at(0, 5), func(e *timeline.Entry) { e.Outcome = "hang" }, noResponse(2, 24, 84)),
				ev("attempt_started", at(0, 6)),
				ev("hang_detected", at(0, 10), func(e *timeline.Entry) { e.Phase, e.LimitMS = "text", 60000 }),
				finishedLine(at(0, 10), "retries_exhausted", 3, 0.0004, tok)}},
		{id: "b", status: record.Succeeded, cost: 0.20, started: at(0, 5), attempts: 1,
			timeline: []timeline.Entry{ev("run_started", at(0, 5)),
				ev("attempt_ended", at(0, 14), func(e *timeline.Entry) { e.Outcome = "success" }, noResponse(1, 12, 12.5)),
				finishedLine(at(0, 14), "success", 0, 0.20, tok)}},
		{id: "c", status: record.Succeeded, cost: 0.40, started: at(0, 10), attempts: 1,
			timeline: []timeline.Entry{ev("run_started", at(0, 10)), finishedLine(at(0, 50), "success", 0, 0.40, tok)}},
		{id: "d", status: record.Failed, reason: "claude: authentication failed (401)", exit: 8, started: at(0, 1), attempts: 1,
			timeline: []timeline.Entry{ev("run_started", at(0, 1)), finishedLine(at(0, 1), "auth", 8, 0, stream.Tokens{})}},
		{id: "e", status: record.Failed, reason: "cost budget exhausted: $0.5000 of max_cost_usd $0.50", exit: 9, cost: 0.5002, started: at(1, 0), attempts: 2,
			timeline: []timeline.Entry{ev("run_started", at(1, 0)), finishedLine(at(1, 30), "budget", 9, 0.5002, tok)}},
		{id: "f", status: record.Waiting, reason: "usage limit (overage); the account needs usage credits (credits_required)", exit: 75, cost: 0.01,
			started: at(2, 0), attempts: 1, limit: "overage",
			timeline: []timeline.Entry{ev("run_started", at(2, 0)), finishedLine(at(2, 2), "rate_limit", 75, 0.01, tok)}},
	}
}

// nightDir is a state directory of specs, with the not-run notes given.
func nightDir(t *testing.T, specs []issueSpec, notes ...notrun.Note) string {
	t.Helper()
	dir := t.TempDir()
	for _, is := range specs {
		writeIssue(t, dir, is)
	}
	for _, n := range notes {
		if err := notrun.Write(dir, n); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestTwoNightsApart: the second night's summary, compared with the
// first's JSON form, in all four forms (goldens), and its numbers pinned
// apart from them.
func TestTwoNightsApart(t *testing.T) {
	firstJSON, second := twoNights(t)

	c := second.Changes
	check := func(what string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %#v, want %#v", what, got, want)
		}
	}
	var newly, again []string
	for _, ch := range c.NewlyFailed {
		newly = append(newly, ch.Issue+" was "+ch.Was)
	}
	for _, ch := range c.PassesAgain {
		again = append(again, ch.Issue+" was "+ch.Was)
	}
	check("newly failed", newly, []string{"a was succeeded", "e was succeeded"})
	check("passes again", again, []string{"c was stopped"})
	check("still failing", c.StillFailing, 1)
	check("last night's failures", [2]any{c.PreviousFailures.Runs, c.PreviousFailures.CostUSD}, [2]any{2, 0.0002})
	check("tonight's failures", [2]any{second.Failures.Runs, usd.Round(second.Failures.CostUSD)}, [2]any{3, 0.5006})
	check("time lost to hangs tonight (two 60 s silences, the first a minute more to the next attempt)", second.Failures.HangLostMS, int64(3*60000))
	check("last night's", c.PreviousFailures.HangLostMS, int64(4*60000+16*60000))
	check("time lost to requests never answered tonight (a's attempt that hung, b's)", second.Failures.NoResponseLostMS, ptr(int64(84000+12500)))
	check("last night's (e's)", c.PreviousFailures.NoResponseLostMS, ptr(int64(30000)))
	check("runs an older malarun recorded", [2]int{second.Failures.NoResponseUncounted, c.PreviousFailures.NoResponseUncounted}, [2]int{0, 0})
	var kinds []string
	for _, a := range second.ActOn {
		kinds = append(kinds, a.Kind)
	}
	check("what to act on, in order", kinds, []string{"credentials", "credit", "configuration", "not_run", "budget"})

	link := func(issue string) string { return "issues/" + issue + ".html" }
	for _, form := range []struct {
		file  string
		write func(*bytes.Buffer) error
	}{
		{"nights/first.json", func(b *bytes.Buffer) error { _, err := b.Write(firstJSON.Bytes()); return err }},
		{"nights/second.txt", func(b *bytes.Buffer) error { return WriteText(b, &second) }},
		{"nights/second.md", func(b *bytes.Buffer) error { return WriteMarkdown(b, &second) }},
		{"nights/second.json", func(b *bytes.Buffer) error { return WriteJSON(b, &second, 1) }},
		{"nights/second.html", func(b *bytes.Buffer) error { return WriteHTML(b, &second, link) }},
	} {
		t.Run(form.file, func(t *testing.T) {
			var got bytes.Buffer
			if err := form.write(&got); err != nil {
				t.Fatal(err)
			}
			golden(t, form.file, got.Bytes())
		})
	}
	for _, want := range []string{"Newly failed   2: a (retries_exhausted, exit 3; was succeeded), e (budget, exit 9; was succeeded)",
		"Passes again   1: c (success, exit 0; was stopped)", "Still failing  1"} {
		var text bytes.Buffer
		WriteText(&text, &second)
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text form lacks %q", want)
		}
	}
}

// twoNights is the first night's JSON form, and the second night's
// summary compared with it.
func twoNights(t *testing.T) (bytes.Buffer, Summary) {
	t.Helper()
	first := scanNightAt(t, nightDir(t, firstNight()), nightNow.Add(-24*time.Hour))
	var firstJSON bytes.Buffer
	if err := WriteJSON(&firstJSON, &first, 1); err != nil {
		t.Fatal(err)
	}
	two := 2
	second := scanNightAt(t, nightDir(t, secondNight(),
		notrun.Note{File: "prompts/fix the login.md", Reason: "not an issue id (letters, digits, . _ -; not starting with -): not run", At: at(0, 0)},
		notrun.Note{File: "prompts/g.md", Issue: "g", Reason: `malarun: max_cost_usd "five" (file malarun.yaml): not a number`, ExitCode: &two, At: at(0, 1)},
	), nightNow)
	prev, err := ParsePrevious(firstJSON.Bytes(), validID)
	if err != nil {
		t.Fatal(err)
	}
	second.Compare(prev)
	return firstJSON, second
}

// scanNightAt sums dir up as made at now.
func scanNightAt(t *testing.T, dir string, now time.Time) Summary {
	t.Helper()
	sc, err := Scan(dir, Options{ValidID: validID, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return Summarize("fleet", sc, time.Time{}, now)
}

// golden compares got with testdata/name (go test -update rewrites it;
// read the diff before committing).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n got:\n%s", path, got)
	}
}

// TestEarlierSummaryWithoutNoResponseTime: an earlier summary that does not
// say what requests never answered took (made before they were counted)
// still compares, and every form says that time is unknown then, never 0;
// one that says it in rescues only (made before failures did) is read
// from there; a number no summary writes is unknown too.
func TestEarlierSummaryWithoutNoResponseTime(t *testing.T) {
	firstJSON, _ := twoNights(t)
	edit := func(change func(failures, rescues map[string]any)) []byte {
		t.Helper()
		var doc map[string]any
		if err := json.Unmarshal(firstJSON.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		change(doc["failures"].(map[string]any), doc["rescues"].(map[string]any))
		out, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, c := range []struct {
		name   string
		change func(failures, rescues map[string]any)
		want   *int64
	}{
		{"as written", func(map[string]any, map[string]any) {}, ptr(int64(30000))},
		{"written before it was counted", func(f, r map[string]any) { delete(f, "no_response_lost_ms"); delete(r, "no_response_ms") }, nil},
		{"in rescues only", func(f, r map[string]any) { delete(f, "no_response_lost_ms") }, ptr(int64(30000))},
		{"none lost, in rescues only (absent there when none)", func(f, r map[string]any) {
			delete(f, "no_response_lost_ms")
			delete(r, "no_response_ms")
			r["no_response_retries"] = 0
		}, nil},
		{"a negative time", func(f, r map[string]any) { f["no_response_lost_ms"] = -5 }, nil},
		{"zero", func(f, r map[string]any) { f["no_response_lost_ms"] = 0 }, ptr(int64(0))},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := ParsePrevious(edit(c.change), validID)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Failures.NoResponseLostMS; !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %v, want %v", fmtPtr(got), fmtPtr(c.want))
			}
		})
	}

	// Compared with one that does not say it, in every form.
	p, err := ParsePrevious(edit(func(f, r map[string]any) { delete(f, "no_response_lost_ms"); delete(r, "no_response_ms") }), validID)
	if err != nil {
		t.Fatal(err)
	}
	second := scanNightAt(t, nightDir(t, secondNight()), nightNow)
	second.Compare(p)
	const unknown = "the earlier summary: 2 runs ended without success, costing $0.0002, hangs took 20m0s, " +
		"the time requests never answered took unknown (that summary does not say it)"
	var text, md, html, js bytes.Buffer
	for _, err := range []error{WriteText(&text, &second), WriteMarkdown(&md, &second), WriteHTML(&html, &second, func(string) string { return "" }),
		WriteJSON(&js, &second, 1)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for form, out := range map[string]string{"text": text.String(), "md": md.String(), "html": html.String()} {
		if !strings.Contains(out, "requests never answered took 1m37s; "+unknown) {
			t.Errorf("the %s form does not say tonight's time and that last night's is unknown:\n%s", form, out)
		}
	}
	var doc struct {
		Failures map[string]any `json:"failures"`
		Since    struct {
			Previous map[string]any `json:"previous_failures"`
		} `json:"since_summary"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc.Since.Previous["no_response_lost_ms"]; ok || doc.Failures["no_response_lost_ms"] != float64(96500) {
		t.Errorf("JSON: failures %v, previous_failures %v: want tonight's 96500 and last night's absent (unknown)", doc.Failures, doc.Since.Previous)
	}
}

// TestNoResponseTimeOfOlderRecords: a run whose record an older malarun
// wrote counted no request never answered: the time is unknown for it,
// and said so beside what the other runs lost, never added up as 0.
func TestNoResponseTimeOfOlderRecords(t *testing.T) {
	old := func(id string, min int) issueSpec {
		return issueSpec{id: id, status: record.Succeeded, cost: 0.1, started: at(0, min), attempts: 1, version: 8,
			timeline: []timeline.Entry{ev("run_started", at(0, min)), finishedLine(at(0, min+5), "success", 0, 0.1, stream.Tokens{})}}
	}
	counted := issueSpec{id: "new", status: record.Succeeded, cost: 0.1, started: at(0, 0), attempts: 1,
		timeline: []timeline.Entry{ev("run_started", at(0, 0)),
			ev("attempt_ended", at(0, 5), func(e *timeline.Entry) { e.Outcome = "success" }, noResponse(1, 12, 20)),
			finishedLine(at(0, 5), "success", 0, 0.1, stream.Tokens{})}}
	for _, c := range []struct {
		name  string
		specs []issueSpec
		want  string
	}{
		{"every run counted", []issueSpec{counted}, ", requests never answered took 20s"},
		{"an older run beside", []issueSpec{counted, old("old", 1)}, ", requests never answered took 20s (unknown in 1 run an older malarun recorded)"},
		{"older runs only", []issueSpec{old("old", 1), old("older", 2)},
			", the time requests never answered took unknown (2 runs an older malarun recorded, which did not count them)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := scanNightAt(t, nightDir(t, c.specs), nightNow)
			if got := s.failureLine(); !strings.HasSuffix(got, c.want) {
				t.Errorf("got %q, want it to end in %q", got, c.want)
			}
		})
	}
	none := scanNightAt(t, nightDir(t, []issueSpec{old("old", 1)}[:0]), nightNow)
	if got := none.failureLine(); strings.Contains(got, "never answered") {
		t.Errorf("no run: %q", got)
	}
}

func fmtPtr(p *int64) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}
