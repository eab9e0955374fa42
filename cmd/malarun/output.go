package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/malarun/malarun/internal/event"

	"github.com/rs/zerolog"

	"github.com/malarun/malarun/internal/ui"
)

// outputOptions are the flags that choose what a run shows.
type outputOptions struct {
	quiet      bool
	json       bool
	eventsPath string
}

// runOutput is how one run talks to its user: the status line and event
// lines on a terminal, the --events log, the GitHub Actions groups, and at
// the end the result text or the --json report and the step summary.
type runOutput struct {
	d     *deps
	opts  outputOptions
	issue string
	// stderr is where logs go: d.stderr, or the status line's terminal.
	stderr io.Writer
	tty    bool // d.stderr is a terminal (console logs)
	live   *ui.Live
	// events runs eventLog on its own goroutine; eventsFile is nil for "-".
	events     *ui.Async
	eventLog   *ui.EventLog
	eventsFile *os.File
	eventsSink *ui.Sink // nil without deps.sinks (tests with plain buffers)
	groups     *ui.Groups
	log        zerolog.Logger
	started    time.Time
}

// newRunOutput starts the status line when stderr is a terminal (not with
// --quiet, TERM=dumb or under GitHub Actions, whose log is no terminal).
func newRunOutput(opts outputOptions, issue string, maxAttempts int, d *deps) *runOutput {
	o := &runOutput{d: d, opts: opts, issue: issue, stderr: d.stderr, log: zerolog.Nop(), started: time.Now()}
	fd, tty := ui.TerminalFd(d.stderr)
	o.tty = tty
	if tty && !opts.quiet && d.actions == nil && d.getenv("TERM") != "dumb" {
		term := ui.NewTerminal(d.stderr, ui.WidthOf(fd))
		o.stderr = term
		o.live = ui.StartLive(term, ui.NewStatus(issue, maxAttempts))
	}
	if d.actions != nil {
		o.groups = ui.NewGroups(d.actions)
	}
	return o
}

// logFloor is the least level logged: with the status line, info logs are
// replaced by its event lines (debug still shows everything); --quiet
// leaves only errors.
func (o *runOutput) logFloor() zerolog.Level {
	switch {
	case o.opts.quiet:
		return zerolog.ErrorLevel
	case o.live != nil:
		return zerolog.WarnLevel
	}
	return zerolog.TraceLevel
}

// newLogger makes the run's logger, writing where the output says.
func (o *runOutput) newLogger(format, level string) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(level)
	floor := o.logFloor()
	if err == nil && lvl == zerolog.DebugLevel && !o.opts.quiet {
		floor = zerolog.TraceLevel
	}
	// Where the event lines are drawn, a record an event line says is left
	// out; --log-level debug shows everything (docs/design.md §D15).
	lines := o.live != nil && floor > zerolog.DebugLevel
	log, err := newLogger(o.stderr, o.tty, format, level, floor, lines, o.d.getenv)
	if err == nil {
		o.log = log
	}
	return log, err
}

// openEvents opens the --events destination: "-" is stderr (through the
// status line's writer when there is one); a file is appended to, created
// 0600 (tool inputs can hold anything the agent wrote). The file goes
// through a sink: a reader that goes away or stops reading (a FIFO, a
// pipe) loses the events from then on, and the run goes on (recorded as an
// output failure). Opening a FIFO waits for its reader; a signal meanwhile
// ends malarun before anything has started.
func (o *runOutput) openEvents(ctx context.Context) error {
	switch o.opts.eventsPath {
	case "":
		return nil
	case "-":
		o.eventLog = ui.NewEventLog(o.stderr)
	default:
		f, err := o.openEventsFile(ctx)
		if err != nil {
			return err
		}
		o.eventsFile = f
		w := io.Writer(f)
		if o.d.sinks != nil {
			o.eventsSink = o.d.sinks.add("events", f)
			w = o.eventsSink
		}
		o.eventLog = ui.NewEventLog(w)
	}
	o.events = ui.Go(o.eventLog.Event)
	return nil
}

func (o *runOutput) openEventsFile(ctx context.Context) (*os.File, error) {
	path := o.opts.eventsPath
	if st, err := os.Stat(path); err == nil && st.Mode()&os.ModeNamedPipe != 0 {
		o.log.Info().Str("events", path).Msg("--events names a FIFO: waiting for its reader (a signal gives up)")
	}
	f, err, stopped := interruptible(ctx, o.d, "waiting for a reader of --events "+path, func() (*os.File, error) {
		return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	}, func(f *os.File) { // the open may still succeed: close what it opens
		if f != nil {
			f.Close()
		}
	})
	switch {
	case stopped != nil:
		return nil, stopped
	case err != nil:
		return nil, usagef("--events: %v", err)
	}
	return f, nil
}

// flush hands what the run has emitted so far to its outputs and waits,
// each at most sinkFlushLimit, until they took it or failed: the
// supervisor calls it before the record's last save, so that the record
// knows every output that failed by then.
func (o *runOutput) flush() {
	if o.live != nil {
		o.live.Sync(sinkFlushLimit)
	}
	if o.events != nil {
		o.events.Sync(sinkFlushLimit)
	}
	o.d.sinks.flush()
}

// observer fans the supervisor's events out. The group markers are written
// at once, between the log lines of their attempt; the terminal and the
// events log take theirs through a queue: the observer must not block.
func (o *runOutput) observer() func(event.Event) {
	var fs []func(event.Event)
	if o.groups != nil {
		fs = append(fs, o.groups.Observe)
	}
	if o.live != nil {
		fs = append(fs, o.live.Observe)
	}
	if o.events != nil {
		fs = append(fs, o.events.Observe)
	}
	if len(fs) == 0 {
		return nil
	}
	return func(e event.Event) {
		for _, f := range fs {
			f(e)
		}
	}
}

// finish ends the display and writes what a run leaves: the result text
// (or, with --json, the report) on stdout, and under GitHub Actions the
// step summary. It returns the run's error, or one writing the result.
func (o *runOutput) finish(rep event.Report, runErr error) error {
	if o.live != nil {
		o.live.Close() // the status line is erased before anything else is written
	}
	if o.groups != nil {
		o.groups.Close()
	}
	if o.events != nil {
		o.events.Close()
		if err := o.eventLog.Err(); err != nil {
			o.log.Error().Err(err).Str("events", o.opts.eventsPath).Msg("could not write the events log")
		}
		if o.eventsSink != nil {
			o.eventsSink.Close(sinkFlushLimit)
		}
		if o.eventsFile != nil {
			if err := o.eventsFile.Close(); err != nil {
				o.log.Error().Err(err).Str("events", o.opts.eventsPath).Msg("could not write the events log")
			}
		}
	}
	// What was logged reaches stderr before the result reaches stdout: on
	// a terminal they are one screen, and the status line's erasure must
	// not land on the result.
	o.d.sinks.flush()
	reason := ""
	if runErr != nil {
		reason = runErr.Error()
	}
	report := ui.NewReport(rep, ui.Ending{Issue: o.issue, Outcome: string(outcomeFor(runErr)), ExitCode: exitCodeFor(runErr),
		Reason: reason, Started: o.started, Duration: time.Since(o.started), OutputFailures: o.d.sinks.failures()})

	// The last result's text: a CLI that waited for background tasks
	// printed more than one, and the last one decides.
	src := &resultSource{}
	if runErr == nil {
		src = o.openResult(rep)
		report.ResultTruncated = src.truncated
	}
	copyStarted := time.Now()
	var werr error
	switch {
	case o.opts.json:
		werr = o.writeJSON(report, src.writerTo(report.Result))
	case runErr == nil:
		werr = o.writeText(src.writerTo(rep.Result))
	}
	o.closeResult(src, copyStarted)
	if o.d.actions != nil {
		o.writeSummary(report)
	}
	if werr != nil && runErr == nil {
		return fmt.Errorf("write the result: %w", werr)
	}
	return runErr
}

// writeJSON writes the report with its result streamed from text. Under
// GitHub Actions "##[" is defused: it can only be inside a JSON string
// here, where \u005b decodes back to "[".
func (o *runOutput) writeJSON(r ui.Report, text io.WriterTo) error {
	w := o.d.stdout
	if isTerminal(w) {
		// A person reads it there: C1 and bidirectional controls, which
		// JSON leaves raw, are written as \u escapes (the same values).
		w = ui.InertJSONWriter(w)
	}
	return ui.WriteReport(w, r, text, o.d.actions != nil)
}

// writeSummary appends the Markdown summary to $GITHUB_STEP_SUMMARY.
func (o *runOutput) writeSummary(r ui.Report) {
	path := o.d.getenv("GITHUB_STEP_SUMMARY")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err == nil {
		_, err = io.WriteString(f, ui.Summary(r))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		o.log.Error().Err(err).Str("file", path).Msg("could not write the GitHub step summary")
	}
}

// isRegularFile reports whether w is a regular file (stdout redirected to
// one): nothing reads it for workflow commands, and markers would spoil it.
func isRegularFile(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode().IsRegular()
}
