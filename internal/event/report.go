package event

import (
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/stream"
)

// Report says what a run did; it is returned with or without an error.
type Report struct {
	Issue  string
	RunDir string
	Record string // the issue's record.json
	// Attempts are the run's attempts: this invocation's and those of the
	// malaruns it continued (History has this invocation's).
	Attempts int
	// Reclaims are the run's takeovers from a malarun that died; Reclaimed
	// says this invocation was one.
	Reclaims  int
	Reclaimed bool
	SessionID string
	// Result is the last result's text on success, as the decoder kept it:
	// at most stream.MaxResultBytes (the step summary and a checkpoint use
	// it). ResultCut says the text was longer; the whole of it is in the
	// transcript, at ResultLine (transcript.ReadResult copies it from there).
	Result     string
	ResultCut  bool
	ResultLine stream.LineRef
	CostUSD    float64
	// History has one entry per attempt of this invocation.
	History       []AttemptReport
	Sessions      []string
	Continuations int
	Usage         stream.Tokens // summed over the result lines of every attempt
	// ClaudeCodeVersion is the CLI's version from its last init line ("" if none came).
	ClaudeCodeVersion string
	Started           time.Time
	Duration          time.Duration
	// UsageLimit (exit 75) is the usage limit that stopped the run: when it
	// resets (RetryAt; zero: unknown, or waiting cannot help) and its kind.
	record.UsageLimit
	// NoResponse and ResultsLost are this invocation's attempts' (nil, 0:
	// none): requests the API never answered that claude asked again, and
	// results claude numbered that never came (docs/design.md §D36).
	NoResponse  *NoResponse
	ResultsLost int
}

// AttemptReport is how one attempt went (its JSON form is ui.Attempt).
type AttemptReport struct {
	N       int
	Session string
	Resume  bool
	Purpose string // work or checkpoint
	Start   time.Time
	End     time.Time
	Ended   string // why the process stopped (attempt.StopReason): exited, hang, lingered, ...
	Outcome string // how the attempt ended (attempt.Ending): success, hang, crash, ...
	Reason  string
	CostUSD float64
	// ClaudeCodeVersion is the CLI's claude_code_version ("" before 2.1.330 or without an init line).
	ClaudeCodeVersion string
	// Results are the attempt's result lines, in order: a CLI that waits for
	// background tasks prints one per turn; the last one decides.
	Results []attempt.Result
	// CutTasks are the background tasks that were running when the attempt was stopped.
	CutTasks []stream.Task
	// MCPDown are the MCP servers its CLI started without (not connected).
	MCPDown []stream.MCPServer
	// Transcript is the attempt's raw stream (attempt-N.jsonl).
	Transcript string
	// NoResponse and ResultsLost are the attempt's (Report's).
	NoResponse  *NoResponse
	ResultsLost int
}
