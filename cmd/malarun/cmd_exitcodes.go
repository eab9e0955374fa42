package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// exitCodesOptions is what `malarun exit-codes` needs.
type exitCodesOptions struct {
	json bool
}

func newExitCodesCmd(a *app) *cobra.Command {
	var opts exitCodesOptions
	cmd := &cobra.Command{
		Use:   "exit-codes [--json]",
		Short: "Print the exit code contract: what each code means and what a scheduler should do",
		Long: `exit-codes prints malarun's exit code contract, the table behind --help, for
the programs that run malarun (a Kubernetes Job's podFailurePolicy, an Argo
retryStrategy, a CI matrix): each code, its outcome (the name in the --json
report), what it means, and:

  retry            whether running the issue again can help, and when:
                   now; after_retry_at (once the usage limit resets: retry_at
                   in the --json report); never (the same input ends the same
                   way, or there is nothing left to do)
  next invocation  what the issue's next malarun does with this run:
                   resumes (continues the recorded session, so a retry does
                   not start the work over); starts_over (the run is closed, a
                   new one starts from the prompt); unchanged (this invocation
                   left the record as it found it); refused (it exits the same
                   way until --reset); as_recorded (malarun's own trouble
                   stopped it wherever it was: the record as last saved
                   decides, see malarun status; a run whose end could not
                   be saved still says processing and is reclaimed)

Code 1 has two rows, error_result and error: the --json report's outcome
tells them apart; a scheduler, which sees the code only, retries neither.

--json prints {"version": 1, "codes": [{"code", "outcome", "meaning", "retry",
"next_invocation"}, ...]}; version changes only if a field is renamed, removed
or changes meaning.`,
		Example: `  malarun exit-codes
  malarun exit-codes --json | jq -r '.codes[] | select(.retry == "now") | .code'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runExitCodes(cmd.Context(), opts, a.deps)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the contract as JSON")
	return cmd
}

// exitCodesVersion is the version of the --json document.
const exitCodesVersion = 1

// exitCodesDoc is `malarun exit-codes --json`.
type exitCodesDoc struct {
	Version int           `json:"version"`
	Codes   []exitCodeDoc `json:"codes"`
}

type exitCodeDoc struct {
	Code           int    `json:"code"`
	Outcome        string `json:"outcome"`
	Meaning        string `json:"meaning"`
	Retry          string `json:"retry"`
	NextInvocation string `json:"next_invocation"`
}

// contract renders the exit code table, the one source of the contract.
func contract() exitCodesDoc {
	doc := exitCodesDoc{Version: exitCodesVersion}
	for _, r := range exitCodes() {
		doc.Codes = append(doc.Codes, exitCodeDoc{
			Code: r.code, Outcome: string(r.outcome), Meaning: r.doc, Retry: string(r.retry), NextInvocation: string(r.next),
		})
	}
	return doc
}

func runExitCodes(_ context.Context, opts exitCodesOptions, d *deps) error {
	doc := contract()
	if opts.json {
		enc := json.NewEncoder(d.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	}
	tw := tabwriter.NewWriter(d.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CODE\tOUTCOME\tRETRY\tNEXT INVOCATION\tMEANING")
	for _, c := range doc.Codes {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", c.Code, c.Outcome, c.Retry, c.NextInvocation, c.Meaning)
	}
	return tw.Flush()
}
