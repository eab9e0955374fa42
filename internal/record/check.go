package record

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/malarun/malarun/internal/stream"
)

// A record is read back by a later malarun, which acts on it: it resumes
// the session it names (an argument of claude), reads and writes the run
// folder it names, and signals the processes it names. The file may have
// been edited, restored from an old CI cache or planted, so every field
// that names a path, a pid, a session or a host is checked against what
// malarun itself writes; a record that fails is damaged (exit 2, `status`
// says so, --reset starts over), never followed.

// maxCount bounds a count in a record: far more attempts, reclaims or tool
// calls than any run makes, and far from overflowing when one is added.
const maxCount = 1 << 30

// MaxUSD bounds a cost in a record. The stream's own bound is per process
// (docs/design.md §D14); summed over every attempt of every run of an issue
// it stays far below this, which keeps every sum finite.
const MaxUSD = 1e12

// RetryAt lies in [2000-01-01, 2100-01-01) (unix seconds): a usage limit
// resets within days, and any time in this range encodes as RFC 3339.
const (
	earliestRetryAt = 946684800
	latestRetryAt   = 4102444800
)

// check refuses what malarun never writes. It needs only the record; where
// the record lies (its folder) is checked by CheckPlace.
func check(r Record) error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	checkIdentity(r, bad)
	checkPlaces(r, bad)
	checkCounts(r, bad)
	checkRoom(r.PhaseRoom, bad)
	checkSideEffects(r.SideEffects, bad)
	checkInFlight(r, bad)
	checkMCP(r.MCPNotConnected, bad)
	checkOutputFailures(r.OutputFailures, bad)
	checkPrompts(r, bad)
	return errors.Join(errs...)
}

// checkIdentity checks what names the run: its issue, runs and sessions,
// the marker its processes carry, its trace, and its checkpoint.
func checkIdentity(r Record, bad func(string, ...any)) {
	if err := CheckIssueName(r.Issue); err != nil {
		bad("%v", err)
	}
	if r.Poisoned && r.Status != Failed {
		bad("poisoned with status %s: malarun poisons a run as it fails it", r.Status)
	}
	if r.RunID != "" && !ValidRunID(r.RunID) {
		bad("run_id %q is not a run id malarun makes", r.RunID)
	}
	seen := make(map[string]bool, len(r.Runs))
	for _, id := range r.Runs {
		if !ValidRunID(id) || seen[id] {
			bad("runs holds %q, not a run id malarun makes or twice", id)
		}
		seen[id] = true
	}
	if r.RunID != "" && (len(r.Runs) == 0 || r.Runs[len(r.Runs)-1] != r.RunID) {
		bad("runs does not end with the run %q: malarun adds each run as it makes it", r.RunID)
	}
	if len(r.Checkpoint) > stream.MaxResultBytes {
		bad("checkpoint is %d bytes, more than any reply malarun keeps (%d)", len(r.Checkpoint), stream.MaxResultBytes)
	}
	if (r.RunID == "") != (r.RunDir == "") {
		bad("run_id %q and run_dir %q must be set together", r.RunID, r.RunDir)
	}
	if want := markerOf(r.Issue, r.RunID); r.Marker != want {
		bad("marker %q is not %q", r.Marker, want)
	}
	if !r.Trace.IsZero() && !r.Trace.Valid() {
		bad("trace %q/%q is not a W3C trace id and span id", r.Trace.TraceID, r.Trace.SpanID)
	}
	if r.SessionID != "" && !ValidSessionID(r.SessionID) {
		bad("session_id %q is not a session id", r.SessionID)
	}
	for _, id := range r.Sessions {
		if !ValidSessionID(id) {
			bad("sessions holds %q, not a session id", id)
		}
	}
}

// checkPlaces checks where the run was and what ran it: its cgroup,
// folders, owner and process tree.
func checkPlaces(r Record, bad func(string, ...any)) {
	if !isPath(r.Cgroup, true) || len(r.Cgroup) > maxCgroupPath {
		bad("cgroup %q is not an absolute path", r.Cgroup) // its name is checked where it is used (proc.EndCgroup)
	}
	if !isPath(r.Cwd, false) {
		bad("cwd %q is not an absolute path", r.Cwd)
	}
	if !isPath(r.Home, true) {
		bad("home %q is not an absolute path", r.Home) // as HOME was: "/home/me/" is fine
	}
	checkOwner(r.Owner, bad)
	if len(r.Tree) > 1 {
		bad("tree holds %d processes, malarun records one (the CLI)", len(r.Tree))
	}
	for _, p := range r.Tree {
		// A pid is signalled only as the process that started at its
		// recorded time: 0 would match any process, and pid 1 or less is
		// init, a process group or every process.
		if p.Pid <= 1 || p.StartTime == 0 {
			bad("tree holds pid %d with start time %d", p.Pid, p.StartTime)
		}
	}
}

// checkCounts checks the run's counts, amounts, times and words: each
// within what malarun ever records.
func checkCounts(r Record, bad func(string, ...any)) {
	for name, n := range map[string]int{"attempts": r.Attempts, "reclaims": r.Reclaims, "run_reclaims": r.RunReclaims,
		"killed_attempts": r.KilledAttempts, "continuations": r.Continuations, "results_lost": r.ResultsLost,
		"no_response.retries": r.NoResponse.Retries} {
		if n < 0 || n > maxCount {
			bad("%s is %d", name, n)
		}
	}
	for name, v := range map[string]float64{"cost_usd": r.CostUSD, "total_cost_usd": r.TotalCostUSD} {
		if !ValidUSD(v) {
			bad("%s %g is not an amount malarun records (0 to %g)", name, v, MaxUSD)
		}
	}
	for name, ms := range map[string]int64{"no_response.waited_ms": r.NoResponse.WaitedMS, "no_response.ms": r.NoResponse.MS} {
		if ms < 0 || ms > maxDurationMS {
			bad("%s is %d", name, ms)
		}
	}
	if r.NoResponse.WaitedMS > r.NoResponse.MS {
		bad("no_response.waited_ms %d is more than no_response.ms %d", r.NoResponse.WaitedMS, r.NoResponse.MS)
	}
	if r.ResumeReason != RecordWord(r.ResumeReason) {
		bad("resume_reason %q is not a word claude writes", r.ResumeReason)
	}
	if r.ExitCode < 0 || r.ExitCode > 255 {
		bad("exit_code %d is not an exit code", r.ExitCode)
	}
	if at := r.RetryAt.Unix(); !r.RetryAt.IsZero() && (at < earliestRetryAt || at >= latestRetryAt) {
		bad("retry_at %s is not a time a usage limit resets at", r.RetryAt.Format(time.RFC3339))
	}
	if r.KilledAttempts > r.Attempts {
		bad("killed_attempts %d is more than attempts %d", r.KilledAttempts, r.Attempts)
	}
}

// maxDurationMS bounds a recorded duration: a century in milliseconds,
// far past any run, and far inside an int64 of nanoseconds' reach once
// converted (2.9e8 years). maxReasonWord bounds a word of claude's kept
// in the record (resume_reason: interrupted_turn, host_draining, ...).
const (
	maxDurationMS = 100 * 365 * 24 * 3600 * 1000
	maxReasonWord = 64
)

// RecordWord is a word of claude's (a resume_reason) as the record keeps
// it: itself when it is a short word of letters, digits, '_', '-' and '.',
// else "other", so that what the CLI prints can never make a record that
// does not pass check.
func RecordWord(s string) string {
	if len(s) > maxReasonWord || strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") != "" {
		return "other"
	}
	return s
}

// checkPrompts: the hashes are SHA-256 in hex, the decisions malarun's.
func checkPrompts(r Record, bad func(string, ...any)) {
	if r.PromptSHA256 != "" && !validSHA256(r.PromptSHA256) {
		bad("prompt_sha256 %q is not a SHA-256 in hex", r.PromptSHA256)
	}
	if len(r.PromptChanges) > MaxPromptChanges {
		bad("prompt_changes holds %d changes, malarun keeps at most %d", len(r.PromptChanges), MaxPromptChanges)
	}
	for _, c := range r.PromptChanges {
		if c.Decision != PromptResume && c.Decision != PromptStartOver {
			bad("prompt_changes holds the decision %q", c.Decision)
		}
		if !ValidRunID(c.RunID) {
			bad("prompt_changes names the run %q, not a run id malarun makes", c.RunID)
		}
		if !validSHA256(c.RecordedSHA256) || !validSHA256(c.GivenSHA256) {
			bad("prompt_changes holds hashes %q and %q, not SHA-256s in hex", c.RecordedSHA256, c.GivenSHA256)
		}
	}
}

// ValidUSD reports whether v is an amount a record can hold.
func ValidUSD(v float64) bool {
	return !math.IsNaN(v) && v >= 0 && v <= MaxUSD
}

func checkOwner(o Owner, bad func(string, ...any)) {
	if o.Pid < 0 {
		bad("owner pid %d", o.Pid)
	}
	if len(o.Host) > 255 || strings.ContainsFunc(o.Host, func(r rune) bool { return !unicode.IsPrint(r) }) {
		bad("owner host %q is not a host name", o.Host)
	}
	// Linux writes its boot id and a namespace's inode number; darwin
	// "darwin:" and its boot session's id, and "darwin" (proc.Identity).
	bootID := strings.TrimPrefix(o.BootID, darwinView+":")
	if len(bootID) > 64 || strings.ContainsFunc(bootID, func(r rune) bool { return !(r == '-' || isLowerHex(string(r))) }) {
		bad("owner boot_id %q is not a boot id", o.BootID)
	}
	if o.PidNS != darwinView && (len(o.PidNS) > 20 || strings.ContainsFunc(o.PidNS, func(r rune) bool { return r < '0' || r > '9' })) {
		bad("owner pid_ns %q is not a namespace number", o.PidNS)
	}
}

// darwinView marks the owner fields a malarun on darwin writes.
const darwinView = "darwin"

// isPath: an absolute path without NUL (it becomes the CLI's working
// directory or HOME), or "" where empty is allowed.
// maxCgroupPath bounds the recorded cgroup: the kernel's PATH_MAX.
const maxCgroupPath = 4096

func isPath(p string, emptyOK bool) bool {
	if p == "" {
		return emptyOK
	}
	return filepath.IsAbs(p) && !strings.ContainsRune(p, 0)
}

func markerOf(issue, runID string) string {
	if runID == "" {
		return ""
	}
	return issue + "/" + runID
}

// CheckPlace checks the record against the folder it was read from, dir
// (<state_dir>/<issue>): it is that issue's, and its run folder lies in
// dir/runs. A state directory moved or restored at another path keeps its
// records usable: RunDir is then set to where the run folder is now, and
// malarun only ever uses that path, never one read from the file.
func CheckPlace(r *Record, dir string) error {
	issue := filepath.Base(dir)
	if r.Issue != issue {
		return fmt.Errorf("the record is issue %q's, but lies in %s", r.Issue, dir)
	}
	if r.RunID == "" {
		return nil
	}
	rd := r.RunDir
	if !isPath(rd, false) || filepath.Clean(rd) != rd || filepath.Base(rd) != r.RunID || filepath.Base(filepath.Dir(rd)) != "runs" ||
		filepath.Base(filepath.Dir(filepath.Dir(rd))) != issue {
		return fmt.Errorf("run_dir %q is not <state_dir>/%s/runs/%s", rd, issue, r.RunID)
	}
	r.RunDir = filepath.Join(dir, "runs", r.RunID)
	return nil
}
