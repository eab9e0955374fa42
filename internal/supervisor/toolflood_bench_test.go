package supervisor

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/run"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/ui"
)

// floodSession is the session of the flood's lines.
const floodSession = "5fcbbccf-06da-4fd6-8405-d704e7fbd2c7"

// floodLines is a CLI that printed n tool calls (a Bash call a line, as
// the CLI prints a message's blocks) after its init line, decoded as the
// follower decodes them; answered adds, after all of them, a result for
// each, in call order.
func floodLines(tb testing.TB, n int, answered bool) []stream.Event {
	tb.Helper()
	var buf bytes.Buffer
	fmt.Fprintf(&buf, `{"type":"system","subtype":"init","session_id":%q,"model":"claude-sonnet-4-5","claude_code_version":"2.1.332","tools":["Bash"],"mcp_servers":[]}`+"\n", floodSession)
	for i := range n {
		fmt.Fprintf(&buf, `{"type":"assistant","message":{"id":"msg_%d","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_%06d","name":"Bash","input":{"command":"sleep 600 # call %d"}}],"usage":{"input_tokens":10,"output_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":1000}},"session_id":%q,"parent_tool_use_id":null}`+"\n",
			i, i, i, floodSession)
	}
	for i := range n {
		if !answered {
			break
		}
		fmt.Fprintf(&buf, `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%06d","content":"done"}]},"session_id":%q,"parent_tool_use_id":null}`+"\n", i, floodSession)
	}
	d := stream.NewDecoder(&buf)
	var evs []stream.Event
	for {
		ev, err := d.Next()
		if errors.Is(err, io.EOF) {
			return evs
		}
		if err != nil {
			tb.Fatal(err)
		}
		evs = append(evs, ev)
	}
}

// floodDriver is an attempt driver as runAttempt makes one, with what the
// line path reaches on disk: the issue's journal (its saves), the run
// folder's timeline, and the observers of a run with --events (the status
// line and the events file, written to nowhere).
func floodDriver(tb testing.TB) (*attemptDriver, func()) {
	tb.Helper()
	state := tb.TempDir()
	j, err := journal.Acquire(state, "issue-1", "bench")
	if err != nil {
		tb.Fatal(err)
	}
	now := time.Now()
	cfg := DefaultConfig()
	cfg.IssueID, cfg.StateDir = "issue-1", state
	id := journal.NewRunID(now)
	runDir := filepath.Join(j.Dir(), "runs", id)
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		tb.Fatal(err)
	}
	status, events := ui.NewStatus(cfg.IssueID, cfg.MaxAttempts), ui.NewEventLog(io.Discard)
	r := newRunner(cfg, Deps{Observer: func(e event.Event) { status.Apply(e); events.Event(e) }},
		zerolog.New(io.Discard).Level(zerolog.InfoLevel), prompts{}, now)
	r.rec.journal, r.rec.records = j, j
	r.rec.base = record.Record{Issue: cfg.IssueID, Status: record.Processing, Cwd: "/work", Home: "/home/u",
		RunID: id, RunDir: runDir, Runs: []string{id}, Marker: cfg.IssueID + "/" + id, StartedAt: now}
	r.folder.dir = runDir
	r.rec.facts = openFacts(r.rec.base, record.Owner{Pid: os.Getpid(), Host: "bench", StartedAt: now}, record.TraceRef{})
	r.state, _ = run.Begin(r.policy, run.Beginning{FirstAttempt: 1}, now, run.Draws{NewSession: floodSession})
	r.rec.facts.began = true
	spec := run.Attempt{N: 1, SessionID: floodSession}
	r.rec.facts.attemptStarted(spec, 4242, 1, now)
	if err := r.rec.save(); err != nil {
		tb.Fatal(err)
	}
	res := &attemptResult{spec: spec, log: attempt.NewLog(spec.SessionID), started: now}
	d := &attemptDriver{r: r, res: res, log: r.log, m: attempt.New(r.attemptLimits(false), now), timer: time.NewTimer(time.Hour)}
	return d, func() {
		d.timer.Stop()
		if r.folder.timeline != nil {
			r.folder.timeline.Close()
		}
		j.Release()
	}
}

// cpuTime is the process's CPU time so far, user and system: what a
// line costs malarun, its garbage collection and its system calls
// included.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkOpenToolCalls is malarun's CPU for a CLI that prints n tool
// calls and waits on all of them (issue 47: each line re-encoded and saved
// the whole list of running calls, quadratic), through the supervisor's
// line path: the timeline, the log, the context, the attempt machine, the
// events and the record's saves. "answered" adds the n results after the
// calls. "machine" is the attempt machine alone on the same lines (its
// own per-line list work, docs/design.md §D37). cpu-s/op is the process's
// CPU time (user and system) per n lines.
func BenchmarkOpenToolCalls(b *testing.B) {
	for _, n := range []int{2500, 20000} {
		for _, how := range []string{"open", "answered"} {
			b.Run(fmt.Sprintf("calls=%d/%s", n, how), func(b *testing.B) {
				lines := floodLines(b, n, how == "answered")
				b.Run("supervisor", func(b *testing.B) { benchLinePath(b, lines) })
				b.Run("machine", func(b *testing.B) { benchMachine(b, lines) })
			})
		}
	}
}

// benchLinePath feeds lines through the driver's line path (onLine).
func benchLinePath(b *testing.B, lines []stream.Event) {
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		d, done := floodDriver(b)
		b.StartTimer()
		before := cpuTime(b)
		for _, ev := range lines {
			d.onLine(ev)
		}
		cpu += cpuTime(b) - before
		b.StopTimer()
		done()
		b.StartTimer()
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}

// benchMachine feeds the same lines to the attempt machine alone.
func benchMachine(b *testing.B, lines []stream.Event) {
	var cpu time.Duration
	now := time.Now()
	for b.Loop() {
		m := attempt.New(attempt.Limits{Idle: time.Minute, Tool: time.Hour, Background: time.Hour, Linger: time.Hour}, now)
		before := cpuTime(b)
		for i := range lines {
			m.Step(attempt.Input{Kind: attempt.Line, Event: lines[i]}, now)
		}
		cpu += cpuTime(b) - before
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}
