package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/malarun/malarun/internal/fleet"
	"github.com/malarun/malarun/internal/replay"
	"github.com/malarun/malarun/internal/statefile"
	"github.com/malarun/malarun/internal/supervisor"
	"github.com/malarun/malarun/internal/timeline"
	"github.com/malarun/malarun/internal/ui"
)

// summaryOptions is what `malarun summary` needs.
type summaryOptions struct {
	since        string
	sinceSummary string
	format       string
	out          string
	page         int
	config       loadedConfig
}

// summaryFormats are the values of --format, the first the default.
func summaryFormats() []string { return []string{"text", "md", "json", "html"} }

func newSummaryCmd(a *app) *cobra.Command {
	var opts summaryOptions
	cmd := &cobra.Command{
		Use:   "summary [--since 12h|TIME] [--since-summary FILE] [--format text|md|json|html] [--out DIR]",
		Short: "Sum up every issue in state_dir: what the night's runs did, at a glance",
		Long: `summary reads every issue's record in state_dir, and its run's timeline, and
tells at a glance what the runs did. First what a person must act on, as
no retry fixes it: credentials, a usage limit no wait lifts (credits, a
spend cap), a configuration error, a prompt file the fleet recipe could
not run (deploy/xargs/malarun-fleet.sh notes those in state_dir/not-run/),
a budget spent, a poisoned run, a damaged record. Then how many issues
have each status; what malarun rescued (hangs and the phase they were
found in, crashes, usage-limit waits, reclaims, context restarts) and how
many runs succeeded after it; what the runs that did not succeed cost,
how long they took to fail, and the time hangs took and, beside it, the
time requests the API never answered took (unknown, never 0, for runs an
older malarun recorded); cost, tokens and wall time with their spread;
the runs that ended without success, grouped by outcome and reason, with
the exit code an orchestrator saw and the issues of each group; the runs
waiting for a usage limit and until when; the runs going on, their attempt
and what claude is doing; the ten slowest and most expensive runs. Damaged
records, folders that are not issues and links are counted and named,
never trusted or followed.

--since-summary FILE compares with an earlier summary's JSON form (last
night's --format json, kept where you like): what newly failed, what
passes again, and the earlier failure cost and time beside tonight's. The
summary itself only reads state_dir.

status lists the records, one row per issue; summary adds them up, in the
four forms show has. --format text (the default) is for a terminal or a
log; md for a pull-request comment or $GITHUB_STEP_SUMMARY (it fits its
1 MiB: every list at most 30); json is the summary as data
(docs/summary.schema.json, at most 64 MiB: issues_list 5,000 rows a page,
--page N for the others; statuses names every issue); html writes a
folder (--out DIR): DIR/index.html, one self-contained page with charts
(the statuses, how long runs took, the runs on a time line) and the first
1,000 issues, DIR/list-N.html the others, and DIR/issues/<issue>.html, the
malarun show page of up to 2,000 issues, those to look at first, which
the summary links to. Every form is bounded whatever state_dir holds
(docs/many-issues.md, "Bounds").

--since keeps the runs updated since then: a duration back from now (12h,
90m) or a time (2026-11-26T20:00:00Z, 2026-11-26).`,
		Example: `  malarun summary
  malarun summary --since 12h
  malarun summary --format md >> "$GITHUB_STEP_SUMMARY"
  malarun summary --format json | jq '.ended_unsuccessfully[] | {outcome, issues}'
  malarun summary --since 12h --format json > night-2026-11-27.json
  malarun summary --since 12h --since-summary night-2026-11-26.json
  malarun summary --format html --out night/ && xdg-open night/index.html`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(summaryFormats(), opts.format) {
				return usagef("--format %q: one of text, md, json, html", opts.format)
			}
			if opts.format == "html" && opts.out == "" {
				return usagef("--format html writes a folder (the summary and a page per issue): give it with --out DIR")
			}
			if opts.format != "html" && opts.out != "" {
				return usagef("--out is for --format html; the other forms go to stdout")
			}
			if cmd.Flags().Changed("page") && (opts.format != "json" || opts.page < 1) {
				return usagef("--page %d: a page of --format json's issues_list, from 1", opts.page)
			}
			lc, err := loadConfig(configKeys(), cmd.Flags(), a.deps.getenv)
			if err != nil {
				return err
			}
			opts.config = lc
			return runSummary(cmd.Context(), opts, a.deps, time.Now())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.since, "since", "", "only runs updated since then: a duration back from now (12h) or a time (2026-11-26T20:00:00Z, 2026-11-26)")
	fl.StringVar(&opts.sinceSummary, "since-summary", "", "compare with an earlier summary's --format json `FILE`: what newly failed, what passes again")
	fl.StringVar(&opts.format, "format", "text", "text, md (Markdown), json (docs/summary.schema.json) or html (a folder: --out)")
	fl.IntVar(&opts.page, "page", 1, "the page of issues_list --format json writes (5,000 rows a page)")
	fl.StringVar(&opts.out, "out", "", "the folder --format html writes: index.html and issues/<issue>.html")
	addConfigFlag(fl, "config `FILE` (YAML), for state_dir")
	addKeyFlags(fl, []keySpec{stateDirKey()})
	completeFlagValues(cmd, nil, map[string][]string{"format": summaryFormats()})
	return cmd
}

// parseSince reads --since: a duration back from now, an RFC 3339 time or
// a date (midnight UTC).
func parseSince(v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(v); err == nil {
		if d <= 0 {
			return time.Time{}, usagef("--since %q: a duration back from now must be positive (12h)", v)
		}
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, usagef("--since %q: give a duration back from now (12h, 90m) or a time (2026-11-26T20:00:00Z, 2026-11-26)", v)
}

func runSummary(ctx context.Context, opts summaryOptions, d *deps, now time.Time) error {
	since, err := parseSince(opts.since, now)
	if err != nil {
		return err
	}
	stateDir := opts.config.settings.cfg.StateDir
	if _, err := os.Stat(stateDir); errors.Is(err, fs.ErrNotExist) {
		// Said, not an error: a fleet that has not started yet has none.
		fmt.Fprintf(d.stderr, "malarun summary: state_dir %s does not exist: no issue has run there (a mistyped --state-dir or MALARUN_STATE_DIR?)\n", ui.Clean(stateDir, 0))
	}
	var previous *fleet.Previous
	if opts.sinceSummary != "" {
		// Read first: a mistyped file is said before the state dir is read.
		p, err := readPrevious(opts.sinceSummary)
		if err != nil {
			return err
		}
		previous = &p
	}
	sc, err := fleet.Scan(stateDir, fleet.Options{ValidID: supervisor.ValidateIssueID, Since: since, Now: now})
	if err != nil {
		return fmt.Errorf("read %s: %w", stateDir, err)
	}
	s := fleet.Summarize(stateDir, sc, since, now)
	if previous != nil {
		s.Compare(*previous)
	}
	switch opts.format {
	case "md":
		return fleet.WriteMarkdown(d.stdout, &s)
	case "json":
		if opts.page > s.Page.Pages {
			return usagef("--page %d: the summary has %d (5,000 issues a page)", opts.page, s.Page.Pages)
		}
		w := d.stdout
		if isTerminal(w) {
			w = ui.InertJSONWriter(w)
		}
		return fleet.WriteJSON(w, &s, opts.page)
	case "html":
		return writeSummaryFolder(ctx, opts, d, &s)
	}
	return fleet.WriteText(d.stdout, &s)
}

// maxPreviousBytes bounds the earlier summary --since-summary reads: the
// JSON form's own bound, and a margin.
const maxPreviousBytes = 65 << 20

// readPrevious reads --since-summary's file as outside input (a FIFO is
// not waited for; one over the JSON form's bound is refused unread).
func readPrevious(path string) (fleet.Previous, error) {
	data, err := statefile.ReadFollowing(path, maxPreviousBytes)
	if err != nil {
		return fleet.Previous{}, usagef("--since-summary %s: %v", ui.Clean(path, 200), ui.Clean(err.Error(), 300))
	}
	p, err := fleet.ParsePrevious(data, supervisor.ValidateIssueID)
	if err != nil {
		return fleet.Previous{}, usagef("--since-summary %s: %v", ui.Clean(path, 200), ui.Clean(err.Error(), 300))
	}
	return p, nil
}

// maxPageErrors bounds the lines that say which show pages could not be
// made: a state dir of thousands of damaged issues says so in a count.
const maxPageErrors = 10

// writeSummaryFolder writes --format html's folder: the show pages of the
// issues to look at first under issues/ (at most fleet.ShowPagesMax: the
// folder is bounded too), then index.html linking to those that could be
// made, and the list pages of the issues past the index's.
// Files are written as malarun writes its state (0600 in 0700 folders,
// never through a link); an issue whose page cannot be made is said on
// stderr and left unlinked.
func writeSummaryFolder(ctx context.Context, opts summaryOptions, d *deps, s *fleet.Summary) error {
	pagesDir := filepath.Join(opts.out, "issues")
	if err := os.MkdirAll(pagesDir, 0o700); err != nil {
		return fmt.Errorf("--out %s: %w", opts.out, err)
	}
	stateDir := opts.config.settings.cfg.StateDir
	rows := map[string]*fleet.Row{}
	for i := range s.Rows {
		rows[s.Rows[i].Issue] = &s.Rows[i]
	}
	made := map[string]bool{}
	failed := 0
	// The pages' templates, parsed once for the folder; both workers
	// execute them (html/template is safe for concurrent use).
	showPages := replay.NewHTMLPages()
	var mu sync.Mutex
	work := make(chan string)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for issue := range work {
				err := writeShowPage(showPages, stateDir, rows[issue], filepath.Join(pagesDir, issue+".html"))
				mu.Lock()
				if err != nil {
					if failed++; failed <= maxPageErrors {
						fmt.Fprintf(d.stderr, "malarun summary: no page for %s: %s\n", issue, ui.Clean(err.Error(), 300))
					}
				} else {
					made[issue] = true
				}
				mu.Unlock()
			}
		}()
	}
	pages := fleet.ShowPageOrder(s, fleet.ShowPagesMax)
	for _, issue := range pages {
		if ctx.Err() != nil {
			break
		}
		work <- issue
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	if failed > maxPageErrors {
		fmt.Fprintf(d.stderr, "malarun summary: and no page for %d more issues\n", failed-maxPageErrors)
	}
	if left := len(s.Rows) - len(pages); left > 0 {
		fmt.Fprintf(d.stderr, "malarun summary: %d issues have no page of their own: a summary makes at most %d, those to look at first (malarun show ISSUE --format html makes one)\n",
			left, fleet.ShowPagesMax)
	}
	link := func(issue string) string {
		if !made[issue] {
			return ""
		}
		return "issues/" + url.PathEscape(issue) + ".html"
	}
	for n := 2; n <= fleet.ListPages(s); n++ {
		if err := writePage(filepath.Join(opts.out, fleet.ListPage(n)), func(w io.Writer) error { return fleet.WriteHTMLList(w, s, n, link) }); err != nil {
			return err
		}
	}
	index := filepath.Join(opts.out, "index.html")
	if err := writePage(index, func(w io.Writer) error { return fleet.WriteHTML(w, s, link) }); err != nil {
		return err
	}
	fmt.Fprintf(d.stdout, "%s\n", index)
	return nil
}

// writePage writes a page of the folder as malarun writes its state (0600,
// never through a link).
func writePage(path string, write func(io.Writer) error) error {
	f, err := statefile.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// maxShowTimeline is the largest timeline whose run gets a page in a
// summary's folder: a busy real run writes a few MB.
const maxShowTimeline = 16 << 20

// writeShowPage writes the issue of r's `malarun show --format html` to
// path with pages: its recorded run, as the summary read the record (read again only
// when it could not be: show then takes the newest run folder).
func writeShowPage(pages *replay.HTMLPages, stateDir string, r *fleet.Row, path string) error {
	issue := r.Issue
	src := replay.Source{Issue: issue, RunDir: r.RunDir, Status: r.Described}
	if r.RunDir == "" {
		var err error
		if src, _, err = showSource(stateDir, showOptions{issueID: issue}); err != nil {
			return err
		}
	} else if fi, err := os.Lstat(src.RunDir); err != nil || !fi.IsDir() {
		// As show: a run folder that is a link leads out of the state dir.
		return fmt.Errorf("issue %s has no run folder %s (or it is a link, which malarun does not follow)", issue, src.RunDir)
	}
	// A timeline past what a real run writes (a planted one of hundreds of
	// thousands of entries) would make a page of tens of MB and take
	// seconds: the summary leaves it to malarun show.
	if st, err := os.Lstat(filepath.Join(src.RunDir, timeline.FileName)); err == nil && st.Size() > maxShowTimeline {
		return fmt.Errorf("its timeline is %d MB, past the %d MB a summary's page reads: malarun show %s --format html makes it",
			st.Size()>>20, maxShowTimeline>>20, issue)
	}
	f, err := statefile.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := replay.Tell(src, pages.Renderer(f)); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
