package supervisor

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/run"
	"github.com/malarun/malarun/internal/stream"
)

// encodingWriter saves a record only as far as encoding it: a record that
// cannot be encoded (a non-finite cost, a year past 9999, a field the
// checks refuse) is the bug FuzzRecordFromStream looks for.
type encodingWriter struct {
	t     *testing.T
	saved int
}

func (w *encodingWriter) Save(r record.Record) error { return w.SaveQuick(r) }

func (w *encodingWriter) SaveQuick(r record.Record) error {
	w.t.Helper()
	b, err := record.Encode(r)
	if err != nil {
		w.t.Fatalf("a stream made a record that cannot be saved: %v\n%+v", err, r)
	}
	back, err := record.Decode(b)
	if err != nil {
		w.t.Fatalf("a saved record does not read back: %v\n%s", err, b)
	}
	if !record.ValidUSD(back.CostUSD) || !record.ValidUSD(back.TotalCostUSD) {
		t := back
		w.t.Fatalf("costs %g, %g", t.CostUSD, t.TotalCostUSD)
	}
	w.saved++
	return nil
}

// FuzzRecordFromStream: whatever claude prints, the record malarun builds
// from it can be saved and read back. Each input is a stream, fed as a run
// feeds it (progress, how the attempt ended, the run's next step, a usage
// limit, the end of the run), twice over so that sums carry from
// one attempt to the next; every save is encoded and decoded.
func FuzzRecordFromStream(f *testing.F) {
	for _, path := range transcriptFiles(f) {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(0))
	}
	for _, s := range []string{
		`{"type":"result","subtype":"success","is_error":false,"total_cost_usd":1e308}`,
		`{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"Claude AI usage limit reached|99999999999999"}`,
		`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1.7e12,"rateLimitType":"five_hour"}}`,
		`{"type":"system","subtype":"api_retry","retry_delay_ms":1e300,"error_status":429}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"x","name":"Bash","input":{"command":"\u001b]0;t\u0007"}}],"usage":{"input_tokens":-5}},"session_id":"--dangerously-skip-permissions"}`,
		`{"type":"system","subtype":"background_tasks_changed","tasks":[{"task_id":"b","description":"\ud800"}]}`,
	} {
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, how uint8) {
		w := &encodingWriter{t: t}
		now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
		r := fuzzRunner(t, w, now)
		for range 2 {
			res := fuzzAttempt(r, data, how, now)
			var act run.Action
			r.state, act = run.Next(r.policy, r.state, r.endedOf(res), now, run.Draws{NewSession: newSessionID(), Jitter: 0.5})
			r.rec.attemptDecided(res)
			if err := r.rec.save(); err != nil {
				t.Fatal(err)
			}
			if act.Kind == run.End {
				var err error
				if !act.Succeeded() {
					err = &RunError{Kind: act.Outcome, Detail: act.Reason}
				}
				if err := r.finishRecord(err); err != nil {
					t.Fatal(err)
				}
				break
			}
		}
		if w.saved == 0 {
			t.Fatal("nothing was saved")
		}
	})
}

// fuzzRunner is a runner whose record starts as a new run's does.
func fuzzRunner(t *testing.T, w RecordWriter, now time.Time) *runner {
	cfg := DefaultConfig()
	cfg.IssueID, cfg.StateDir, cfg.LimitWait = "issue-1", "/state", time.Hour
	id := journal.NewRunID(now)
	r := newRunner(cfg, Deps{ExitCode: func(err error) int {
		if errors.Is(err, outcome.Interrupted) {
			return 130
		}
		if err != nil {
			return 1
		}
		return 0
	}}, zerolog.Nop(), prompts{}, now)
	r.rec.records = w
	r.rec.base = record.Record{Issue: cfg.IssueID, Status: record.Processing, Cwd: "/work", Home: "/home/u",
		RunID: id, RunDir: filepath.Join("/state/issue-1/runs", id), Runs: []string{id},
		SessionID: newSessionID(), Marker: cfg.IssueID + "/" + id, StartedAt: now,
		TotalCostUSD: math.Nextafter(record.MaxUSD/2, 0)} // an issue with a long, costly past
	r.folder.dir = r.rec.base.RunDir
	r.rec.facts = openFacts(r.rec.base, record.Owner{}, record.TraceRef{})
	r.state, _ = run.Begin(r.policy, run.Beginning{FirstAttempt: 1, Record: run.Recorded{SessionID: r.rec.base.SessionID}}, now, run.Draws{})
	r.rec.facts.began = true
	return r
}

// fuzzAttempt feeds one attempt's stream as runAttempt does, ending it as
// how says.
func fuzzAttempt(r *runner, data []byte, how uint8, now time.Time) *attemptResult {
	spec := run.Attempt{N: 1, SessionID: r.rec.base.SessionID, Resume: how&1 != 0, Checkpoint: how&2 != 0}
	res := &attemptResult{spec: spec, log: attempt.NewLog(spec.SessionID), started: now, ended: now.Add(time.Minute)}
	r.rec.facts.attemptStarted(spec, 4242, 1, now)
	m := attempt.New(attempt.Limits{Idle: time.Minute, Tool: time.Hour, Background: time.Hour, Linger: time.Second,
		LimitWaitLeft: time.Hour}, now)
	d := stream.NewDecoder(bytes.NewReader(data))
	for {
		ev, err := d.Next()
		if errors.Is(err, io.EOF) || err != nil {
			break
		}
		res.log.Observe(ev)
		res.log.NewRejects(ev)
		pressure := r.lines.observeContext(r.log, ev)
		m.Step(attempt.Input{Kind: attempt.Line, Event: ev, Pressure: pressure}, now)
		r.rec.progress(ev, m)
	}
	endings := []attempt.Input{{Kind: attempt.StreamEnd}, {Kind: attempt.Wake}, {Kind: attempt.Interrupt}}
	m.Step(endings[int(how>>2)%len(endings)], now.Add(2*time.Hour))
	res.machine, res.stop = m, m.FinalStop()
	return res
}

// transcriptFiles are the recorded transcripts, the seeds of the stream fuzzers.
func transcriptFiles(f *testing.F) []string {
	var out []string
	for _, pattern := range []string{"../../testdata/transcripts/*.jsonl", "../../testdata/transcripts/*/*.jsonl"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) == 0 {
		f.Fatal("no transcripts found")
	}
	return out
}
