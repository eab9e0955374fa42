package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/replay"
	"github.com/malarun/malarun/internal/supervisor"
	"github.com/malarun/malarun/internal/ui"
)

// showOptions is what `malarun show` needs.
type showOptions struct {
	issueID string
	runID   string
	attempt int
	format  string
	follow  bool
	noPager bool
	config  loadedConfig
}

// showFormats are the values of --format, the first the default.
func showFormats() []string { return []string{"text", "md", "json", "html"} }

// followPoll is how often --follow looks for more of a run: the timeline
// and the record are small files, read from where it stopped.
const followPoll = 250 * time.Millisecond

func newShowCmd(a *app) *cobra.Command {
	var opts showOptions
	cmd := &cobra.Command{
		Use:   "show ISSUE_ID [--run ID] [--attempt N] [--format text|md|json|html] [--follow]",
		Short: "Replay what a run did: the agent's work and malarun's decisions, in time order",
		Long: `show tells the story of a run from its folder: for each attempt how it began
(new, resume, checkpoint request, continuation, ...), its prompt's first lines,
the assistant's text, each tool call and its result (first and last lines,
size, how long it ran), background tasks, each result, and malarun's own
decisions at their time (hang detected and how long claude was silent, the
tree stopped, the retry decision and backoff, a usage-limit wait, context
pressure and the checkpoint); then how each attempt ended and the run's
outcome. By default the issue's latest run, every attempt.

Times come from the run folder's timeline.jsonl, which malarun writes for
every run; a run recorded before it existed shows without times, and says so.

--format text (the default) is wrapped to the terminal and coloured there
(not with NO_COLOR), plain when piped, and goes through $MALARUN_PAGER or
$PAGER (default less) on a terminal, as git log does. md is Markdown for a PR
comment or $GITHUB_STEP_SUMMARY; json is the story as data
(docs/show.schema.json); html is one self-contained page with a timeline
picture, safe to open offline from a CI artifact.

--follow keeps printing a run that is going on, new attempts too, until it
ends (its status leaves processing or waiting) or its malarun is gone (the
lock is free: it died; the next malarun on the issue takes the run over).`,
		Example: `  malarun show issue-123
  malarun show issue-123 --attempt 2
  malarun show issue-123 --format html > issue-123.html
  malarun show issue-123 --format md >> "$GITHUB_STEP_SUMMARY"
  malarun show issue-123 --follow`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeIssueID(a, cobra.ShellCompDirectiveNoFileComp),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := supervisor.ValidateIssueID(args[0]); err != nil {
				return usage(err)
			}
			opts.issueID = args[0]
			if opts.runID != "" && !record.ValidRunID(opts.runID) {
				return usagef("--run %q is not a run id (a folder name under runs/, e.g. 20261122T120401Z-3f9a1c)", opts.runID)
			}
			if opts.attempt < 0 {
				return usagef("--attempt %d: attempts are numbered from 1", opts.attempt)
			}
			if !slices.Contains(showFormats(), opts.format) {
				return usagef("--format %q: one of text, md, json, html", opts.format)
			}
			lc, err := loadConfig(configKeys(), cmd.Flags(), a.deps.getenv)
			if err != nil {
				return err
			}
			opts.config = lc
			return runShow(cmd.Context(), opts, a.deps)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.runID, "run", "", "the run `ID` to show (a folder under <state_dir>/<issue>/runs/); default the issue's latest run")
	fl.IntVar(&opts.attempt, "attempt", 0, "show only attempt `N`")
	fl.StringVar(&opts.format, "format", "text", "text, md (Markdown), json (docs/show.schema.json) or html (one self-contained page)")
	fl.BoolVarP(&opts.follow, "follow", "f", false, "keep printing a run that is going on until it ends")
	fl.BoolVar(&opts.noPager, "no-pager", false, "do not page the text on a terminal")
	addConfigFlag(fl, "config `FILE` (YAML), for state_dir")
	addKeyFlags(fl, []keySpec{stateDirKey()})
	completeFlagValues(cmd, nil, map[string][]string{"format": showFormats()})
	return cmd
}

func runShow(ctx context.Context, opts showOptions, d *deps) error {
	// A shutdown signal (Ctrl-C, a CI step cancelled) ends the story where
	// it is: main catches the signals for the supervisor, so they come on
	// d.signals and end this context.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	signalled := make(chan os.Signal, 1)
	go func() {
		select {
		case sig := <-d.signals:
			signalled <- sig
			cancel()
		case <-ctx.Done():
		}
	}()
	err := showRun(ctx, opts, d)
	select {
	case sig := <-signalled:
		return &supervisor.RunError{Kind: outcome.Interrupted, Signal: sig, Detail: "while showing the run"}
	default:
		return err
	}
}

// interruptibleRenderer stops the story once ctx ends.
type interruptibleRenderer struct {
	replay.Renderer
	ctx context.Context
}

func (r interruptibleRenderer) Item(it *replay.Item) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	return r.Renderer.Item(it)
}

func showRun(ctx context.Context, opts showOptions, d *deps) error {
	stateDir := opts.config.settings.cfg.StateDir
	src, warn, err := showSource(stateDir, opts)
	if err != nil {
		return err
	}
	if warn != "" {
		fmt.Fprintf(d.stderr, "malarun show: %s\n", ui.Clean(warn, 0))
	}
	if opts.follow {
		src.Follow = follower(ctx, stateDir, opts.issueID, filepath.Base(src.RunDir))
	}
	out, wait := d.stdout, func() error { return nil }
	if opts.format == "text" && !opts.follow && !opts.noPager && isTerminal(d.stdout) {
		out, wait = startPager(d)
	}
	var actions *ui.ActionsLog
	if d.getenv("GITHUB_ACTIONS") == "true" && !isRegularFile(d.stdout) {
		// The runner reads the step's stdout for workflow commands: a line
		// of the model's that starts with "::" must stay text (as for the
		// logs, internal/ui/github.go). A file (> show.html) is not read.
		actions = ui.NewActionsLog(out)
		out = actions
	}
	_, err = replay.Tell(src, interruptibleRenderer{newRenderer(opts.format, out, d), ctx})
	if actions != nil {
		actions.Flush()
	}
	if perr := wait(); err == nil {
		err = perr
	}
	if errors.Is(err, errPagerQuit) {
		return nil // the reader quit the pager: nothing more to say
	}
	return err
}

// newRenderer picks the format's renderer. The text is wrapped and
// coloured only for a terminal (the pager's is the same one).
func newRenderer(format string, w io.Writer, d *deps) replay.Renderer {
	switch format {
	case "md":
		return replay.NewMarkdown(w)
	case "json":
		return replay.NewJSON(w)
	case "html":
		return replay.NewHTML(w)
	}
	opt := replay.TextOptions{Location: time.Local}
	if fd, ok := ui.TerminalFd(d.stdout); ok {
		opt.Width = ui.WidthOf(fd)()
		opt.Color = d.getenv("NO_COLOR") == ""
	}
	return replay.NewText(w, opt)
}

// showSource finds the run to show: --run, else the record's current run,
// else (no record, or a damaged one) the newest folder under runs/.
func showSource(stateDir string, opts showOptions) (replay.Source, string, error) {
	src := replay.Source{Issue: opts.issueID, Attempt: opts.attempt}
	runs := filepath.Join(stateDir, opts.issueID, "runs")
	e, recorded := journal.Read(stateDir, opts.issueID)
	var warn string
	runID := opts.runID
	switch {
	case runID != "":
	case recorded && e.Err == nil:
		runID = e.Record.RunID
	default:
		latest, err := latestRun(runs)
		if err != nil {
			return src, "", err
		}
		runID = latest
		if recorded {
			warn = fmt.Sprintf("the record of %s cannot be read (%v): showing its newest run folder, %s", opts.issueID, e.Err, runID)
		}
	}
	src.RunDir = filepath.Join(runs, runID)
	// Lstat: a runs/<id> that is a symbolic link leads out of the state
	// directory, as the record's run_dir is not allowed to (issue 32).
	if fi, err := os.Lstat(src.RunDir); err != nil || !fi.IsDir() {
		if err == nil && fi.Mode()&os.ModeSymlink != 0 {
			return src, "", fmt.Errorf("issue %s's run %s in %s is a symbolic link, which malarun does not follow", opts.issueID, runID, runs)
		}
		return src, "", fmt.Errorf("issue %s has no run %s in %s", opts.issueID, runID, runs)
	}
	if recorded && e.Err == nil && e.Record.RunID == runID {
		src.Status = e.Described()
	}
	return src, warn, nil
}

// latestRun is the newest run id under runs/ (run ids begin with their UTC start time).
func latestRun(runs string) (string, error) {
	entries, err := os.ReadDir(runs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("issue %s has no runs in %s", filepath.Base(filepath.Dir(runs)), filepath.Dir(filepath.Dir(runs)))
		}
		return "", err
	}
	var latest string
	for _, en := range entries {
		if en.IsDir() && record.ValidRunID(en.Name()) && en.Name() > latest {
			latest = en.Name()
		}
	}
	if latest == "" {
		return "", fmt.Errorf("issue %s has no runs in %s", filepath.Base(filepath.Dir(runs)), runs)
	}
	return latest, nil
}

// follower waits a little, then says whether the followed run ended. Its
// lock decides: malarun holds it until after the run's last timeline entry
// is written (a record that says succeeded comes a moment earlier), and
// frees it when it exits or dies. A record that moved on to another run
// ends the story too.
func follower(ctx context.Context, stateDir, issue, runID string) func() (string, error) {
	return func() (string, error) {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(followPoll):
		}
		e, ok := journal.Read(stateDir, issue)
		switch {
		case !ok:
			return "the issue's record is gone", nil
		case e.Err != nil:
			return "the issue's record cannot be read: " + e.Err.Error(), nil
		case e.Record.RunID != runID:
			return "the issue has moved on to run " + e.Record.RunID, nil
		case e.Locked:
			return "", nil
		case e.Record.Status == record.Processing:
			return "the run's malarun is gone (pid " + strconv.Itoa(e.Record.Owner.Pid) + ", its lock is free) while its record says " +
				"processing: it died; the next malarun on the issue takes the run over", nil
		}
		return "the run is not going on: " + e.Described(), nil
	}
}
