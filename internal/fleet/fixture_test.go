package fleet

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/timeline"
)

// night is the fixed time a night's state directory is summed up at.
var nightNow = time.Date(2026, 11, 27, 7, 0, 0, 0, time.UTC)

// at is a time of the night: hh:mm after 2026-11-26 22:00 UTC.
func at(h, m int) time.Time { return time.Date(2026, 11, 26, 22+h, m, 0, 0, time.UTC) }

// issueSpec is one issue of a fixture state directory: its record and its
// run's timeline as malarun writes them.
type issueSpec struct {
	id       string
	status   record.Status
	reason   string
	exit     int
	cost     float64
	started  time.Time
	attempts int
	retryAt  time.Time
	limit    string
	reclaims int
	// version is the record's (0: this malarun's): an older malarun's
	// record says less.
	version  int
	timeline []timeline.Entry
	// transcript is the latest attempt's (attempt-<attempts+1>.jsonl for
	// a running issue): its lines as the CLI printed them.
	transcript []string
}

// writeIssue writes is into stateDir as malarun would: the record (checked
// by record.Encode, so it is one malarun can write) and the timeline,
// each decision between line entries as the supervisor interleaves them.
func writeIssue(t testing.TB, stateDir string, is issueSpec) string {
	t.Helper()
	runID := is.started.UTC().Format("20060102T150405Z") + "-0a1b2c"
	runDir := filepath.Join(stateDir, is.id, "runs", runID)
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		t.Fatal(err)
	}
	r := record.Record{Issue: is.id, Status: is.status, Reason: is.reason, ExitCode: is.exit, CostUSD: is.cost, TotalCostUSD: is.cost,
		Cwd: "/work", RunID: runID, RunDir: runDir, Runs: []string{runID}, Marker: is.id + "/" + runID, Attempts: is.attempts,
		UsageLimit: record.UsageLimit{RetryAt: is.retryAt, LimitType: is.limit}, RunReclaims: is.reclaims, StartedAt: is.started, UpdatedAt: is.started.Add(time.Minute),
		Owner: record.Owner{Pid: 4242, Host: "runner-1", StartedAt: is.started}}
	if n := len(is.timeline); n > 0 {
		r.UpdatedAt = is.timeline[n-1].Time
	}
	if is.status == record.Processing {
		r.AttemptStartedAt = is.started.Add(time.Minute)
	}
	data, err := record.Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	if is.version != 0 {
		var rec map[string]any
		if err := json.Unmarshal(data, &rec); err != nil {
			t.Fatal(err)
		}
		rec["version"] = is.version
		if data, err = json.Marshal(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(stateDir, is.id, journal.RecordFile), data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(runDir, timeline.FileName))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for _, e := range is.timeline {
		e.Issue = is.id
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(w, "%s\n", line)
		fmt.Fprintf(w, `{"time":%q,"event":"line","issue":%q,"attempt":1,"offset":0}`+"\n", e.Time.Format(time.RFC3339Nano), is.id)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if is.transcript != nil {
		name := fmt.Sprintf("attempt-%d.jsonl", is.attempts+1)
		path := filepath.Join(runDir, name)
		if err := os.WriteFile(path, []byte(strings.Join(is.transcript, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		lastWrote := nightNow.Add(-time.Minute)
		if err := os.Chtimes(path, lastWrote, lastWrote); err != nil {
			t.Fatal(err)
		}
	}
	return runDir
}

// ev is a timeline entry.
func ev(kind string, when time.Time, set ...func(*timeline.Entry)) timeline.Entry {
	e := timeline.Entry{Time: when, Event: kind}
	for _, s := range set {
		s(&e)
	}
	return e
}

// noResponse is an attempt_ended entry's requests never answered:
// retries of them, claude's wait and what they cost, in seconds.
func noResponse(retries int, waited, cost float64) func(*timeline.Entry) {
	return func(e *timeline.Entry) {
		e.NoResponse = &timeline.NoResponse{Retries: retries, WaitedMS: int64(waited * 1000), MS: int64(cost * 1000)}
	}
}

func outcomeOf(o string, code int) func(*timeline.Entry) {
	return func(e *timeline.Entry) { e.Outcome, e.ExitCode = o, &code }
}

// finishedLine is a run's finished entry: its outcome, exit code, cost
// and tokens.
func finishedLine(when time.Time, o string, code int, cost float64, tokens stream.Tokens) timeline.Entry {
	return ev("finished", when, outcomeOf(o, code), func(e *timeline.Entry) { e.CostUSD, e.Tokens = &cost, &tokens })
}

// runningTranscript is the start of an attempt that is writing a Bash
// call's input (the CLI 2.1.332's lines, testdata/transcripts/phases).
func runningTranscript() []string {
	return []string{
		`{"type":"system","subtype":"init","cwd":"/work","session_id":"4ecb7308-1cdf-4fd5-862e-08fbbbac937e","tools":["Bash"],"mcp_servers":[],"model":"claude-opus-4-8","permissionMode":"default","apiKeySource":"ANTHROPIC_API_KEY","claude_code_version":"2.1.332","uuid":"0b0d2c1c-6f3e-4a47-9c55-1f1b2f7b0e01"}`,
		`{"type":"stream_event","event":{"message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-8","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":100,"output_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}},"type":"message_start"},"session_id":"4ecb7308-1cdf-4fd5-862e-08fbbbac937e","parent_tool_use_id":null,"uuid":"84a97540-0450-40d2-9d74-6e25db0097a5"}`,
		`{"type":"stream_event","event":{"content_block":{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}},"index":0,"type":"content_block_start"},"session_id":"4ecb7308-1cdf-4fd5-862e-08fbbbac937e","parent_tool_use_id":null,"uuid":"84a97540-0450-40d2-9d74-6e25db0097a6"}`,
	}
}

// nightIssues is a night of a small fleet, one issue for each thing the
// summary tells apart: successes plain and rescued, failures grouped by
// outcome and reason, a stop, a wait for a usage limit, a run going on, an
// orphan, a hostile reason, a request never answered, and a record an
// older malarun wrote (which counted no such request).
func nightIssues() []issueSpec {
	tok := func(in, out int64) stream.Tokens {
		return stream.Tokens{InputTokens: in, OutputTokens: out, CacheReadInputTokens: 10 * in}
	}
	return []issueSpec{
		{id: "ok-1", status: record.Succeeded, cost: 0.42, started: at(0, 0), attempts: 3, reclaims: 1, timeline: []timeline.Entry{
			ev("run_started", at(0, 0)),
			ev("attempt_started", at(0, 0)),
			ev("hang_detected", at(0, 4), func(e *timeline.Entry) { e.Phase = "tool"; e.Reason = "no output for 3m0s" }),
			ev("attempt_ended", at(0, 4), func(e *timeline.Entry) { e.Outcome = "hang" }),
			ev("attempt_started", at(0, 5)),
			ev("api_retry", at(0, 5)),
			ev("task_started", at(0, 6)),
			ev("attempt_ended", at(0, 7), func(e *timeline.Entry) { e.Outcome = "crash" }, noResponse(1, 12, 40)),
			ev("restart", at(0, 8)),
			finishedLine(at(0, 12), "success", 0, 0.42, tok(1200, 300)),
		}},
		{id: "ok-2", status: record.Succeeded, cost: 0.10, started: at(0, 30), attempts: 1, timeline: []timeline.Entry{
			ev("run_started", at(0, 30)),
			finishedLine(at(0, 35), "success", 0, 0.10, tok(500, 100)),
		}},
		{id: "ok-3", status: record.Succeeded, cost: 1.75, started: at(1, 0), attempts: 2, timeline: []timeline.Entry{
			ev("run_started", at(1, 0)),
			ev("limit_wait", at(1, 20), func(e *timeline.Entry) { e.RetryAt = at(2, 0) }),
			ev("hang_detected", at(2, 30), func(e *timeline.Entry) { e.Phase = "text" }),
			finishedLine(at(3, 5), "success", 0, 1.75, tok(9000, 2500)),
		}},
		{id: "fail-1", status: record.Stopped, reason: "no output for 180s (3 attempts)", exit: 3, cost: 0.05, started: at(0, 10), attempts: 3,
			timeline: []timeline.Entry{ev("run_started", at(0, 10)), finishedLine(at(0, 25), "retries_exhausted", 3, 0.05, tok(10, 1))}},
		{id: "fail-2", status: record.Stopped, reason: "no output for 181s (3 attempts)", exit: 3, cost: 0.06, started: at(0, 11), attempts: 3,
			timeline: []timeline.Entry{ev("run_started", at(0, 11)), finishedLine(at(0, 27), "retries_exhausted", 3, 0.06, tok(10, 1))}},
		{id: "auth-1", status: record.Failed, reason: "claude: authentication failed (401)", exit: 4, started: at(0, 1), attempts: 1, version: 8,
			timeline: []timeline.Entry{ev("run_started", at(0, 1)), finishedLine(at(0, 1), "auth", 4, 0, stream.Tokens{})}},
		{id: "wait-1", status: record.Waiting, reason: "usage limit", exit: 75, cost: 0.20, started: at(2, 0), attempts: 1,
			retryAt: time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC), limit: "five_hour", timeline: []timeline.Entry{
				ev("run_started", at(2, 0)),
				ev("limit_wait", at(2, 10), func(e *timeline.Entry) { e.RetryAt = time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC) }),
				ev("finished", at(2, 40), outcomeOf("rate_limit", 75), func(e *timeline.Entry) { e.RetryAt = time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC) }),
			}},
		{id: "run-1", status: record.Processing, cost: 0.30, started: at(7, 30), attempts: 1, transcript: runningTranscript(),
			timeline: []timeline.Entry{ev("run_started", at(7, 30))}},
		{id: "orphan-1", status: record.Processing, started: at(5, 0), attempts: 0,
			timeline: []timeline.Entry{ev("run_started", at(5, 0))}},
		{id: "hostile-1", status: record.Failed, reason: "\x1b]0;pwned\x07<script>window.pwned=1</script> | **bold** `tick`", exit: 1, started: at(4, 0), attempts: 1,
			timeline: []timeline.Entry{ev("run_started", at(4, 0)), finishedLine(at(4, 2), "error_result", 1, 0, stream.Tokens{})}},
	}
}

// nightStateDir is a state directory holding nightIssues, a damaged
// record, a folder that is not an issue and run-1 held by a live lock (its
// malarun runs). The lock is released when the test ends.
func nightStateDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, is := range nightIssues() {
		writeIssue(t, dir, is)
	}
	j, err := journal.Acquire(dir, "run-1", "pid 4242")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(j.Release)
	if err := os.MkdirAll(filepath.Join(dir, "bad-1"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad-1", journal.RecordFile), []byte(`{"issue": "bad-1", "status": `), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "not an issue\x1b[31m"), 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// validID is the supervisor's rule for issue ids, as far as these tests
// need it (the fleet package does not import the engine).
func validID(id string) error {
	if strings.HasPrefix(id, "-") {
		return fmt.Errorf("issue id %q begins with a dash", id)
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return fmt.Errorf("issue id %q holds %q", id, c)
		}
	}
	return nil
}

func scanNight(t testing.TB, dir string) Summary {
	t.Helper()
	sc, err := Scan(dir, Options{ValidID: validID, Now: nightNow})
	if err != nil {
		t.Fatal(err)
	}
	return Summarize("night", sc, time.Time{}, nightNow)
}
