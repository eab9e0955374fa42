package attempt

import (
	"slices"
	"strings"

	"github.com/malarun/malarun/internal/stream"
)

// Log accumulates what the stream of one attempt said: enough to classify
// how it ended (Classify) and to tell the run's decisions what happened.
// Like the machine it holds no clock or process; the driver feeds it every
// line.
type Log struct {
	// SessionID is the session malarun started or resumed: the CLI keeps
	// the id it is given, and an id read from the stream is never used (it
	// would become an argument of the next claude). OtherSession is the
	// first other id the stream named, if any, for a warning.
	SessionID    string
	OtherSession string
	SawInit      bool
	Lines        int64
	Malformed    int64
	CutShort     bool
	Assistants   int              // top-level and sub-agent assistant messages
	ToolCalls    []stream.ToolUse // every tool_use seen, in order
	Result       *stream.Event    // the last result line, if any: it decides
	Results      []Result         // every result line, in order
	CLIVersion   string           // claude_code_version of the init line
	// MCPDown are the MCP servers the init line lists as not connected
	// (failed, pending, ...): their tools are missing (§F28).
	MCPDown   []stream.MCPServer
	AuthRetry *stream.Event // an api_retry line reporting a 401
	RateLimit *stream.Event // a rate_limit_event that was rejected (or named an error code)
	CostUSD   float64
	LastText  string // the text of the last top-level assistant message
	// stopped: malarun decided to stop the attempt (Stopped). What the
	// stream says after that is its last words: its results decide nothing
	// (Result stays the last one before the stop), and its text is not the
	// attempt's reply; its tool calls and cost are still counted, since
	// they happened (docs/design.md §D35).
	stopped bool
	// stopAt: lines that end before it were written before the stop, and
	// are no last words (State.StopAt).
	stopAt int64
	// ResultsLost counts the results the CLI numbered (result_index,
	// 2.1.332) that never came: a gap means a result line was lost (the
	// CLI's write of it failed). The last result still decides
	// (docs/design.md §D36); the gap is named.
	ResultsLost int
	// nextIndex is the result_index the next result should carry.
	nextIndex int
	// ResumeReason is the last resume_reason a result carried: the turn
	// re-ran one a restart of the CLI's worker interrupted.
	ResumeReason string
	// rejected are the field paths of numbers the decoder dropped that
	// this attempt has warned about, so a CLI repeating one warns once.
	rejected []string
}

// Result is one result line of an attempt (an attempt's "results" in the
// --json report).
type Result struct {
	Subtype        string
	IsError        bool
	TerminalReason string
	APIErrorStatus int
	// Origin is what started the turn, when not the prompt (task-notification).
	Origin string
	// CostUSD is the process's cumulative total_cost_usd at this result.
	CostUSD float64
	// Usage covers the turns since the previous result.
	Usage stream.Tokens
	// AfterStop: read after malarun stopped the attempt; it decided nothing.
	AfterStop bool
	// Index is the CLI's result_index (HasIndex false: the CLI did not
	// number it, as 2.1.197 does not); NumTurns its num_turns.
	Index       int
	HasIndex    bool
	NumTurns    int
	HasNumTurns bool
	// QueuedTurns is queued_turn_count: more turns were still to come.
	QueuedTurns int
	// ResumeReason, StartupFailure and APIError are the result's
	// resume_reason, startup_failure_reason and api_error (2.1.332).
	ResumeReason   string
	StartupFailure string
	APIError       string
}

// NewLog starts the log of an attempt run in session.
func NewLog(session string) *Log { return &Log{SessionID: session} }

// Stopped marks the moment malarun decided to stop the attempt: lines
// observed from now on are what the CLI said while it was being stopped,
// but those that end before at (State.StopAt), written before the stop.
func (a *Log) Stopped(at int64) { a.stopped, a.stopAt = true, at }

// late reports whether a line is a last word: written after the stop.
func (a *Log) late(ev *stream.Event) bool {
	return a.stopped && ev.Offset+ev.Bytes+1 > a.stopAt
}

// Observe folds one line in.
func (a *Log) Observe(ev stream.Event) {
	a.Lines++
	switch ev.Kind {
	case stream.KindMalformed:
		a.Malformed++
		return
	case stream.KindCutShort:
		a.CutShort = true
		return
	}
	if ev.SessionID != "" && ev.SessionID != a.SessionID && a.OtherSession == "" {
		a.OtherSession = ev.SessionID
	}
	switch ev.Type {
	case "system":
		a.observeSystem(ev)
	case "rate_limit_event":
		// A rejected window that usage credits pay refused nothing
		// (isUsingOverage): kept, it would make a later crash a limit.
		if ev.RateLimitStatus == "rejected" && !ev.RateLimitUsingOverage || ev.RateLimitErrorCode != "" {
			e := ev
			a.RateLimit = &e
		}
	case "assistant":
		if ev.Model == "<synthetic>" {
			return // the CLI's own message (an API error), not the model's work
		}
		a.Assistants++
		a.ToolCalls = append(a.ToolCalls, ev.ToolUses...)
		if ev.ParentToolUseID == "" && len(ev.Texts) > 0 && !a.late(&ev) {
			a.LastText = strings.Join(ev.Texts, "\n")
		}
	case "result":
		if !a.late(&ev) {
			e := ev
			a.Result = &e
		}
		// total_cost_usd is cumulative over the process; usage covers the
		// turns since the previous result (docs/design.md §F17). A cost the
		// decoder rejected tells nothing, and 0 would undo what the process
		// already cost: the last good value stands, for the result too.
		if !ev.Rejects(stream.FieldTotalCostUSD) {
			a.CostUSD = ev.TotalCostUSD
		}
		a.observeIndex(ev)
		if ev.ResumeReason != "" {
			a.ResumeReason = ev.ResumeReason
		}
		rr := Result{Subtype: ev.Subtype, IsError: ev.IsError, TerminalReason: ev.TerminalReason,
			APIErrorStatus: ev.APIErrorStatus, Origin: ev.OriginKind, CostUSD: a.CostUSD, Usage: ev.Usage, AfterStop: a.late(&ev),
			Index: ev.ResultIndex, HasIndex: ev.HasResultIndex, NumTurns: ev.NumTurns, HasNumTurns: ev.HasNumTurns,
			QueuedTurns: ev.QueuedTurnCount, ResumeReason: ev.ResumeReason, StartupFailure: ev.StartupFailureReason, APIError: ev.APIError}
		a.Results = append(a.Results, rr)
	}
}

// observeIndex counts the results a gap in result_index says were lost. A
// process numbers its own results from 0 (a resumed session's too); an
// index at or below one already seen (a relayed result) is no gap.
func (a *Log) observeIndex(ev stream.Event) {
	if !ev.HasResultIndex {
		return
	}
	if ev.ResultIndex > a.nextIndex {
		// Both are at most stream.MaxCount: the sum stays far inside an int.
		a.ResultsLost += ev.ResultIndex - a.nextIndex
	}
	a.nextIndex = max(a.nextIndex, ev.ResultIndex+1)
}

func (a *Log) observeSystem(ev stream.Event) {
	switch ev.Subtype {
	case "init":
		a.SawInit = true
		if ev.ClaudeCodeVersion != "" {
			a.CLIVersion = ev.ClaudeCodeVersion
		}
		a.MCPDown = MCPDown(ev.MCPServers)
	case "api_retry":
		if RefusedCredentials(&ev) && a.AuthRetry == nil {
			// The first: the attempt stops on it, and the lines read
			// after it (as many as claude printed before the SIGTERM) are
			// retries that never reached the API's answer for malarun.
			e := ev
			a.AuthRetry = &e
		}
	}
}

// RefusedCredentials reports whether a line is an api_retry for refused
// credentials (a 401, or authentication_failed). The machine stops the
// attempt on it (StopAuth), so the retry it announces never happens: it is
// a failed request, not one of the CLI's retries.
func RefusedCredentials(ev *stream.Event) bool {
	return ev.Type == "system" && ev.Subtype == "api_retry" && (ev.ErrorStatus == 401 || ev.Error == "authentication_failed")
}

// Succeeded reports whether the attempt's last result was a success.
func (a *Log) Succeeded() bool {
	r := a.Result
	return r != nil && r.Subtype == "success" && !r.IsError
}

// LastReply is the agent's final text: the result text, or the text of its
// last assistant message.
func (a *Log) LastReply() string {
	if a.Result != nil && a.Result.Result != "" {
		return a.Result.Result
	}
	return a.LastText
}

// NewRejects are the numbers of ev that the decoder dropped as out of
// range and that this attempt has not reported yet: each field once, so a
// CLI repeating one is warned about once.
func (a *Log) NewRejects(ev stream.Event) []stream.Rejected {
	var out []stream.Rejected
	for _, rj := range ev.Rejected {
		if !slices.Contains(a.rejected, rj.Field) {
			a.rejected = append(a.rejected, rj.Field)
			out = append(out, rj)
		}
	}
	return out
}

// MCPDown are the servers of an init line's mcp_servers that are not
// connected (nil: none).
func MCPDown(servers []stream.MCPServer) []stream.MCPServer {
	var down []stream.MCPServer
	for _, s := range servers {
		if s.Status != "connected" {
			down = append(down, s)
		}
	}
	return down
}
