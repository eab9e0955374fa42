package ui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/record"

	"github.com/malarun/malarun/internal/stream"
)

func sampleReport() Report {
	t0 := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	rep := event.Report{
		Issue: "issue-123", RunDir: "/state/issue-123/runs/r1", Record: "/state/issue-123/record.json", Attempts: 2,
		SessionID: session, Result: "done", CostUSD: 0.0105, Sessions: []string{session},
		Usage:   stream.Tokens{InputTokens: 2000, OutputTokens: 20, CacheReadInputTokens: 5},
		Started: t0, Duration: 4*time.Minute + 12*time.Second,
		History: []event.AttemptReport{
			{N: 1, Session: session, Purpose: "work", Start: t0, End: t0.Add(3 * time.Minute), Ended: "hang", Outcome: "hang", Reason: "no output | for 3m0s"},
			{N: 2, Session: session, Resume: true, Purpose: "work", Start: t0.Add(3 * time.Minute), End: t0.Add(4 * time.Minute), Ended: "exited", Outcome: "success", CostUSD: 0.0105,
				Transcript: "/state/issue-123/runs/r1/attempt-2.jsonl"},
		},
	}
	return NewReport(rep, Ending{Issue: "issue-123", Outcome: "success"})
}

func TestNewReport(t *testing.T) {
	r := sampleReport()
	if r.Version != 1 || r.AttemptsTotal != 2 || len(r.Attempts) != 2 || r.DurationMS != 252000 || r.Tokens.InputTokens != 2000 ||
		r.Attempts[0].DurationMS != 180000 || r.Attempts[1].Transcript != "/state/issue-123/runs/r1/attempt-2.jsonl" || r.Result != "done" {
		t.Errorf("report: %+v", r)
	}
	// A run that never started: arrays, not nulls, and the command line's own clock.
	t0 := time.Now()
	e := NewReport(event.Report{}, Ending{Issue: "x", Outcome: "usage", ExitCode: 2, Reason: "bad", Started: t0, Duration: time.Second})
	b, _ := json.Marshal(e)
	if !strings.Contains(string(b), `"attempts":[]`) || !strings.Contains(string(b), `"sessions":[]`) || e.DurationMS != 1000 || !e.Started.Equal(t0) {
		t.Errorf("early failure report: %s", b)
	}
	// The result text is a success's only.
	rep := event.Report{Result: "partial"}
	if r := NewReport(rep, Ending{Outcome: "error_result", ExitCode: 1}); r.Result != "" {
		t.Errorf("result on failure: %q", r.Result)
	}
}

func TestSummary(t *testing.T) {
	r := sampleReport()
	s := Summary(r)
	for _, want := range []string{
		"### ✅ malarun `issue-123` succeeded (exit 0)\n",
		"| outcome | `success`, exit code 0 |\n",
		"| attempts | 2 (1 session, 0 context restarts) |\n",
		"| cost | $0.0105 |\n",
		"| duration | 4m12s |\n",
		"| transcripts | `/state/issue-123/runs/r1/` |\n",
		"| 1 | `5fcbbccf` | 12:00:00 | 3m0s | hang | hang | $0.0000 |\n",
		"| 2 | `5fcbbccf` (resumed) | 12:03:00 | 1m0s | exited | success | $0.0105 |\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	r.ExitCode, r.Outcome, r.Reason = 3, "retries_exhausted", "claude said:\n```\n::error::boom\n```"
	s = Summary(r)
	if !strings.Contains(s, "### ❌ malarun `issue-123` stopped: retries_exhausted (exit 3)") ||
		!strings.Contains(s, "\n````text\nclaude said:\n```\n::error::boom\n```\n````\n") {
		t.Errorf("failure summary:\n%s", s)
	}
}

// Exit 75 says when to try again: retry_at (UTC) and limit_type in the
// report and the summary; both are absent from a report without them.
func TestReportRetryAt(t *testing.T) {
	at := time.Date(2026, 11, 22, 16, 57, 0, 0, time.FixedZone("CET", 3600))
	r := NewReport(event.Report{UsageLimit: record.UsageLimit{RetryAt: at, LimitType: "five_hour"}}, Ending{Issue: "i", Outcome: "rate_limit", ExitCode: 75, Reason: "usage limit"})
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"retry_at":"2026-11-22T15:57:00Z","limit_type":"five_hour"`) {
		t.Errorf("report: %s", b)
	}
	if s := Summary(r); !strings.Contains(s, "| limit | usage limit `five_hour`, retry at 2026-11-22 15:57:00 UTC |\n") {
		t.Errorf("summary:\n%s", s)
	}
	b, _ = json.Marshal(sampleReport())
	if strings.Contains(string(b), "retry_at") || strings.Contains(string(b), "limit_type") {
		t.Errorf("a report without a limit: %s", b)
	}
	if strings.Contains(Summary(sampleReport()), "| limit |") {
		t.Errorf("a summary without a limit has a limit row")
	}
}

// MCP servers an attempt started without are a row of the summary, each
// once, with its status; none, no row.
func TestSummaryNamesMCPServersNotConnected(t *testing.T) {
	r := sampleReport()
	if strings.Contains(Summary(r), "MCP") {
		t.Errorf("a run with every server connected has an MCP row:\n%s", Summary(r))
	}
	r.Attempts[0].MCPNotConnected = []stream.MCPServer{{Name: "broken", Status: "failed"}, {Name: "slow|pipe", Status: "pending"}}
	r.Attempts[1].MCPNotConnected = []stream.MCPServer{{Name: "broken", Status: "failed"}}
	want := "| MCP servers not connected | `broken` (failed), `slow\\|pipe` (pending) (the agent worked without their tools) |\n"
	if s := Summary(r); !strings.Contains(s, want) {
		t.Errorf("summary lacks %q:\n%s", want, s)
	}
}

// Costs added up in float64 print rounded to the millionth the CLI
// reports (internal/usd), not as 0.0006000000000000001.
func TestReportRoundsCosts(t *testing.T) {
	sum := 0.0001 + 0.0005
	rep := event.Report{CostUSD: sum, History: []event.AttemptReport{{N: 1, CostUSD: sum,
		Results: []attempt.Result{{Subtype: "success", CostUSD: sum}}}}}
	b, err := json.Marshal(NewReport(rep, Ending{Outcome: "success"}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "0000000") || strings.Count(string(b), `cost_usd":0.0006`) != 3 {
		t.Errorf("costs not rounded: %s", b)
	}
}
