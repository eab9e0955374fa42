package supervisor

import (
	"slices"
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/run"
	"github.com/malarun/malarun/internal/stream"
)

// runFacts are what the driver knows of the run and the pure code cannot:
// this malarun (its owner and trace), the run's cgroup, the outputs that
// failed, what the stream said that the record keeps, and the attempt
// running now (its session, process tree, start time and calls in
// flight). How the run stands (its status, limit, reclaims, what was cut
// off, its end) is the run's own (run.State.Standing). The driver keeps
// these as things happen; record (record.go) projects the plan's record,
// the run's state and these into the record, and nothing else writes a
// record field (issue 39).
type runFacts struct {
	owner record.Owner
	trace record.TraceRef
	// cgroup is the run's cgroup, as the record names it (nil: none, or
	// removed); cgroupLeft: this malarun is done with it, but could not
	// remove it, so the record names it for the next malarun of the issue.
	cgroup     *proc.Cgroup
	cgroupLeft bool
	// outputFailures are malarun's outputs that failed, once each.
	outputFailures []record.OutputFailure
	noted          map[string]bool
	answered       bool // the API answered in this invocation
	// mcpDown is the last attempt's init line's MCP servers not connected
	// (mcpSeen: an init line came).
	mcpDown  []stream.MCPServer
	mcpSeen  bool
	sessions []string
	// began: the run's decision state is set (run.Begin ran): the record
	// takes its numbers from it from then on.
	began bool
	// attempt is the attempt running now (nil: none).
	attempt *attemptFacts
	// resultsLost, noResponse and resumeReason are the run's so far, its
	// earlier malarun's included (docs/design.md §D36).
	resultsLost  int
	noResponse   record.NoResponse
	resumeReason string
}

// attemptFacts are what a later malarun needs if this one dies in the
// middle of the attempt.
type attemptFacts struct {
	session string
	resume  bool
	talked  bool           // the session got an assistant message in this attempt
	calls   map[string]int // calls with side effects in this attempt, by tool
	// inFlight are the first record.MaxInFlight calls and tasks in
	// flight, and how many more.
	inFlight record.InFlight
	tree     []record.ProcRef
	started  time.Time
}

// openFacts are the facts of a run as this malarun takes it.
func openFacts(base record.Record, owner record.Owner, trace record.TraceRef) runFacts {
	return runFacts{owner: owner, trace: trace, outputFailures: base.OutputFailures, sessions: base.Sessions,
		resultsLost: base.ResultsLost, noResponse: base.NoResponse, resumeReason: base.ResumeReason}
}

// attemptStarted notes an attempt's session and process before it
// produces anything, so a malarun killed from here on can be followed by
// one that resumes this session and ends this process.
func (f *runFacts) attemptStarted(spec run.Attempt, pid int, startTime uint64, now time.Time) {
	a := &attemptFacts{session: spec.SessionID, resume: spec.Resume, started: now.UTC()}
	if startTime != 0 {
		// A pid is recorded only with its start time (unknown if /proc could
		// not be read): the marker still finds the process.
		a.tree = []record.ProcRef{{Pid: pid, StartTime: startTime}}
	}
	if len(f.sessions) == 0 || f.sessions[len(f.sessions)-1] != spec.SessionID {
		f.sessions = append(slices.Clone(f.sessions), spec.SessionID)
	}
	f.attempt = a
}

// progress takes in what a line of the running attempt changed, and
// reports whether the record is worth a save now: it changed in what a
// later malarun decides on or names (the session talked, a tool with side
// effects ran for the first time, the calls and tasks a prompt would
// name), or a count that changed alone reached a power of two (worthASave).
func (f *runFacts) progress(ev *stream.Event, now inFlight, answered bool, sideEffectFree map[string]bool) bool {
	a := f.attempt
	changed := false
	if answered && !f.answered {
		f.answered, changed = true, true
	}
	if ev.Type == "system" && ev.Subtype == "init" {
		if down := attempt.MCPDown(ev.MCPServers); !f.mcpSeen || !slices.Equal(down, f.mcpDown) {
			f.mcpDown, f.mcpSeen, changed = down, true, true
		}
	}
	if a == nil {
		return changed
	}
	if ev.Type == "assistant" && ev.Model != "<synthetic>" && !a.talked {
		a.talked, changed = true, true
	}
	for _, tu := range ev.ToolUses {
		if !sideEffectFree[tu.Name] {
			if a.calls == nil {
				a.calls = map[string]int{}
			}
			a.calls[tu.Name]++
			changed = changed || worthASave(a.calls[tu.Name])
		}
	}
	// The first calls and tasks in flight, compared where they are: a line
	// costs the same however many are open (docs/design.md §D37).
	in := &a.inFlight
	calls, more := record.Named(now.calls, now.callsMore)
	if !sameCalls(in.Running, calls) {
		in.Running, changed = kept(calls), true
	}
	if more != in.RunningMore {
		in.RunningMore, changed = more, changed || worthASave(more)
	}
	tasks, more := record.Named(now.tasks, 0)
	if !slices.Equal(in.Tasks, tasks) {
		in.Tasks, changed = kept(tasks), true
	}
	if more != in.TasksMore {
		in.TasksMore, changed = more, changed || worthASave(more)
	}
	return changed
}

// inFlight is what runs now, as the attempt machine gives it: the first
// calls without a result and how many more, and the background tasks.
type inFlight struct {
	calls     []stream.ToolUse
	callsMore int
	tasks     []stream.Task
}

// worthASave reports whether a count that changed alone (a tool's calls
// with side effects, the calls or tasks in flight beyond those named) is
// saved at n: at 0 and at every power of two. A CLI that opens thousands
// of calls costs a number of saves logarithmic in them, not one a line
// (each encodes the whole record), and a malarun that dies meanwhile
// leaves each count within a factor of two of the truth; any save writes
// every count as it is (docs/design.md §D37).
func worthASave(n int) bool { return n&(n-1) == 0 }

// attemptDecided ends the attempt's facts once the run decided what
// follows it: run.State now holds what it did and what it cut off (kept
// for a malarun that dies before the next starts).
func (f *runFacts) attemptDecided(told attemptTold) {
	f.attempt = nil
	// Bounded as the record's check wants them, whatever the CLI printed.
	f.resultsLost = min(f.resultsLost+told.resultsLost, maxRecordedCount)
	n := told.noResponse
	f.noResponse = record.NoResponse{Retries: min(f.noResponse.Retries+n.Retries, maxRecordedCount),
		WaitedMS: min(f.noResponse.WaitedMS+n.Waited.Milliseconds(), maxRecordedMS),
		MS:       min(f.noResponse.MS+n.Cost.Milliseconds(), maxRecordedMS)}
	f.noResponse.WaitedMS = min(f.noResponse.WaitedMS, f.noResponse.MS)
	if told.resumeReason != "" {
		f.resumeReason = record.RecordWord(told.resumeReason)
	}
}

// sameCalls reports whether the record's calls are calls, in what the
// record keeps of a call (its name and input: stream.ToolUse's JSON).
func sameCalls(recorded, calls []stream.ToolUse) bool {
	return slices.EqualFunc(recorded, calls, func(a, b stream.ToolUse) bool { return a.Name == b.Name && a.Input == b.Input })
}

// kept is a copy of what the machine has in flight, for the record: the
// machine changes its own (nil: none).
func kept[T any](items []T) []T {
	if len(items) == 0 {
		return nil
	}
	return slices.Clone(items)
}

// attemptTold is what an attempt's stream said that the record keeps
// over the run.
type attemptTold struct {
	resultsLost  int
	noResponse   attempt.NoResponses
	resumeReason string
}

// maxRecordedCount and maxRecordedMS keep the record's sums within what
// its check accepts (journal: counts up to 2^30, durations up to a century).
const (
	maxRecordedCount = 1 << 30
	maxRecordedMS    = 100 * 365 * 24 * 3600 * 1000
)

// noteOutputs adds the outputs that failed, once each, keeping the last
// record.MaxOutputFailures (over as many invocations as resume the run).
func (f *runFacts) noteOutputs(failed []record.OutputFailure) {
	for _, o := range failed {
		if f.noted[o.Output] {
			continue
		}
		if f.noted == nil {
			f.noted = map[string]bool{}
		}
		f.noted[o.Output] = true
		f.outputFailures = append(slices.Clone(f.outputFailures), o)
		if n := len(f.outputFailures); n > record.MaxOutputFailures {
			f.outputFailures = f.outputFailures[n-record.MaxOutputFailures:]
		}
	}
}

// cgroupInUse is the run's cgroup while this malarun starts claude in it
// (nil: none, or done with it).
func (f *runFacts) cgroupInUse() *proc.Cgroup {
	if f.cgroupLeft {
		return nil
	}
	return f.cgroup
}

// cgroupPath is the cgroup the record names ("": none).
func (f *runFacts) cgroupPath() string {
	if f.cgroup == nil {
		return ""
	}
	return f.cgroup.Path
}
