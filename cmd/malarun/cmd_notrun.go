package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/malarun/malarun/internal/notrun"
	"github.com/malarun/malarun/internal/supervisor"
)

// notRunOptions is what `malarun not-run` needs.
type notRunOptions struct {
	prompt   string
	why      string
	exitCode int
	clear    string
}

// newNotRunCmd is the hidden command a fleet recipe calls for a prompt
// file it could not run (deploy/xargs/malarun-fleet.sh): a name that is no
// issue id, or a malarun that exited 2 (a configuration error, which
// leaves no record). It notes the file in state_dir/not-run/, where the
// morning's `malarun summary` reads it (docs/many-issues.md). It takes
// every flag a run takes (the recipe passes the runs' own arguments), so
// that it finds the state_dir the runs use: the keys and --config are read,
// the others passed over.
func newNotRunCmd(a *app) *cobra.Command {
	var opts notRunOptions
	cmd := &cobra.Command{
		Use:    "not-run --prompt FILE --why TEXT [--exit-code N] [run flags]   |   not-run --clear PROMPTS_DIR [run flags]",
		Short:  "Note a prompt file a fleet could not run, for malarun summary (used by the fleet recipe)",
		Hidden: true,
		Args:   cobra.ArbitraryArgs, // claude's arguments after --, passed over too
		RunE: func(cmd *cobra.Command, args []string) error {
			if (opts.prompt == "") == (opts.clear == "") {
				return usagef("not-run: give --prompt FILE (with --why) or --clear PROMPTS_DIR")
			}
			if dash := cmd.ArgsLenAtDash(); dash > 0 || dash < 0 && len(args) > 0 {
				return usagef("not-run: %q is not a flag (claude's arguments come after --)", args[0])
			}
			stateDir, err := notRunStateDir(cmd, a.deps)
			if err != nil {
				return err
			}
			if opts.clear != "" {
				_, err := notrun.Clear(stateDir, opts.clear)
				return err
			}
			n := notrun.Note{File: opts.prompt, Reason: opts.why, At: time.Now().UTC()}
			if cmd.Flags().Changed("exit-code") {
				if opts.exitCode < 0 || opts.exitCode > 255 {
					return usagef("--exit-code %d: an exit code is 0 to 255", opts.exitCode)
				}
				n.ExitCode = &opts.exitCode
			}
			if id := strings.TrimSuffix(filepath.Base(opts.prompt), ".md"); supervisor.ValidateIssueID(id) == nil {
				n.Issue = id
			}
			return notrun.Write(stateDir, n)
		},
	}
	fl := cmd.Flags()
	var run runOptions // the run's flags, --prompt among them: the file not run
	addRunFlags(fl, &run)
	fl.StringVar(&opts.why, "why", "", "why it was not run, in a line")
	fl.IntVar(&opts.exitCode, "exit-code", 0, "malarun's exit code, when it ran and refused the file (2)")
	fl.StringVar(&opts.clear, "clear", "", "remove the notes of the prompt files in `PROMPTS_DIR` (a fleet's start)")
	cmd.PreRun = func(*cobra.Command, []string) { opts.prompt = run.promptPath }
	return cmd
}

// notRunStateDir is the state_dir the run's arguments name. A config that
// fails elsewhere (the very error a note may be about) still gives it,
// when state_dir itself was read.
func notRunStateDir(cmd *cobra.Command, d *deps) (string, error) {
	lc, err := loadConfig(configKeys(), cmd.Flags(), d.getenv)
	if err == nil {
		return lc.settings.cfg.StateDir, nil
	}
	if _, read := lc.sources["state_dir"]; !read {
		return "", fmt.Errorf("no state_dir to note in: %w", err)
	}
	if lc.settings.cfg.StateDir == "" {
		dir := xdgDir(d.getenv, "XDG_STATE_HOME", filepath.Join(".local", "state"))
		if dir == "" {
			return "", errors.New("no state_dir to note in: state_dir is not set and neither XDG_STATE_HOME nor HOME is")
		}
		lc.settings.cfg.StateDir = filepath.Join(dir, "malarun")
	}
	return filepath.Abs(lc.settings.cfg.StateDir)
}
