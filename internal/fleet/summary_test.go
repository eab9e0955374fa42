package fleet

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/testing/schemacheck"
	"github.com/malarun/malarun/internal/timeline"
)

var update = flag.Bool("update", false, "rewrite testdata/night.* from the summary's output")

// TestNightIsCounted pins what the summary says of the night, independently
// of the golden files (a careless -update cannot bless a wrong count).
func TestNightIsCounted(t *testing.T) {
	s := scanNight(t, nightStateDir(t))
	check := func(what string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %#v, want %#v", what, got, want)
		}
	}
	check("issues", s.Issues, 11)
	check("by status", s.ByStatus, []Count{{"succeeded", 3}, {"failed", 2}, {"stopped", 2}, {"damaged", 1}, {"waiting", 1}, {"processing", 1}, {"orphaned", 1}})
	check("skipped (inert)", s.Skipped, []string{"not an issue^[[31m"})
	var groups [][]string
	for _, g := range s.Ended {
		groups = append(groups, append([]string{g.Outcome, fmt.Sprint(g.ExitCodes)}, g.Issues...))
	}
	check("groups (the two hang stops are one, by outcome and reason but its numbers)", groups,
		[][]string{{"retries_exhausted", "[3]", "fail-1", "fail-2"}, {"auth", "[4]", "auth-1"}, {"error_result", "[1]", "hostile-1"}})
	check("waiting", rowIssues(s.Waiting), []string{"wait-1"})
	check("retry at", s.Waiting[0].RetryAt, time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
	check("running", rowIssues(s.Running), []string{"orphan-1", "run-1"})
	check("run-1's attempt and phase", [3]any{s.Running[1].Attempt, s.Running[1].Phase, s.Running[1].Doing}, [3]any{2, "tool_input", "while writing the input of a Bash call"})
	check("orphan-1 is not running (its malarun is gone)", s.Running[0].Attempt, 0)
	check("damaged", len(s.Damaged), 1)
	check("damaged issue", s.Damaged[0].Issue, "bad-1")
	r := s.Rescues
	check("hangs", [2]any{r.Hangs, r.HangsByPhase}, [2]any{2, map[string]int{"tool": 1, "text": 1}})
	check("crashes, limit waits (wait-1's wait and exit 75 are one reset), reclaims, restarts, tasks, API retries",
		[]int{r.Crashes, r.LimitWaits, r.Reclaims, r.Restarts, r.Tasks, r.APIRetries}, []int{1, 2, 1, 1, 1, 1})
	check("rescued (ok-1 and ok-3)", r.Rescued, 2)
	check("cost", round(s.Totals.CostUSD), 2.88)
	check("tokens", s.Totals.Tokens, stream.Tokens{InputTokens: 10720, OutputTokens: 2902, CacheReadInputTokens: 107200})
	check("wall spread of the runs that ended (ms)", [3]any{s.Totals.Wall.N, s.Totals.Wall.P50, s.Totals.Wall.Max}, [3]any{7, 720000.0, 7500000.0})
	check("slowest first (run-1 runs on till now)", rowIssues(s.Slowest)[:3], []string{"ok-3", "run-1", "wait-1"})
	check("costliest first", rowIssues(s.Costliest)[:2], []string{"ok-3", "ok-1"})
	check("every issue listed", len(s.Rows), 11)
}

func round(x float64) float64 { return float64(int64(x*100+0.5)) / 100 }

func rowIssues(rows []Row) []string {
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.Issue)
	}
	return ids
}

// TestSinceKeepsTheNightsRuns: --since leaves out the runs that ended
// before then, and keeps the damaged (a damaged record has no time to
// trust) and the runs that go on or wait (their record is saved only at
// events: wait-1's last was before then).
func TestSinceKeepsTheNightsRuns(t *testing.T) {
	dir := nightStateDir(t)
	sc, err := Scan(dir, Options{ValidID: validID, Now: nightNow, Since: at(3, 0)})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, is := range sc.Issues {
		ids = append(ids, is.ID)
	}
	want := []string{"bad-1", "hostile-1", "ok-3", "orphan-1", "run-1", "wait-1"}
	if !slices.Equal(ids, want) {
		t.Errorf("since 01:00: %q, want %q", ids, want)
	}
}

// TestEachFormIsItsGolden: the four forms of the night, byte for byte
// (go test -update rewrites them; read the diff before committing).
func TestEachFormIsItsGolden(t *testing.T) {
	dir := nightStateDir(t)
	s := scanNight(t, dir)
	link := func(issue string) string {
		if issue == "bad-1" {
			return ""
		}
		return "issues/" + issue + ".html"
	}
	for _, form := range []struct {
		file  string
		write func(*bytes.Buffer) error
	}{
		{"night.txt", func(b *bytes.Buffer) error { return WriteText(b, &s) }},
		{"night.md", func(b *bytes.Buffer) error { return WriteMarkdown(b, &s) }},
		{"night.json", func(b *bytes.Buffer) error { return WriteJSON(b, &s, 1) }},
		{"night.html", func(b *bytes.Buffer) error { return WriteHTML(b, &s, link) }},
	} {
		t.Run(form.file, func(t *testing.T) {
			var got bytes.Buffer
			if err := form.write(&got); err != nil {
				t.Fatal(err)
			}
			// The damaged record's message names its path.
			got = *bytes.NewBuffer(bytes.ReplaceAll(got.Bytes(), []byte(dir), []byte("/state")))
			golden := filepath.Join("testdata", form.file)
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s differs:\n got:\n%s", golden, got.Bytes())
			}
			if bytes.ContainsAny(got.Bytes(), "\x1b\x07") {
				t.Errorf("%s holds a terminal control byte from a record", form.file)
			}
		})
	}
}

// TestJSONFollowsItsSchema: the JSON form is what docs/summary.schema.json
// says, for the night, an empty state directory, the second of two nights
// (what changed, what to act on, not-run notes) and the worst case (every
// list past its bound).
func TestJSONFollowsItsSchema(t *testing.T) {
	schema, err := schemacheck.Load("../../docs/summary.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	_, second := twoNights(t)
	forms := map[string]*Summary{"night": ptr(scanNight(t, nightStateDir(t))), "empty": ptr(scanNight(t, t.TempDir())),
		"the second of two nights": &second}
	if testing.Short() {
		t.Log("!!! under -short (make check) the worst case is left out (15 s under -race); make test checks it !!!")
	} else {
		worstCase := worst(3)
		forms["the worst case"] = &worstCase
	}
	for name, s := range forms {
		var out bytes.Buffer
		if err := WriteJSON(&out, s, 1); err != nil {
			t.Fatal(err)
		}
		problems, err := schemacheck.Check(schema, out.Bytes(), name)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Errorf("%s: %s", name, p)
		}
	}
	// The check can fail: a row with a field the schema does not name, a
	// phase counted in words, a made_at that is not a time.
	for _, bad := range []struct{ from, to string }{
		{`"hangs": 0,`, `"hangs": 0, "planted": 1,`},
		{`"tool": 1`, `"tool": "one"`},
		{`"made_at": "2026-11-27T07:00:00Z"`, `"made_at": "this morning"`},
	} {
		s := scanNight(t, nightStateDir(t))
		var out bytes.Buffer
		if err := WriteJSON(&out, &s, 1); err != nil {
			t.Fatal(err)
		}
		planted := strings.Replace(out.String(), bad.from, bad.to, 1)
		if planted == out.String() {
			t.Fatalf("%q is not in the JSON", bad.from)
		}
		if problems, _ := schemacheck.Check(schema, []byte(planted), "planted"); len(problems) == 0 {
			t.Errorf("%q passed the schema", bad.to)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestJSONCostsAreRounded: sums of the CLI's costs carry float noise
// (0.1 + 0.2 is 0.30000000000000004); the JSON form prints each cost with
// at most 6 decimals.
func TestJSONCostsAreRounded(t *testing.T) {
	dir := t.TempDir()
	for i, cost := range []float64{0.1, 0.2, 0.0001, 0.0002, 0.0003} {
		writeIssue(t, dir, issueSpec{id: fmt.Sprintf("c-%d", i), status: record.Stopped, reason: "no output", exit: 3, cost: cost, started: at(0, i),
			attempts: 1, timeline: []timeline.Entry{ev("run_started", at(0, i)), finishedLine(at(0, i+1), "retries_exhausted", 3, cost, stream.Tokens{})}})
	}
	s := scanNight(t, dir)
	var out bytes.Buffer
	if err := WriteJSON(&out, &s, 1); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, `"cost_usd": 0.3006,`) || strings.Contains(got, "00000000") {
		t.Errorf("costs not rounded to 6 decimals:\n%s", got)
	}
	if s.Totals.CostUSD == 0.3006 {
		t.Errorf("the sum itself is rounded: the test proves nothing (%v)", s.Totals.CostUSD)
	}
}

// Requests the API never answered are counted with their cost (from the
// attempts' attempt_ended entries), and an api_retry that an older malarun
// wrote for a line it stopped claude on (a 401 at the first request) is
// no retry of claude's.
func TestNoResponsesAndRealRetriesAreCounted(t *testing.T) {
	dir := t.TempDir()
	nr := func(n int, ms int64) func(*timeline.Entry) {
		return func(e *timeline.Entry) { e.NoResponse = &timeline.NoResponse{Retries: n, WaitedMS: ms - 2000, MS: ms} }
	}
	attempt := func(n int) func(*timeline.Entry) { return func(e *timeline.Entry) { e.Attempt = n } }
	writeIssue(t, dir, issueSpec{id: "slow-1", status: record.Succeeded, cost: 0.1, started: at(0, 0), attempts: 2, timeline: []timeline.Entry{
		ev("run_started", at(0, 0)),
		ev("attempt_started", at(0, 0), attempt(1)),
		ev("api_retry", at(0, 3), attempt(1), func(e *timeline.Entry) { e.NoResponse = &timeline.NoResponse{Retries: 1, WaitedMS: 180000} }),
		ev("attempt_ended", at(0, 4), attempt(1), outcomeOf("success", 0), nr(1, 182000)),
		finishedLine(at(0, 4), "success", 0, 0.1, stream.Tokens{}),
	}})
	writeIssue(t, dir, issueSpec{id: "slow-2", status: record.Succeeded, cost: 0.1, started: at(1, 0), attempts: 1, timeline: []timeline.Entry{
		ev("run_started", at(1, 0)),
		ev("attempt_started", at(1, 0), attempt(1)),
		ev("attempt_ended", at(1, 4), attempt(1), outcomeOf("success", 0), nr(1, 182000)),
		finishedLine(at(1, 4), "success", 0, 0.1, stream.Tokens{}),
	}})
	writeIssue(t, dir, issueSpec{id: "auth-1", status: record.Failed, reason: "refused", exit: 8, started: at(2, 0), attempts: 1, timeline: []timeline.Entry{
		ev("run_started", at(2, 0)),
		ev("attempt_started", at(2, 0), attempt(1)),
		ev("api_retry", at(2, 0), attempt(1)),
		ev("kill_sent", at(2, 0), attempt(1), func(e *timeline.Entry) { e.Reason = "auth" }),
		finishedLine(at(2, 1), "auth", 8, 0, stream.Tokens{}),
	}})
	s := scanNight(t, dir)
	r := s.Rescues
	if r.APIRetries != 1 || r.NoResponses != 2 || r.NoResponseMS != 364000 {
		t.Errorf("api retries %d (want slow-1's only), no response %d costing %d ms", r.APIRetries, r.NoResponses, r.NoResponseMS)
	}
	var b strings.Builder
	if err := WriteText(&b, &s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "claude retried 1 API request and asked again 2 requests the API never answered (6m4s lost) itself") {
		t.Errorf("the text does not say it:\n%s", b.String())
	}
}
