package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/malarun/malarun/internal/event"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	iproc "github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/supervisor"
	"github.com/malarun/malarun/internal/telemetry"
	"github.com/malarun/malarun/internal/usd"
)

// reservedNames can never be issue ids: commands, today's and planned ones,
// so that `malarun status` keeps meaning the same thing once it exists.
func reservedNames() []string {
	return []string{"version", "status", "summary", "show", "exit-codes", "help", "completion", "man", iproc.GuardCommand, "not-run"}
}

// isReservedName reports whether id is a command's name, in any case.
func isReservedName(id string) bool {
	return slices.ContainsFunc(reservedNames(), func(r string) bool { return strings.EqualFold(id, r) })
}

// runOptions is everything a run needs from the command line.
type runOptions struct {
	issueID    string
	promptPath string
	extraArgs  []string
	reset      bool
	version    bool
	output     outputOptions
	config     loadedConfig
}

// complete checks the arguments and loads the configuration. Cheap checks
// first, so a mistake is reported before a prompt is read from stdin.
func (o *runOptions) complete(cmd *cobra.Command, args []string, d *deps) error {
	positional, extra := args, []string(nil)
	if dash := cmd.ArgsLenAtDash(); dash >= 0 {
		positional, extra = args[:dash], args[dash:]
	}
	promptSet := cmd.Flags().Changed("prompt")
	if len(positional) == 0 {
		return usagef("missing ISSUE_ID: usage: malarun ISSUE_ID --prompt FILE [-- extra claude args]")
	}
	id := positional[0]
	reserved := isReservedName(id)
	if !promptSet {
		// Without --prompt this cannot be a run: most likely a mistyped command.
		if s := cmd.SuggestionsFor(id); len(s) > 0 {
			return usagef("unknown command %q; did you mean %q?", id, s[0])
		}
		if reserved {
			return usagef("unknown command %q: not in this version of malarun", id)
		}
	}
	if reserved {
		return usagef("%q is reserved for a malarun command, so it cannot be an issue id: choose another one", id)
	}
	if err := supervisor.ValidateIssueID(id); err != nil {
		return usage(err)
	}
	if !promptSet {
		return usagef("missing --prompt: a run needs the task, e.g. malarun %s --prompt task.md (--prompt - reads stdin)", id)
	}
	if o.promptPath == "" {
		return usagef("--prompt is empty: give a file, or - to read the prompt from stdin")
	}
	if len(positional) > 1 {
		return usagef("unexpected argument %q after the issue id: claude's arguments go after --, e.g. malarun %s --prompt FILE -- %s",
			positional[1], id, strings.Join(positional[1:], " "))
	}
	if len(extra) == 0 {
		extra = nil
	}
	if err := supervisor.CheckExtraArgs(extra); err != nil {
		return usage(err)
	}
	lc, err := loadConfig(configKeys(), cmd.Flags(), d.getenv)
	if err != nil {
		return err
	}
	o.issueID, o.extraArgs, o.config = id, extra, lc
	return nil
}

// runRun reads the prompt, builds the validated Config and runs it, then
// reports how the run ended.
func runRun(ctx context.Context, opts runOptions, d *deps) error {
	// One processor: a run is a few goroutines that wait, and a second P
	// only adds threads that wake each other for every line (design §D32).
	// A GOMAXPROCS the user set is theirs.
	if d.setProcs != nil && d.getenv("GOMAXPROCS") == "" {
		d.setProcs(1)
	}
	out := newRunOutput(opts.output, opts.issueID, opts.config.settings.cfg.MaxAttempts, d)
	report, tel, err := runSupervised(ctx, opts, d, out)
	// The last spans and the metrics leave after the result is shown,
	// within telemetry.FlushLimit.
	defer tel.Shutdown()
	return out.finish(report, err)
}

func runSupervised(ctx context.Context, opts runOptions, d *deps, out *runOutput) (event.Report, *telemetry.Run, error) {
	prompt, source, err := readPrompt(ctx, opts.promptPath, d)
	if err != nil {
		return event.Report{}, nil, err
	}
	s := opts.config.settings
	log, err := out.newLogger(s.logFormat, s.logLevel)
	if err != nil {
		return event.Report{}, nil, usage(err)
	}
	cfg := s.cfg
	cfg.IssueID = opts.issueID
	cfg.Prompt = prompt
	cfg.PromptSource = source
	cfg.ExtraArgs = opts.extraArgs
	cfg.Reset = opts.reset
	// The child gets malarun's whole environment (API keys included); it is
	// never logged.
	cfg.Env = d.environ()
	if err := cfg.Validate(); err != nil {
		return event.Report{}, nil, usage(err)
	}
	if err := out.openEvents(ctx); err != nil {
		return event.Report{}, nil, err
	}
	logConfig(log, opts, cfg)
	sd := supervisor.Deps{Log: log, Signals: d.signals, Guard: guardCommand(),
		ExitCode: exitCodeFor, Observer: out.observer(), OutputFailures: d.sinks.failures, FlushOutputs: out.flush}
	tel := startTelemetry(d, cfg.IssueID, log)
	withTelemetry(tel, &cfg, &sd)
	report, err := d.runSupervisor(ctx, cfg, sd)
	finishTelemetry(tel, report, err)
	log.Debug().Str("run_dir", report.RunDir).Int("attempts", report.Attempts).
		Str("session_id", report.SessionID).Float64("cost_usd", usd.Round(report.CostUSD)).
		Int("exit_code", exitCodeFor(err)).Msg("run ended")
	return report, tel, err
}

func logConfig(log zerolog.Logger, opts runOptions, cfg supervisor.Config) {
	if log.GetLevel() > zerolog.DebugLevel {
		return
	}
	ev := log.Debug().Str("issue", cfg.IssueID).Str("prompt", cfg.PromptSource).Int("prompt_bytes", len(cfg.Prompt)).
		Strs("extra_args", cfg.ExtraArgs).Str("config_file", opts.config.file)
	s := opts.config.settings
	for _, k := range configKeys() {
		ev = ev.Str(k.name, k.format(&s)+" ("+opts.config.sources[k.name]+")")
	}
	ev.Msg("configuration")
}

// maxPromptBytes bounds the prompt (supervisor.MaxPromptBytes).
const maxPromptBytes = supervisor.MaxPromptBytes

// readPrompt returns the prompt and where it came from ("stdin" or the
// path). The path may be a FIFO, /dev/stdin or a process substitution
// that has written nothing yet, whose open or read can block for ever: a
// signal meanwhile ends malarun at once, before anything has started.
func readPrompt(ctx context.Context, path string, d *deps) ([]byte, string, error) {
	source := path
	open := func() (io.ReadCloser, error) { return os.Open(path) }
	if path == "-" {
		source = "stdin"
		open = func() (io.ReadCloser, error) { return io.NopCloser(d.stdin), nil }
	}
	b, err, stopped := interruptible(ctx, d, "reading the prompt from "+source, func() ([]byte, error) {
		f, err := open()
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return io.ReadAll(io.LimitReader(f, maxPromptBytes+1))
	}, nil)
	switch {
	case stopped != nil:
		return nil, source, stopped
	case errors.Is(err, fs.ErrNotExist):
		return nil, source, usagef("prompt file %s does not exist", path)
	case err != nil && path == "-":
		return nil, source, usagef("reading the prompt from stdin: %v", err)
	case err != nil:
		if pe, ok := errors.AsType[*fs.PathError](err); ok {
			err = pe.Err
		}
		return nil, source, usagef("cannot read prompt file %s: %v", path, err)
	case len(b) > maxPromptBytes:
		return nil, source, usagef("the prompt from %s is larger than %d MiB, the most malarun sends: put large material in files the agent reads, and name them in the prompt",
			source, maxPromptBytes>>20)
	case len(bytes.TrimSpace(b)) == 0:
		return nil, source, usagef("the prompt from %s is empty", source)
	}
	return b, source, nil
}
