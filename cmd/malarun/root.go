package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/malarun/malarun/internal/event"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/malarun/malarun/internal/supervisor"
	"github.com/malarun/malarun/internal/ui"
)

// deps are the command line's connections to the outside world; tests
// replace any of them.
type deps struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	environ        func() []string
	signals        <-chan os.Signal
	// runSupervisor executes the run (supervisor.Run outside tests).
	runSupervisor func(context.Context, supervisor.Config, supervisor.Deps) (event.Report, error)
	// actions is set under GitHub Actions (GITHUB_ACTIONS=true): stderr,
	// defused, with a way to write workflow commands (see internal/ui).
	actions *ui.ActionsLog
	// sinks are malarun's own outputs that may fail without ending the run
	// (stderr, then the --events file once opened); nil in tests that run
	// the command line with plain buffers.
	sinks *sinks
	// setProcs sets the process's GOMAXPROCS (runtime.GOMAXPROCS); nil in
	// tests that run the command line in the test binary's own process.
	setProcs func(int) int
}

// app is one execution of the command line.
type app struct {
	deps *deps
	// issue is the run's issue id once the arguments are checked.
	issue string
	// runBegan: the run command got past its checks, so it prints its own
	// --json report, whatever happens next.
	runBegan bool
}

// run is main without the globals; it returns the exit code. stderr goes
// through a sink: a log reader that goes away or stops reading must never
// stop the run (internal/ui Sink).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer,
	getenv func(string) string, environ func() []string, sigs <-chan os.Signal) int {
	s := &sinks{}
	errOut := s.add("stderr", stderr)
	code := execute(ctx, args, &deps{
		stdin: stdin, stdout: stdout, stderr: errOut,
		getenv: getenv, environ: environ, signals: sigs,
		runSupervisor: supervisor.Run, sinks: s, setProcs: runtime.GOMAXPROCS,
	})
	s.close()
	return code
}

func execute(ctx context.Context, args []string, d *deps) int {
	if d.getenv("GITHUB_ACTIONS") == "true" && d.actions == nil {
		dd := *d
		dd.actions = ui.NewActionsLog(d.stderr)
		dd.stderr = dd.actions
		d = &dd
	}
	a := &app{deps: d}
	return a.execute(ctx, newRootCmd(a), args)
}

// execute runs the command tree root (built for a) with args, prints the
// error it ends with and returns the exit code.
func (a *app) execute(ctx context.Context, root *cobra.Command, args []string) int {
	d := a.deps
	started := time.Now()
	markUsageErrors(root)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err != nil && !a.runBegan && errors.Is(err, syscall.EPIPE) {
		// The reader went away (malarun status | head -1): it took what it
		// wanted, as git log | head does. No error line, exit 0 (docs/json-report.md,
		// "When outputs fail"). A run's own outputs are noted in its record instead.
		return exitOK
	}
	code := exitCodeFor(err)
	if err != nil && !a.runBegan {
		if issue, ok := jsonRunRequested(root, args); ok {
			writeUsageReport(d, issue, err, started)
		}
	}
	if ue, ok := errors.AsType[*usageError](err); err != nil && (!ok || !ue.quiet) {
		// The error may quote the model, the CLI or a record on disk: made
		// inert whether stderr is a terminal or a CI log (which shows
		// escape sequences too), it can drive neither.
		text := ui.Inert(strings.TrimRight(err.Error(), "\n"))
		var msg strings.Builder
		for line := range strings.SplitSeq(text, "\n") {
			fmt.Fprintf(&msg, "malarun: %s\n", line)
		}
		if d.actions != nil {
			// An annotation on the job page; the message itself may quote
			// the model, so it is printed where no workflow command runs.
			title := "malarun failed"
			if a.issue != "" {
				title = "malarun: " + a.issue + " failed"
			}
			d.actions.Command(ui.ErrorCommand(fmt.Sprintf("%s (exit %d)", title, code), text))
			d.actions.Inert(msg.String())
		} else {
			io.WriteString(d.stderr, msg.String())
		}
	}
	if d.actions != nil {
		d.actions.Flush()
	}
	return code
}

// bareUsage is what a bare `malarun` prints: how to run an issue, the
// other commands, and where the rest is.
func bareUsage() string {
	return `Usage: malarun ISSUE_ID --prompt FILE [flags] [-- extra claude args]
       malarun summary | status [ISSUE_ID] | show ISSUE_ID | exit-codes | version

  malarun issue-123 --prompt task.md    runs claude on task.md as issue-123, through hangs, crashes and limits

malarun --help lists every flag, key and exit code.
`
}

// addRunFlags defines a run's flags on fl, into opts: the run's own and
// every key's. `malarun not-run` takes them too, from the fleet recipe.
func addRunFlags(fl *pflag.FlagSet, opts *runOptions) {
	fl.StringVar(&opts.promptPath, "prompt", "", "the task: a `FILE` (a FIFO or /dev/stdin is waited for), or - to read it from stdin; at most 32 MiB (required for a run)")
	addConfigFlag(fl, "config `FILE` (YAML) to read instead of ./malarun.yaml or $XDG_CONFIG_HOME/malarun/config.yaml")
	fl.BoolVar(&opts.reset, "reset", false, "start the issue over: do not continue a poisoned, interrupted or orphaned run")
	fl.BoolVarP(&opts.output.quiet, "quiet", "q", false, "no status line and no event lines; only errors on stderr")
	fl.BoolVar(&opts.output.json, "json", false, "print a JSON report on stdout at the end instead of the result text (schema: docs/report.schema.json)")
	fl.StringVar(&opts.output.eventsPath, "events", "", "append malarun's decisions to `FILE` as JSON lines as they happen; - writes them to stderr")
	fl.BoolVar(&opts.version, "version", false, "print the version, as malarun version does (with --json, as malarun version --json)")
	addKeyFlags(fl, configKeys())
}

func newRootCmd(a *app) *cobra.Command {
	var opts runOptions
	root := &cobra.Command{
		Use:   "malarun ISSUE_ID --prompt FILE [flags] [-- extra claude args]",
		Short: "Supervise one headless Claude Code run",
		Long: `malarun runs one headless Claude Code session (claude -p, stream-json) for one
unit of work, an issue, under supervision: it follows the output, kills the
whole process tree of a run that goes silent or stays stuck, and exits with a
documented code. The final result text goes to stdout; logs go to stderr.

ISSUE_ID names the run's folder under state_dir: letters, digits, '.', '_' and
'-', at most 128 characters, not starting with '-', not "." or "..", not
usage-limits (malarun's own folder there), not a command name.
The prompt is sent to claude on stdin; --prompt - reads it from malarun's stdin.
Arguments after -- go to claude, except the flags malarun owns (-p/--print,
--output-format, --input-format, --verbose, --resume/-r, --continue/-c,
--session-id, --fork-session, --include-partial-messages).

Output. stdout gets claude's final result text, or with --json a report
(version 1, docs/report.schema.json): issue, outcome, exit_code, reason,
result, attempts, sessions, tokens, cost, duration, run_dir, record, and
after a usage limit retry_at and limit_type. On a terminal, stderr shows a
status line redrawn in place (issue, attempt, session, elapsed, messages,
the running tool, background tasks, context occupancy, cost, and a
countdown when a hang is near or while a usage limit is waited out) and
one line per event that matters (tool started, hang, kill, resume,
checkpoint, restart, limit wait); warnings and errors are logged above
it, each fact once: a record an event line already says (a hang, claude
retrying an API request, a limit wait) is left out, and so are info logs
(--log-level debug shows them all).
Not a terminal: no status line, no control characters, logs as log_format
says. --quiet: errors only. --events FILE appends malarun's decisions
(every event but progress) as JSON lines, one write per line.
Text from the model, the CLI or a record never drives the terminal: escape
sequences and other controls show as ^[, ^G, ... or U+FFFD, bidirectional
controls and invisible characters as U+FFFD. The result is byte for byte
in a file or a pipe.

GitHub Actions (GITHUB_ACTIONS=true): the log gets one ::group:: per
attempt and an ::error:: annotation on failure; a Markdown summary
(outcome, attempts, cost, duration, transcripts) is appended to
$GITHUB_STEP_SUMMARY; the model's text (the result, reasons that quote
it) is wrapped in ::stop-commands:: or defused so it runs no workflow
command. The status line is off there.

Telemetry: with OTEL_EXPORTER_OTLP_ENDPOINT (or a per-signal endpoint) set,
malarun exports OpenTelemetry traces (a span per run and per attempt, its
decisions as span events) and metrics (runs, attempts, hangs, limit waits,
durations, cost, tokens) over OTLP/HTTP protobuf; each attempt's claude gets
TRACEPARENT naming its span. Off otherwise. A collector that fails costs one
warning and at most 2 s at exit, never the exit code (docs/telemetry.md).`,
		Example: `  malarun issue-123 --prompt task.md
  cat task.md | malarun issue-123 --prompt -
  malarun issue-123 --prompt task.md -- --model sonnet --allowedTools Bash
  malarun issue-123 --prompt task.md --json > report.json
  malarun issue-123 --prompt task.md --quiet --events events.jsonl
  tail -f events.jsonl | jq -r '.event + " " + (.reason // "")'
  OTEL_EXPORTER_OTLP_ENDPOINT=http://otel-collector:4318 malarun issue-123 --prompt task.md`,
		Args:                       cobra.ArbitraryArgs,
		SilenceUsage:               true,
		SilenceErrors:              true,
		SuggestionsMinimumDistance: 2,
		ValidArgsFunction:          completeIssueID(a, cobra.ShellCompDirectiveDefault),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.version {
				// As `malarun version`; like cobra's own --version, it wins
				// over any other argument, so it never starts a run.
				return runVersion(cmd.Context(), versionOptions{version: version, buildInfo: debug.ReadBuildInfo, json: opts.output.json}, a.deps)
			}
			if len(args) == 0 && cmd.Flags().NFlag() == 0 {
				// A short usage, as for any other mistake of the command
				// line: the whole help (170 lines) is --help's.
				fmt.Fprint(a.deps.stderr, bareUsage())
				return &usageError{err: errors.New("no arguments"), quiet: true}
			}
			if err := opts.complete(cmd, args, a.deps); err != nil {
				return err
			}
			a.issue, a.runBegan = opts.issueID, true
			return runRun(cmd.Context(), opts, a.deps)
		},
	}
	root.SetIn(a.deps.stdin)
	root.SetOut(a.deps.stdout)
	root.SetErr(a.deps.stderr)
	fl := root.Flags()
	fl.SortFlags = false
	addRunFlags(fl, &opts)
	completeFlagValues(root, configKeys(), nil)
	root.AddCommand(newVersionCmd(a), newStatusCmd(a), newSummaryCmd(a), newShowCmd(a), newExitCodesCmd(a), newManCmd(a), newGuardCmd(), newNotRunCmd(a))

	setUsage(root)
	defaultHelp := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		defaultHelp(c, args)
		if c == root {
			fmt.Fprint(c.OutOrStdout(), "\n"+configHelp()+"\n"+exitCodeHelp())
		}
	})
	return root
}
