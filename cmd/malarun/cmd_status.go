package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/supervisor"
	"github.com/malarun/malarun/internal/ui"
	"github.com/malarun/malarun/internal/usd"
)

// statusOptions is what `malarun status` needs.
type statusOptions struct {
	issueID string // "" = every issue
	json    bool
	config  loadedConfig
}

func newStatusCmd(a *app) *cobra.Command {
	var opts statusOptions
	cmd := &cobra.Command{
		Use:   "status [ISSUE_ID] [--json]",
		Short: "Show the state of one issue, or of every issue in state_dir",
		Long: `status shows what malarun recorded about an issue: status (processing,
interrupted, succeeded, failed; poisoned), attempts, reclaims, sessions, the last
reason, cost, and where the run's transcripts are. Without ISSUE_ID it lists
every issue in state_dir. --json prints the records as JSON (see docs/record.md).`,
		Example: `  malarun status
  malarun status issue-123
  malarun status issue-123 --json | jq .reason`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeIssueID(a, cobra.ShellCompDirectiveNoFileComp),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if err := supervisor.ValidateIssueID(args[0]); err != nil {
					return usage(err)
				}
				opts.issueID = args[0]
			}
			lc, err := loadConfig(configKeys(), cmd.Flags(), a.deps.getenv)
			if err != nil {
				return err
			}
			opts.config = lc
			return runStatus(cmd.Context(), opts, a.deps)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print JSON instead of a table")
	addConfigFlag(cmd.Flags(), "config `FILE` (YAML), for state_dir")
	addKeyFlags(cmd.Flags(), []keySpec{stateDirKey()})
	return cmd
}

// statusEntry is one issue in `malarun status --json`: the record, plus
// whether a malarun holds the issue now.
type statusEntry struct {
	record.Record
	Locked bool   `json:"locked"`
	Error  string `json:"error,omitempty"`
}

func runStatus(_ context.Context, opts statusOptions, d *deps) error {
	stateDir := opts.config.settings.cfg.StateDir
	var entries []journal.Entry
	if opts.issueID != "" {
		e, ok := journal.Read(stateDir, opts.issueID)
		if !ok {
			return fmt.Errorf("issue %s has no record in %s", opts.issueID, stateDir)
		}
		entries = []journal.Entry{e}
	} else {
		var err error
		if entries, err = journal.List(stateDir); err != nil {
			return fmt.Errorf("read %s: %w", stateDir, err)
		}
	}
	if opts.json {
		return printStatusJSON(d.stdout, entries, opts.issueID != "")
	}
	if opts.issueID != "" {
		return printStatusDetail(d.stdout, entries[0])
	}
	return printStatusTable(d.stdout, entries)
}

func printStatusJSON(w io.Writer, entries []journal.Entry, one bool) error {
	out := make([]statusEntry, len(entries))
	for i, e := range entries {
		out[i] = statusEntry{Record: e.Record, Locked: e.Locked}
		out[i].Issue = e.Issue
		// Printed rounded, as every cost malarun prints (internal/usd);
		// record.json keeps the sums as they are.
		out[i].CostUSD, out[i].TotalCostUSD = usd.Round(e.Record.CostUSD), usd.Round(e.Record.TotalCostUSD)
		if e.Err != nil {
			out[i].Error = e.Err.Error()
		}
	}
	if isTerminal(w) {
		w = ui.InertJSONWriter(w) // as the --json report (output.go)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if one {
		return enc.Encode(out[0])
	}
	return enc.Encode(out)
}

func printStatusTable(w io.Writer, entries []journal.Entry) error {
	if len(entries) == 0 {
		_, err := fmt.Fprintln(w, "no issues recorded")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ISSUE\tSTATUS\tATTEMPTS\tRECLAIMS\tSESSION\tCOST\tUPDATED\tREASON")
	for _, e := range entries {
		r := e.Record
		// Every text from the record is cleaned (see printStatusDetail).
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t$%.4f\t%s\t%s\n", ui.Clean(e.Issue, 0), ui.Clean(e.Described(), 0), r.Attempts, r.RunReclaims,
			ui.ShortSession(r.SessionID), r.TotalCostUSD, r.UpdatedAt.Local().Format(time.DateTime), ui.Clean(firstOf(r.Reason, errText(e.Err)), 80))
	}
	return tw.Flush()
}

// printStatusDetail prints one field a line. record.json is malarun's,
// but a damaged or planted one can hold anything, and the reason quotes
// the model: every value is made one clean line (ui.Clean), so none can
// drive the terminal or break the alignment with a tab or a newline.
func printStatusDetail(w io.Writer, e journal.Entry) error {
	if e.Err != nil {
		_, err := fmt.Fprintf(w, "issue %s: %s\n", ui.Clean(e.Issue, 0), ui.Clean(e.Err.Error(), 0))
		return err
	}
	r := e.Record
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	rows := [][2]string{
		{"issue", r.Issue},
		{"status", e.Described()},
		{"running", runningText(e)},
		{"reason", r.Reason},
		{"retry at", retryAtText(r)},
		{"limit type", r.LimitType},
		{"exit code", fmt.Sprint(r.ExitCode)},
		{"attempts", fmt.Sprint(r.Attempts)},
		{"reclaims", fmt.Sprintf("%d in this run, %d in a row", r.RunReclaims, r.Reclaims)},
		{"prompt", promptText(r)},
		{"continuations", fmt.Sprint(r.Continuations)},
		{"session", r.SessionID},
		{"sessions", fmt.Sprint(r.Sessions)},
		{"cost", fmt.Sprintf("$%.4f this run, $%.4f in all", r.CostUSD, r.TotalCostUSD)},
		{"cwd", r.Cwd},
		{"owner", fmt.Sprintf("pid %d on %s, started %s", r.Owner.Pid, r.Owner.Host, r.Owner.StartedAt.Local().Format(time.DateTime))},
		{"updated", r.UpdatedAt.Local().Format(time.DateTime)},
		{"transcripts", r.RunDir},
		{"runs", fmt.Sprint(len(r.Runs))},
		{"mcp servers not connected", mcpText(r.MCPNotConnected)},
	}
	for _, row := range rows {
		if (row[0] == "retry at" || row[0] == "limit type") && r.Status != record.Waiting {
			continue // only a usage-limited run has them
		}
		if row[1] == "" && (row[0] == "mcp servers not connected" || row[0] == "running" || row[0] == "reason") {
			continue
		}
		if row[0] == "exit code" && r.Status == record.Processing {
			continue // not ended: no code yet
		}
		fmt.Fprintf(tw, "%s:\t%s\n", row[0], ui.Clean(row[1], 0))
	}
	return tw.Flush()
}

// promptText names the run's prompt by its hash, and the latest rerun
// whose prompt differed and what was done about it.
func promptText(r record.Record) string {
	if r.PromptSHA256 == "" {
		return "unknown (recorded before version 4)"
	}
	s := "sha256 " + r.PromptSHA256[:12]
	if n := len(r.PromptChanges); n > 0 {
		c := r.PromptChanges[n-1]
		s += fmt.Sprintf("; prompt changed at %s (run %s began with sha256 %s, the rerun gave %s): %s",
			c.At.Local().Format(time.DateTime), c.RunID, c.RecordedSHA256[:12], c.GivenSHA256[:12], c.Decision)
	}
	return s
}

// retryAtText says when a waiting run can go on, in UTC and local time.
func retryAtText(r record.Record) string {
	if r.RetryAt.IsZero() {
		return "unknown (the next run tries at once)"
	}
	return r.RetryAt.UTC().Format(time.RFC3339) + " (" + r.RetryAt.Local().Format(time.DateTime) + " local)"
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// mcpText names the MCP servers the last attempt's claude started without.
func mcpText(servers []stream.MCPServer) string {
	names := make([]string, 0, len(servers))
	for _, s := range servers {
		names = append(names, s.Name+" ("+s.Status+")")
	}
	return strings.Join(names, ", ")
}

// runningText says, for a run that is processing, which attempt runs and
// since when ("" otherwise): the attempts counted so far are the ended ones.
func runningText(e journal.Entry) string {
	r := e.Record
	if r.Status != record.Processing {
		return ""
	}
	// Between attempts (a backoff, a reclaim before its first attempt)
	// no claude runs: the record's attempt start is cleared at each end.
	s := fmt.Sprintf("between attempts (%d so far)", r.Attempts)
	if !r.AttemptStartedAt.IsZero() {
		s = fmt.Sprintf("attempt %d since %s", r.Attempts+1, r.AttemptStartedAt.Local().Format(time.DateTime))
	}
	if e.Word() != string(record.Processing) {
		s += " (its malarun is gone)"
	}
	return s
}
