package supervisor

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/malarun/malarun/internal/environ"
	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/run"
)

// markerEnv is the environment variable every process of a run inherits,
// so that a later malarun can find what an outright-killed one left behind.
const markerEnv = "MALARUN_RUN"

// plan is how this invocation starts: a new run, or the continuation of
// one whose malarun died or was interrupted.
type plan struct {
	rec       record.Record
	begin     run.Beginning // what internal/run starts from
	prompt    string        // the run's original prompt file
	reclaimed bool          // the previous malarun died (not interrupted)
}

// planner makes the plan: it reads what an earlier malarun left of the
// issue (the record, the run folder), lets run.Open decide, and carries
// out what must be done before the run opens (leftovers ended, a prompt
// restored, a reclaim counted). cfg is the configuration as given.
type planner struct {
	cfg      Config
	log      zerolog.Logger
	self     proc.Identity
	exitCode func(error) int // Deps.exitCode
}

// makePlan reads the issue's record and the run folder, lets run.Open
// decide, and carries the decision out: it ends what is left of a dead
// malarun's process tree before anything new starts, and saves a
// reclaim's count before anything else happens (a malarun that dies while
// reclaiming is one more death).
func (p *planner) makePlan(j *journal.Journal, started time.Time) (*plan, error) {
	old, exists, err := j.Load()
	in := run.Invocation{Found: exists && err == nil, Damaged: err, Record: old, PromptSource: p.cfg.PromptSource, PromptSHA256: promptHash(p.cfg.Prompt),
		Reset: p.cfg.Reset, PromptChange: p.cfg.PromptChange, MaxReclaims: p.cfg.MaxReclaims,
		PoisonedExitCode: p.exitCode(&RunError{Kind: outcome.Poisoned}), Now: started}
	if in.Found {
		in.OwnerAlive = p.ownerAlive(old.Owner)
		if old.PromptSHA256 == "" {
			// A record older than version 4: its run folder's prompt.md,
			// hashed once here for the comparison and the record.
			in.FolderPromptSHA256 = recordedPromptHash(old)
		}
		in.StartedAttempts, in.NextAttempt = startedAttempts(old.RunDir), nextAttempt(old.RunDir)
	}
	o := run.Open(in)
	if in.Found && run.Resumable(old.Status) && !old.Poisoned && !in.Reset && old.PromptSHA256 == "" && in.FolderPromptSHA256 == "" {
		p.log.Warn().Str("run_dir", old.RunDir).Msg("the recorded run's prompt is gone, so this prompt cannot be compared with it; continuing the recorded run")
	}
	if o.Kind == run.OpenRefused && o.Refusal != outcome.Poisoned {
		return nil, &RunError{Kind: o.Refusal, Headline: o.Headline, Detail: o.Detail}
	}
	p.logChange(o.Change, old)
	if o.EndLeftovers {
		// Its malarun died: whatever comes next (a reclaim, --reset, or
		// poison), what it left running must not go on beside it.
		p.endLeftovers(old)
	}
	if o.Reset {
		p.log.Warn().Str("status", string(old.Status)).Bool("poisoned", old.Poisoned).Msg("--reset: starting the issue over; earlier runs stay on disk")
	}
	switch o.Kind {
	case run.OpenNew:
		return p.newPlan(o.Record, started)
	case run.OpenRefused: // poisoned, now or before
		if o.Save {
			if err := j.Save(o.Record); err != nil {
				return nil, err
			}
		}
		return nil, &RunError{Kind: o.Refusal, Detail: o.Detail}
	}
	pl := &plan{rec: o.Record, prompt: filepath.Join(o.Record.RunDir, "prompt.md"), begin: o.Begin, reclaimed: o.Kind == run.OpenReclaim}
	if err := p.restorePrompt(o.Record, pl.prompt); err != nil {
		return nil, err
	}
	if o.Save {
		if err := j.Save(o.Record); err != nil {
			return nil, fmt.Errorf("record the reclaim: %w", err)
		}
	}
	p.log.Info().Bool("reclaimed", pl.reclaimed).Int("reclaims", pl.rec.Reclaims).Int("attempts", pl.rec.Attempts).Str("session", pl.rec.SessionID).
		Str("cwd", pl.rec.Cwd).Str("run_dir", pl.rec.RunDir).Msg("continuing a recorded run")
	return pl, nil
}

// newPlan makes a new run's folder and prompt, and its record on the
// issue's history (run.NewRun).
func (p *planner) newPlan(history record.Record, started time.Time) (*plan, error) {
	home := environ.Get(p.cfg.Env, "HOME")
	if home != "" && !filepath.IsAbs(home) {
		// The CLI keeps its sessions under HOME: a relative one would name
		// another folder from another working directory.
		return nil, &RunError{Kind: outcome.Usage, Detail: fmt.Sprintf("HOME %q is not an absolute path", home)}
	}
	cwd, err := p.childCwd()
	if err != nil {
		return nil, err
	}
	runDir, err := createRunDir(p.cfg.StateDir, p.cfg.IssueID, started)
	if err != nil {
		return nil, stateDirError(p.cfg.StateDir, err)
	}
	prompt := filepath.Join(runDir, "prompt.md")
	if err := writePrivate(prompt, p.cfg.Prompt); err != nil {
		return nil, fmt.Errorf("save the prompt: %w", err)
	}
	rec := run.NewRun(history, run.Identity{Issue: p.cfg.IssueID, RunDir: runDir, Cwd: cwd, Home: home,
		PromptSHA256: promptHash(p.cfg.Prompt), Started: started})
	return &plan{rec: rec, prompt: prompt, begin: run.Beginning{FirstAttempt: 1}}, nil
}

// ownerAlive reports whether the recorded owner is provably alive: seen
// from the same boot and PID namespace (else its pid names a stranger or
// nothing), under its recorded start time (else the pid was reused). When
// that cannot be told (another host or container, an older record), the
// lock alone decides, as it always has (docs/many-issues.md "The lock needs
// a file system with real locks").
func (p *planner) ownerAlive(o record.Owner) bool {
	if o.Pid <= 0 || o.StartTime == 0 || !p.self.SameView(ownerIdentity(o)) {
		return false
	}
	if o.Pid == p.self.Pid && o.StartTime == p.self.StartTime {
		// This process ran the issue before (a program that calls Run more
		// than once) and let go of it: the lock it holds now says so.
		return false
	}
	return proc.Alive(o.Pid, o.StartTime)
}

func ownerIdentity(o record.Owner) proc.Identity {
	return proc.Identity{Pid: o.Pid, StartTime: o.StartTime, BootID: o.BootID, PidNS: o.PidNS}
}

// endLeftovers ends what a dead malarun's run left running: everything in
// the run's cgroup, its recorded processes (checked by start time) and
// anything carrying the run's marker.
func (p *planner) endLeftovers(rec record.Record) {
	var refs []proc.Ref
	if p.self.SameView(ownerIdentity(rec.Owner)) {
		// Recorded pids mean something only in the boot and the PID
		// namespace that recorded them; elsewhere they name strangers.
		// The marker search below only finds processes of this run.
		for _, t := range rec.Tree {
			refs = append(refs, proc.Ref{Pid: t.Pid, StartTime: t.StartTime})
		}
	} else if len(rec.Tree) > 0 {
		p.log.Warn().Str("owner_host", rec.Owner.Host).Msg("the run's malarun died on another host or in another container: its recorded processes are not signalled (a container's end kills them); those this one can see are found by the run's marker")
	}
	found, err := proc.EndCgroup(rec.Cgroup, proc.CgroupName(rec.Marker), p.cfg.KillGrace)
	if err != nil {
		p.log.Warn().Err(err).Msg("the run's recorded cgroup was not used: its processes are looked for by the run's marker only")
	}
	marked, left := proc.EndMarked(markerEnv+"="+rec.Marker, refs, p.cfg.KillGrace)
	found += marked
	if found > 0 {
		p.log.Info().Int("found", found).Int("left", len(left)).Msg("ended the processes a previous malarun left running")
	}
}

// nextAttempt is the first attempt number whose transcript does not exist:
// a malarun can die after creating attempt-N.jsonl and before recording it.
func nextAttempt(runDir string) int {
	n := 1
	entries, _ := os.ReadDir(runDir)
	for _, e := range entries {
		name := e.Name()
		if rest, ok := strings.CutPrefix(name, "attempt-"); ok {
			if k, err := strconv.Atoi(strings.SplitN(rest, ".", 2)[0]); err == nil && k >= n {
				n = k + 1
			}
		}
	}
	return n
}

// startedAttempts counts the attempts whose transcript (attempt-N.jsonl)
// is in the run folder: each was started, finished or not. Attempt numbers
// may skip (a prompt written for an attempt that never started), so they
// are counted, not read off the highest.
func startedAttempts(runDir string) int {
	entries, _ := os.ReadDir(runDir)
	n := 0
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "attempt-")
		if num, ok2 := strings.CutSuffix(rest, ".jsonl"); ok && ok2 {
			if _, err := strconv.Atoi(num); err == nil {
				n++
			}
		}
	}
	return n
}

// childCwd is the working directory the CLI runs in, made absolute.
// Clean: os.Getwd returns $PWD as it is spelled when it names the working
// directory ("/src/app/"), and the record holds clean paths.
func (p *planner) childCwd() (string, error) {
	if p.cfg.Cwd != "" {
		return filepath.Clean(p.cfg.Cwd), nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", &RunError{Kind: outcome.Usage, Detail: fmt.Sprintf("malarun's working directory cannot be read (%v): set cwd", err)}
	}
	return filepath.Clean(wd), nil
}
