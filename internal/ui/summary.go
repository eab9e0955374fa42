package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/stream"
)

// Summary is the Markdown a GitHub Actions job page shows for a run
// (appended to $GITHUB_STEP_SUMMARY): the outcome, a table of the
// attempts, the cost and where the transcripts are. Text from the model
// (the reason) goes in a fenced block; table cells are escaped.
func Summary(r Report) string {
	var b strings.Builder
	mark := "✅"
	what := EndWord(r.Outcome)
	if r.ExitCode != 0 {
		mark = "❌"
	}
	fmt.Fprintf(&b, "### %s malarun %s %s (exit %d)\n\n", mark, code(r.Issue), what, r.ExitCode)
	b.WriteString("| | |\n| --- | --- |\n")
	row := func(k, v string) { fmt.Fprintf(&b, "| %s | %s |\n", k, v) }
	row("outcome", fmt.Sprintf("%s, exit code %d", code(r.Outcome), r.ExitCode))
	attempts := fmt.Sprintf("%d (%s, %s", r.AttemptsTotal, Plural(len(r.Sessions), "session"), Plural(r.Continuations, "context restart"))
	if r.Reclaims > 0 {
		attempts += ", " + Plural(r.Reclaims, "takeover") + " from a malarun that died"
	}
	row("attempts", attempts+")")
	if r.LimitType != "" || !r.RetryAt.IsZero() {
		limit := "usage limit"
		if r.LimitType != "" {
			limit += " " + code(r.LimitType)
		}
		if !r.RetryAt.IsZero() {
			limit += ", retry at " + r.RetryAt.UTC().Format("2006-01-02 15:04:05 UTC")
		} else {
			limit += ", reset time unknown"
		}
		row("limit", limit)
	}
	if down := mcpDown(r.Attempts); down != "" {
		row("MCP servers not connected", down+" (the agent worked without their tools)")
	}
	row("cost", Cost(r.CostUSD))
	row("duration", Duration(time.Duration(r.DurationMS)*time.Millisecond))
	row("tokens", fmt.Sprintf("%s input, %s output, %s cache write, %s cache read",
		Tokens(r.Tokens.InputTokens), Tokens(r.Tokens.OutputTokens), Tokens(r.Tokens.CacheCreationInputTokens), Tokens(r.Tokens.CacheReadInputTokens)))
	if r.RunDir != "" {
		row("transcripts", code(r.RunDir+"/"))
	}
	if r.Record != "" {
		row("record", code(r.Record))
	}
	if len(r.Attempts) > 0 {
		b.WriteString("\n| attempt | session | started (UTC) | took | ended | outcome | cost |\n")
		b.WriteString("| ---: | --- | --- | ---: | --- | --- | ---: |\n")
		for _, a := range r.Attempts {
			session := code(ShortSession(a.Session))
			switch {
			case a.Purpose == "checkpoint":
				session += " (checkpoint)"
			case a.Resume:
				session += " (resumed)"
			}
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s |\n", a.N, session, a.Start.UTC().Format(time.TimeOnly),
				Duration(time.Duration(a.DurationMS)*time.Millisecond), cell(a.Ended), cell(a.Outcome), Cost(a.CostUSD))
		}
	}
	if r.Reason != "" {
		b.WriteString("\n**Reason**\n\n" + MarkdownBlock(r.Reason, ""))
	}
	b.WriteString("\n")
	return b.String()
}

// mcpDown names the MCP servers any attempt started without, once each,
// as inline code with their status: "`broken` (failed)".
func mcpDown(attempts []Attempt) string {
	var names []string
	seen := map[stream.MCPServer]bool{}
	for _, a := range attempts {
		for _, s := range a.MCPNotConnected {
			if !seen[s] && len(names) < 20 {
				seen[s] = true
				names = append(names, code(s.Name)+" ("+cell(s.Status)+")")
			}
		}
	}
	return strings.Join(names, ", ")
}

// cell is s as prose in a table's cell: one line of at most 200 runes.
func cell(s string) string { return MarkdownCell(Clean(s, 200)) }

// code is s as inline code in a table's cell, whole (a path).
func code(s string) string { return inCell(codeSpan(Clean(s, 0))) }
