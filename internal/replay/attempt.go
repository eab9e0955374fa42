package replay

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/statefile"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/timeline"
)

// resultTextBytes and resultTextLines bound the result text in the story:
// the whole of it is in the transcript, and on stdout at the end of the run.
const (
	resultTextBytes = 4 << 10
	resultTextLines = 20
)

// attemptReader reads one attempt's transcript as the story reaches it.
type attemptReader struct {
	info    Attempt
	path    string
	f       *os.File
	dec     *stream.Decoder
	next    int64 // where the transcript's next line begins
	missing bool  // the transcript cannot be read: said once
	ended   bool  // attempt_ended was told
	// calls are the tool calls without a result yet: name and when it was
	// read; tasks, the background tasks running, by id. Both shrink as
	// results come, so they hold what runs at once, not the run's history.
	calls    map[string]call
	tasks    map[string]time.Time
	hooks    map[string]time.Time // running hooks' start times, by hook_id
	costBase float64              // the run's cost before this attempt
}

type call struct {
	name string
	at   time.Time
}

func (a *attemptReader) close() {
	if a.f != nil {
		a.f.Close()
		a.f = nil
	}
}

func (a *attemptReader) taskStarted(id string, at time.Time) { a.tasks[id] = at }

// taskFinished is how long the task ran, in ms (0 when unknown).
func (a *attemptReader) taskFinished(id string, at time.Time) int64 {
	began, ok := a.tasks[id]
	delete(a.tasks, id)
	if !ok || began.IsZero() || at.IsZero() {
		return 0
	}
	return at.Sub(began).Milliseconds()
}

// startAttempt tells an attempt's start and its prompt.
func (w *walk) startAttempt(it *Item, began string) error {
	n := it.Attempt
	if n < 1 || w.attempts[n] != nil {
		return nil // not an entry malarun writes, or said twice: skipped
	}
	info := Attempt{N: n, Began: began, Pid: it.Pid, Started: it.Time}
	if it.Info != nil {
		info.Session = it.Info.Session
	}
	a := &attemptReader{info: info, path: filepath.Join(w.src.RunDir, fmt.Sprintf("attempt-%d.jsonl", n)),
		calls: map[string]call{}, tasks: map[string]time.Time{}, hooks: map[string]time.Time{}, costBase: w.runCost}
	name, text, size, perr := promptOf(w.src.RunDir, n)
	a.info.Prompt = name
	w.attempts[n] = a
	w.order = append(w.order, n)
	w.current = n
	info = a.info
	it.Info = &info
	if err := w.emit(it); err != nil {
		return err
	}
	if perr != nil {
		return w.note(n, "the prompt of attempt %d cannot be read: %v", n, perr)
	}
	return w.emit(&Item{Kind: KindPrompt, Attempt: n, Time: it.Time, Text: text, Bytes: size, Path: name})
}

// endAttempt tells an attempt's end: with its timeline entry, how and why;
// without one, what its results say.
func (w *walk) endAttempt(n int, at time.Time, e *timeline.Entry) error {
	a := w.attempts[n]
	a.ended = true
	a.close()
	a.info.Ended = at
	if !at.IsZero() && !a.info.Started.IsZero() {
		a.info.DurationMS = at.Sub(a.info.Started).Milliseconds()
	}
	if e != nil {
		a.info.Outcome, a.info.Reason, a.info.ExitCode = e.Outcome, e.Reason, e.ExitCode
		a.info.NoResponse, a.info.ResultsLost = e.NoResponse, e.ResultsLost
	}
	w.sum.CostUSD = w.runCost
	info := a.info
	return w.emit(&Item{Kind: event.AttemptEnded, Attempt: n, Time: at, Outcome: info.Outcome, Reason: info.Reason, Info: &info})
}

// lines tells attempt a's transcript lines up to the one that begins at
// upTo, which was read at time at (upTo -1: to the end of the file). Only
// lines that are whole are read: a timeline entry names a line malarun had
// read, and the transcript is read to its end only once the attempt is
// over or when no more is coming.
func (w *walk) lines(a *attemptReader, upTo int64, at time.Time) error {
	if a.missing {
		return nil
	}
	if a.dec == nil {
		if a.ended {
			return nil
		}
		f, err := statefile.Open(a.path)
		if err != nil {
			a.missing = true
			if errors.Is(err, os.ErrNotExist) {
				return w.note(a.info.N, "the transcript of attempt %d is gone (%s)", a.info.N, filepath.Base(a.path))
			}
			return w.note(a.info.N, "the transcript of attempt %d cannot be read: %v", a.info.N, err)
		}
		a.f, a.dec = f, stream.NewDecoder(f)
		a.dec.KeepToolResults()
	}
	for upTo < 0 || a.next <= upTo {
		ev, err := a.dec.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			a.missing = true
			return w.note(a.info.N, "reading the transcript of attempt %d: %v", a.info.N, err)
		}
		a.next = ev.Offset + ev.Bytes + 1
		var t time.Time
		if ev.Offset == upTo {
			t = at
		}
		if err := w.line(a, &ev, t); err != nil {
			return err
		}
	}
	return nil
}

// line tells one transcript line.
func (w *walk) line(a *attemptReader, ev *stream.Event, at time.Time) error {
	a.info.Lines++
	n := a.info.N
	base := Item{Attempt: n, Time: at, Line: ev.Line, Agent: ev.ParentToolUseID}
	if ev.Kind != stream.KindJSON {
		if ev.Kind == stream.KindCutShort && !a.ended {
			return nil // being written, or cut by a crash: the attempt's end says which
		}
		a.info.Damaged++
		return w.note(n, "line %d of attempt %d is %s (%d bytes)", ev.Line, n, ev.Kind, ev.Bytes)
	}
	switch ev.Type {
	case "system":
		switch ev.Subtype {
		case "init":
			a.info.CLIVersion, a.info.Model = ev.ClaudeCodeVersion, ev.Model
			if a.info.Session == "" {
				a.info.Session = ev.SessionID
			}
			for _, s := range ev.MCPServers {
				if s.Status == "connected" {
					continue
				}
				// %q: the names are the user's configuration, quoted as they are.
				if err := w.note(n, "MCP server %q was %s when attempt %d began: the agent worked without its tools", s.Name, s.Status, n); err != nil {
					return err
				}
			}
		case "hook_started":
			if len(a.hooks) < stream.MaxListItems {
				a.hooks[ev.HookID] = at
			}
		case "hook_response":
			return w.hookEnded(a, ev, base)
		case "api_retry":
			if w.tl == nil { // with a timeline, malarun's api_retry entry says it
				it := base
				it.Kind, it.Reason = event.APIRetry, fmt.Sprintf("API status %d %s (retry %d of %d)", ev.ErrorStatus, ev.Error, ev.Attempt, ev.MaxRetries)
				it.BackoffMS = int64(ev.RetryDelayMS)
				return w.emit(&it)
			}
		}
	case "assistant":
		return w.assistant(a, ev, base)
	case "user":
		for _, d := range ev.ToolResultDetails {
			c, ok := a.calls[d.ToolUseID]
			delete(a.calls, d.ToolUseID)
			a.info.ToolResults++
			it := base
			it.Kind, it.Tool, it.ToolID, it.IsError = KindToolResult, c.name, d.ToolUseID, d.IsError
			it.Bytes, it.Head, it.Tail, it.Images = d.Bytes, d.Head, d.Tail, d.Images
			if ok && !c.at.IsZero() && !at.IsZero() {
				it.TookMS = at.Sub(c.at).Milliseconds()
			}
			if err := w.emit(&it); err != nil {
				return err
			}
		}
	case "result":
		a.info.Results++
		a.info.CostUSD = ev.TotalCostUSD // the CLI's total for its process so far
		a.info.Tokens = a.info.Tokens.Add(ev.Usage)
		w.sum.Tokens = w.sum.Tokens.Add(ev.Usage)
		w.runCost = a.costBase + ev.TotalCostUSD
		w.setWindow(ev.ContextWindow)
		it := base
		it.Kind, it.Subtype, it.IsError, it.CostUSD, it.RunCostUSD = KindResult, ev.Subtype, ev.IsError, ev.TotalCostUSD, w.runCost
		it.Text = firstLines(validUTF8([]byte(ev.Result[:min(len(ev.Result), resultTextBytes)])), resultTextLines)
		if ev.ResultTruncated || len(it.Text) < len(ev.Result) {
			it.Text += "\n…"
		}
		tk := ev.Usage
		it.Tokens = &tk
		if !a.ended && a.info.Outcome == "" && w.tl == nil {
			a.info.Outcome = "result " + ev.Subtype
		}
		return w.emit(&it)
	}
	return nil
}

// hookEnded tells a hook that ended (§F27): its name, outcome, exit code
// and, with the timeline's times, how long it ran. A hook cut off never
// ends here: the hang's tools_running names it.
func (w *walk) hookEnded(a *attemptReader, ev *stream.Event, base Item) error {
	started, ok := a.hooks[ev.HookID]
	delete(a.hooks, ev.HookID)
	it := base
	it.Kind, it.Hook, it.Outcome = KindHook, ev.HookName, ev.HookOutcome
	it.IsError = ev.HookOutcome != "success" || ev.HasHookExitCode && ev.HookExitCode != 0
	if ev.HasHookExitCode {
		code := ev.HookExitCode
		it.ExitCode = &code
	}
	if ok && !started.IsZero() && !base.Time.IsZero() {
		it.TookMS = base.Time.Sub(started).Milliseconds()
	}
	return w.emit(&it)
}

// assistant tells an assistant message: its text blocks and tool calls.
// The first item carries the context occupancy after the message.
func (w *walk) assistant(a *attemptReader, ev *stream.Event, base Item) error {
	if ev.HasUsage && ev.ParentToolUseID == "" {
		base.Occupancy, base.Window = ev.Usage.Occupancy(), w.window
	}
	for _, text := range ev.Texts {
		if strings.TrimSpace(text) == "" {
			continue
		}
		it := base
		it.Kind, it.Text = KindText, text
		if err := w.emit(&it); err != nil {
			return err
		}
		base.Occupancy, base.Window = 0, 0
	}
	for _, tu := range ev.ToolUses {
		a.info.ToolCalls++
		a.calls[tu.ID] = call{name: tu.Name, at: base.Time}
		it := base
		it.Kind, it.Tool, it.ToolID, it.Background = KindToolCall, tu.Name, tu.ID, tu.Background
		it.Summary = describe(tu.Name, tu.Input)
		if it.Summary == "" {
			it.Input = tu.Input
			if tu.InputTruncated {
				it.Input += "…"
			}
		}
		if err := w.emit(&it); err != nil {
			return err
		}
		base.Occupancy, base.Window = 0, 0
	}
	return nil
}
