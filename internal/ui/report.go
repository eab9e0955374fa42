package ui

import (
	"time"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/record"

	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/usd"
)

// reportVersion is the version of the --json report (docs/report.schema.json).
// It changes only when a field is renamed, removed or changes meaning;
// added fields keep it.
const reportVersion = 1

// Report is the --json report: how a run ended, in one JSON object.
type Report struct {
	Version int    `json:"version"`
	Issue   string `json:"issue"`
	Outcome string `json:"outcome"`
	// Status is the record's status word for the run's end, as `malarun
	// status` shows it (record.StatusFor): succeeded, stopped, waiting,
	// interrupted or failed.
	Status   string `json:"status"`
	ExitCode int    `json:"exit_code"`
	Reason   string `json:"reason"`
	// Result is claude's final result text on success ("" otherwise).
	Result string `json:"result"`
	// ResultTruncated says Result is only the first stream.MaxResultBytes
	// of the text: the rest could not be copied from the transcript
	// (removed, cut short or changed since). Left out when false.
	ResultTruncated bool     `json:"result_truncated,omitempty"`
	SessionID       string   `json:"session_id"`
	Sessions        []string `json:"sessions"`
	Continuations   int      `json:"continuations"`
	// AttemptsTotal counts the run's attempts, those of an earlier malarun
	// that this one continued included; Attempts lists this invocation's.
	AttemptsTotal int       `json:"attempts_total"`
	Attempts      []Attempt `json:"attempts"`
	// Reclaims counts the run's takeovers from a malarun that died (its
	// killed attempt is in AttemptsTotal); Reclaimed says this invocation
	// was one.
	Reclaims  int           `json:"reclaims"`
	Reclaimed bool          `json:"reclaimed"`
	Tokens    stream.Tokens `json:"tokens"`
	CostUSD   float64       `json:"cost_usd"`
	// ClaudeCodeVersion is the CLI's version from the last init line ("" when it did not say).
	ClaudeCodeVersion string    `json:"claude_code_version"`
	Started           time.Time `json:"started"`
	DurationMS        int64     `json:"duration_ms"`
	RunDir            string    `json:"run_dir"`
	Record            string    `json:"record"`
	// RetryAt (exit 75) is when the usage limit that stopped the run
	// resets, so an orchestrator can requeue then; absent when unknown or
	// when waiting cannot help. LimitType is the limit's kind (five_hour, ...).
	RetryAt   time.Time `json:"retry_at,omitzero"`
	LimitType string    `json:"limit_type,omitempty"`
	// OutputFailures are malarun's own outputs (stderr, the --events file)
	// that stopped taking what it wrote during this invocation: the run
	// went on, and these say from when each is incomplete.
	OutputFailures []OutputFailure `json:"output_failures,omitempty"`
	// NoResponse counts this invocation's requests the API never answered
	// that claude asked again itself; ResultsLost the results claude
	// numbered that never came (docs/design.md §D36). Absent: none.
	NoResponse  *NoResponse `json:"no_response,omitempty"`
	ResultsLost int         `json:"results_lost,omitempty"`
}

// OutputFailure is an output malarun could not write (record.json has the same).
type OutputFailure struct {
	Output string    `json:"output"`
	Error  string    `json:"error"`
	At     time.Time `json:"at"`
}

// Attempt is one claude process.
type Attempt struct {
	N          int       `json:"n"`
	Session    string    `json:"session"`
	Resume     bool      `json:"resume"`
	Purpose    string    `json:"purpose"`
	Start      time.Time `json:"start"`
	End        time.Time `json:"end"`
	DurationMS int64     `json:"duration_ms"`
	Ended      string    `json:"ended"`
	Outcome    string    `json:"outcome"`
	Reason     string    `json:"reason"`
	CostUSD    float64   `json:"cost_usd"`
	Transcript string    `json:"transcript"`
	// ClaudeCodeVersion is the CLI's version from its init line ("" when it did not say).
	ClaudeCodeVersion string `json:"claude_code_version"`
	// Results are the attempt's result lines in order; the last one decides.
	Results []Result `json:"results"`
	// CutTasks are the background tasks killed with the attempt.
	CutTasks []stream.Task `json:"cut_tasks"`
	// MCPNotConnected are the MCP servers the attempt's CLI started
	// without: their tools were missing.
	MCPNotConnected []stream.MCPServer `json:"mcp_servers_not_connected"`
	// NoResponse and ResultsLost are the attempt's (Report's).
	NoResponse  *NoResponse `json:"no_response,omitempty"`
	ResultsLost int         `json:"results_lost,omitempty"`
}

// Result is one result line of an attempt.
type Result struct {
	Subtype        string `json:"subtype"`
	IsError        bool   `json:"is_error"`
	TerminalReason string `json:"terminal_reason,omitempty"`
	APIErrorStatus int    `json:"api_error_status,omitempty"`
	// Origin says what started the turn when it was not the prompt (task-notification).
	Origin string `json:"origin,omitempty"`
	// TotalCostUSD is cumulative over the process; Tokens cover the turns since the previous result.
	TotalCostUSD float64       `json:"total_cost_usd"`
	Tokens       stream.Tokens `json:"tokens"`
	// AfterStop: printed after malarun stopped the attempt; it decided nothing.
	AfterStop bool `json:"after_stop,omitempty"`
	// What 2.1.332 says of the turn's end (docs/design.md §F37): its
	// result_index and num_turns (absent when claude did not say), the
	// turns still queued, why the turn re-ran an interrupted one, why
	// claude refused to start, and its api_error.
	ResultIndex          *int   `json:"result_index,omitempty"`
	NumTurns             *int   `json:"num_turns,omitempty"`
	QueuedTurnCount      int    `json:"queued_turn_count,omitempty"`
	ResumeReason         string `json:"resume_reason,omitempty"`
	StartupFailureReason string `json:"startup_failure_reason,omitempty"`
	APIError             string `json:"api_error,omitempty"`
}

// NoResponse counts requests the API never answered (api_retry with
// no_response): how many, what claude says it waited for their answers,
// and what they cost in all (that wait, and the time from each retry's
// line to the next line of progress).
type NoResponse struct {
	Retries  int   `json:"retries"`
	WaitedMS int64 `json:"waited_ms"`
	MS       int64 `json:"ms"`
}

func noResponse(n *event.NoResponse) *NoResponse {
	if n == nil || n.Retries == 0 {
		return nil
	}
	return &NoResponse{Retries: n.Retries, WaitedMS: n.Waited.Milliseconds(), MS: n.Cost.Milliseconds()}
}

// given is a count the CLI may leave out, as a JSON field that is absent
// then.
func given(n int, ok bool) *int {
	if !ok {
		return nil
	}
	return &n
}

// Ending is how the command line ended a run: its outcome name, exit code
// and reason (the error's text; "" on success).
type Ending struct {
	Issue    string
	Outcome  string
	ExitCode int
	Reason   string
	// Started and Duration stand in when the supervisor did not get far
	// enough to fill its Report's.
	Started  time.Time
	Duration time.Duration
	// OutputFailures are the outputs that failed, as the record has them.
	OutputFailures []record.OutputFailure
}

// NewReport builds the report of a run from the supervisor's Report.
func NewReport(rep event.Report, end Ending) Report {
	r := Report{
		Version: reportVersion, Issue: firstNonEmpty(rep.Issue, end.Issue), Outcome: end.Outcome, Status: string(record.StatusFor(outcome.Outcome(end.Outcome))), ExitCode: end.ExitCode,
		Reason: end.Reason, Result: rep.Result, SessionID: rep.SessionID, Sessions: rep.Sessions,
		Continuations: rep.Continuations, AttemptsTotal: rep.Attempts, Attempts: []Attempt{}, Reclaims: rep.Reclaims, Reclaimed: rep.Reclaimed,
		Tokens: rep.Usage, ClaudeCodeVersion: rep.ClaudeCodeVersion,
		CostUSD: usd.Round(rep.CostUSD), Started: rep.Started, DurationMS: rep.Duration.Milliseconds(),
		RunDir: rep.RunDir, Record: rep.Record, LimitType: rep.LimitType,
		NoResponse: noResponse(rep.NoResponse), ResultsLost: rep.ResultsLost,
	}
	if !rep.RetryAt.IsZero() {
		r.RetryAt = rep.RetryAt.UTC()
	}
	if end.ExitCode != 0 {
		r.Result = ""
	}
	if r.Sessions == nil {
		r.Sessions = []string{}
	}
	if r.Started.IsZero() {
		r.Started, r.DurationMS = end.Started, end.Duration.Milliseconds()
	}
	r.Started = r.Started.UTC()
	for _, a := range rep.History {
		r.Attempts = append(r.Attempts, Attempt{
			N: a.N, Session: a.Session, Resume: a.Resume, Purpose: a.Purpose, Start: a.Start.UTC(), End: a.End.UTC(),
			DurationMS: a.End.Sub(a.Start).Milliseconds(), Ended: a.Ended, Outcome: a.Outcome, Reason: a.Reason,
			CostUSD: usd.Round(a.CostUSD), Transcript: a.Transcript, ClaudeCodeVersion: a.ClaudeCodeVersion, Results: []Result{}, CutTasks: listed(a.CutTasks),
			MCPNotConnected: listed(a.MCPDown), NoResponse: noResponse(a.NoResponse), ResultsLost: a.ResultsLost,
		})
		for _, rr := range a.Results {
			last := &r.Attempts[len(r.Attempts)-1]
			last.Results = append(last.Results, Result{Subtype: rr.Subtype, IsError: rr.IsError, TerminalReason: rr.TerminalReason,
				APIErrorStatus: rr.APIErrorStatus, Origin: rr.Origin, TotalCostUSD: usd.Round(rr.CostUSD), Tokens: rr.Usage, AfterStop: rr.AfterStop,
				ResultIndex: given(rr.Index, rr.HasIndex), NumTurns: given(rr.NumTurns, rr.HasNumTurns), QueuedTurnCount: rr.QueuedTurns,
				ResumeReason: rr.ResumeReason, StartupFailureReason: rr.StartupFailure, APIError: rr.APIError})
		}
	}
	for _, f := range end.OutputFailures {
		r.OutputFailures = append(r.OutputFailures, OutputFailure{Output: f.Output, Error: f.Error, At: f.At.UTC()})
	}
	if r.AttemptsTotal < len(r.Attempts) {
		r.AttemptsTotal = len(r.Attempts)
	}
	return r
}

// listed is s, or an empty list for nil: the report lists what it
// requires, never null.
func listed[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
