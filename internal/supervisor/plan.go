package supervisor

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/environ"
	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/run"
	"github.com/malarun/malarun/internal/usagelimit"
)

// markerEnv is the environment variable every process of a run inherits,
// so that a later malarun can find what an outright-killed one left behind.
const markerEnv = "MALARUN_RUN"

// plan is how this invocation starts: a new run, or the continuation of
// one whose malarun died or was interrupted.
type plan struct {
	rec       journal.Record
	begin     run.Beginning // what internal/run starts from
	prompt    string        // the run's original prompt file
	reclaimed bool          // the previous malarun died (not interrupted)
}

// makePlan reads the issue's record and decides. It ends what is left of
// a dead malarun's process tree before anything new starts.
func (r *runner) makePlan(j *journal.Journal, started time.Time) (*plan, error) {
	old, exists, err := j.Load()
	if err != nil && !r.cfg.Reset {
		return nil, &RunError{Kind: outcome.Usage, Detail: err.Error()}
	}
	if exists && (old.Status == journal.Processing || old.Status == journal.Waiting) && r.ownerAlive(old.Owner) {
		// The lock was free only because its file was removed (a cleanup
		// job, a tidied state directory): the malarun that holds the run is
		// alive. Taking it over would kill its work; even --reset must not.
		o := old.Owner
		return nil, &RunError{Kind: outcome.Busy, Detail: fmt.Sprintf(
			"issue %s is being run by another malarun (pid %d on %s since %s); its lock file was missing, so the record's owner was checked: it is alive",
			old.Issue, o.Pid, o.Host, o.StartedAt.UTC().Format(time.RFC3339))}
	}
	var change *journal.PromptChange
	if exists && resumable(old.Status) && !old.Poisoned && !r.cfg.Reset {
		if old.PromptSHA256 == "" {
			// A record older than version 4: its run folder's prompt.md,
			// hashed once here for the comparison and the record.
			old.PromptSHA256 = recordedPromptHash(old)
		}
		// Before anything changes: a refusal leaves the record, and what a
		// dead malarun left running, as they are.
		if change, err = r.promptChange(old, started); err != nil {
			return nil, err
		}
	}
	if exists && old.Status == journal.Processing {
		// Its malarun died: whatever comes next (a reclaim, --reset, or
		// poison), what it left running must not go on beside it.
		r.endLeftovers(old)
	}
	if r.cfg.Reset && exists {
		r.log.Warn().Str("status", string(old.Status)).Bool("poisoned", old.Poisoned).Msg("--reset: starting the issue over; earlier runs stay on disk")
		old.Poisoned, old.Status = false, journal.Failed
	}
	if change != nil && change.Decision == journal.PromptStartOver {
		old.Status = journal.Failed // the recorded run is closed, as by --reset
	}
	var pl *plan
	switch {
	case exists && old.Poisoned:
		return nil, &RunError{Kind: outcome.Poisoned, Detail: fmt.Sprintf(
			"issue %s was poisoned after %d malarun deaths in a row (%s); run with --reset to try again", old.Issue, old.Reclaims, old.Reason)}
	case exists && resumable(old.Status):
		// A waiting record is continued whether its malarun exited 75 or
		// died while it slept: either way no reclaim is counted (only
		// processing means a malarun died with claude running).
		pl, err = r.resumePlan(j, old)
	default:
		pl, err = r.newPlan(old, started)
	}
	if err != nil {
		return nil, err
	}
	keepPromptChange(&pl.rec, change)
	return pl, nil
}

// resumable: a run in this state is continued by the issue's next invocation.
func resumable(s journal.Status) bool {
	return s == journal.Processing || s == journal.Interrupted || s == journal.Stopped || s == journal.Waiting
}

func (r *runner) newPlan(old journal.Record, started time.Time) (*plan, error) {
	if home := environ.Get(r.cfg.Env, "HOME"); home != "" && !filepath.IsAbs(home) {
		// The CLI keeps its sessions under HOME: a relative one would name
		// another folder from another working directory.
		return nil, &RunError{Kind: outcome.Usage, Detail: fmt.Sprintf("HOME %q is not an absolute path", home)}
	}
	cwd, err := r.childCwd()
	if err != nil {
		return nil, err
	}
	runDir, err := createRunDir(r.cfg.StateDir, r.cfg.IssueID, started)
	if err != nil {
		return nil, stateDirError(r.cfg.StateDir, err)
	}
	prompt := filepath.Join(runDir, "prompt.md")
	if err := writePrivate(prompt, r.cfg.Prompt); err != nil {
		return nil, fmt.Errorf("save the prompt: %w", err)
	}
	runID := filepath.Base(runDir)
	rec := journal.Record{
		Issue: r.cfg.IssueID, Status: journal.Processing,
		Cwd: cwd, Home: environ.Get(r.cfg.Env, "HOME"),
		RunID: runID, RunDir: runDir, Runs: append(old.Runs, runID), Sessions: []string{},
		TotalCostUSD: old.TotalCostUSD, StartedAt: started,
		Marker: r.cfg.IssueID + "/" + runID, PromptSHA256: promptHash(r.cfg.Prompt),
		PromptChanges: old.PromptChanges, // the issue's history, like Runs
	}
	return &plan{rec: rec, prompt: prompt, begin: run.Beginning{FirstAttempt: 1}}, nil
}

// resumePlan continues a recorded run in its own working directory and
// HOME (the CLI finds the session under both), in the same session.
func (r *runner) resumePlan(j *journal.Journal, rec journal.Record) (*plan, error) {
	p := &plan{rec: rec, prompt: filepath.Join(rec.RunDir, "prompt.md")}
	if err := r.restorePrompt(rec, p.prompt); err != nil {
		return nil, err
	}
	if rec.Status == journal.Processing {
		if err := r.reclaim(j, p); err != nil {
			return nil, err
		}
	}
	p.begin = run.Beginning{Continued: true, FirstAttempt: nextAttempt(rec.RunDir), Record: recorded(p.rec)}
	if rec.Status == journal.Stopped || rec.Status == journal.Waiting {
		// It stopped on its invocation's limits: the next gets its own.
		p.begin.Record.NotCounted = rec.Attempts
	}
	if rec.Status == journal.Waiting {
		p.begin.Record.Limited = &usagelimit.Limit{RetryAt: rec.RetryAt, Type: rec.LimitType, Waitable: true}
		if rec.SessionID == "" && rec.Checkpoint == "" && rec.Attempts == 0 {
			// Stopped by another malarun's limit before its first attempt:
			// nothing to continue, the task starts as it would have.
			p.begin.Continued, p.begin.Record.Limited = false, nil
		}
	}
	r.log.Info().Bool("reclaimed", p.reclaimed).Int("reclaims", p.rec.Reclaims).Int("attempts", p.rec.Attempts).Str("session", rec.SessionID).
		Str("cwd", rec.Cwd).Str("run_dir", rec.RunDir).Msg("continuing a recorded run")
	return p, nil
}

// reclaim takes over a run whose malarun died (the lock was free and the
// record said processing): one more reclaim, poisoned past max_reclaims.
func (r *runner) reclaim(j *journal.Journal, p *plan) error {
	rec := p.rec
	p.reclaimed = true
	p.rec.Reclaims++
	p.rec.RunReclaims++
	// The attempt it was running when it died happened: the run's count
	// says so. It was cut by malarun's death, not by claude, so it uses
	// none of max_attempts (max_reclaims bounds deaths).
	cut := max(0, startedAttempts(rec.RunDir)-rec.Attempts)
	p.rec.Attempts += cut
	p.rec.KilledAttempts += cut
	// Counted before anything else happens: a malarun that dies while
	// reclaiming is one more death.
	if err := j.Save(p.rec); err != nil {
		return fmt.Errorf("record the reclaim: %w", err)
	}
	if p.rec.Reclaims <= r.cfg.MaxReclaims {
		return nil
	}
	p.rec.Poisoned, p.rec.Status = true, journal.Failed
	p.rec.Reason = fmt.Sprintf("malarun died during this run %d times in a row (max_reclaims %d)", p.rec.Reclaims, r.cfg.MaxReclaims)
	p.rec.ExitCode = r.exitCode(&RunError{Kind: outcome.Poisoned})
	if err := j.Save(p.rec); err != nil {
		return err
	}
	return &RunError{Kind: outcome.Poisoned, Detail: p.rec.Reason + "; run with --reset to try again"}
}

// recorded is what the record says of the run, for internal/run.
func recorded(rec journal.Record) run.Recorded {
	return run.Recorded{Attempts: rec.Attempts, NotCounted: rec.KilledAttempts, SessionID: rec.SessionID, SessionTalked: rec.SessionTalked,
		SideEffects: rec.SideEffects, CostUSD: rec.CostUSD, Continuations: rec.Continuations, Checkpoint: rec.Checkpoint,
		Running: callsOfRecord(rec.Running), Tasks: tasksOfRecord(rec.Tasks), Talked: talkedInRecord(rec), Room: roomOfRecord(rec.PhaseRoom)}
}

// talkedInRecord reports whether a recorded run already had an answer from
// the API (§D17): its session talked, it restarted on a full context, it
// wrote a checkpoint, or it cost something. A run resumed from such a
// record treats a connection failure as the network going away.
func talkedInRecord(rec journal.Record) bool {
	return rec.APIAnswered || rec.SessionTalked || rec.Continuations > 0 || rec.Checkpoint != "" || rec.CostUSD > 0
}

// ownerAlive reports whether the recorded owner is provably alive: seen
// from the same boot and PID namespace (else its pid names a stranger or
// nothing), under its recorded start time (else the pid was reused). When
// that cannot be told (another host or container, an older record), the
// lock alone decides, as it always has (docs/many-issues.md "The lock needs
// a file system with real locks").
func (r *runner) ownerAlive(o journal.Owner) bool {
	if o.Pid <= 0 || o.StartTime == 0 || !r.self.SameView(ownerIdentity(o)) {
		return false
	}
	if o.Pid == r.self.Pid && o.StartTime == r.self.StartTime {
		// This process ran the issue before (a program that calls Run more
		// than once) and let go of it: the lock it holds now says so.
		return false
	}
	return proc.Alive(o.Pid, o.StartTime)
}

func ownerIdentity(o journal.Owner) proc.Identity {
	return proc.Identity{Pid: o.Pid, StartTime: o.StartTime, BootID: o.BootID, PidNS: o.PidNS}
}

// endLeftovers ends what a dead malarun's run left running: everything in
// the run's cgroup, its recorded processes (checked by start time) and
// anything carrying the run's marker.
func (r *runner) endLeftovers(rec journal.Record) {
	var refs []proc.Ref
	if r.self.SameView(ownerIdentity(rec.Owner)) {
		// Recorded pids mean something only in the boot and the PID
		// namespace that recorded them; elsewhere they name strangers.
		// The marker search below only finds processes of this run.
		for _, t := range rec.Tree {
			refs = append(refs, proc.Ref{Pid: t.Pid, StartTime: t.StartTime})
		}
	} else if len(rec.Tree) > 0 {
		r.log.Warn().Str("owner_host", rec.Owner.Host).Msg("the run's malarun died on another host or in another container: its recorded processes are not signalled (a container's end kills them); those this one can see are found by the run's marker")
	}
	found, err := proc.EndCgroup(rec.Cgroup, proc.CgroupName(rec.Marker), r.cfg.KillGrace)
	if err != nil {
		r.log.Warn().Err(err).Msg("the run's recorded cgroup was not used: its processes are looked for by the run's marker only")
	}
	marked, left := proc.EndMarked(markerEnv+"="+rec.Marker, refs, r.cfg.KillGrace)
	found += marked
	if found > 0 {
		r.log.Info().Int("found", found).Int("left", len(left)).Msg("ended the processes a previous malarun left running")
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
func (r *runner) childCwd() (string, error) {
	if r.cfg.Cwd != "" {
		return filepath.Clean(r.cfg.Cwd), nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", &RunError{Kind: outcome.Usage, Detail: fmt.Sprintf("malarun's working directory cannot be read (%v): set cwd", err)}
	}
	return filepath.Clean(wd), nil
}
