package main

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/supervisor"
)

// Exit codes that are not tied to one supervisor error kind.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// exitRow is one line of the exit code contract: the code of an outcome.
// A run's error is matched to its row by the outcome it wraps; usage errors
// of the command line and the signal of an interruption are matched by
// exitCodeFor itself.
type exitRow struct {
	code int
	// outcome names the row in the --json report, the --events finished
	// line and the GitHub summary; a stable identifier, unlike doc.
	outcome outcome.Outcome
	doc     string
	// retry and next are what a scheduler running malarun (a Kubernetes
	// Job, Argo, a CI matrix) needs from an exit code: whether running the
	// issue again can help and when, and what that next run does with the
	// recorded one (`malarun exit-codes`).
	retry retryWhen
	next  nextRun
}

// retryWhen says whether running the issue again can help, and when.
type retryWhen string

const (
	// retryNow: a new invocation continues the work at once.
	retryNow retryWhen = "now"
	// retryAfterRetryAt: once the usage limit resets (retry_at in the
	// report and the record); sooner only hits the limit again.
	retryAfterRetryAt retryWhen = "after_retry_at"
	// retryNever: the same input ends the same way, or nothing is left to do.
	retryNever retryWhen = "never"
)

// nextRun says what the next invocation does with the run this
// invocation recorded.
type nextRun string

const (
	// nextResumes: it continues the recorded session (no reclaim counted).
	nextResumes nextRun = "resumes"
	// nextStartsOver: the run is closed; a new run starts from the prompt.
	nextStartsOver nextRun = "starts_over"
	// nextUnchanged: this invocation left the record as it found it.
	nextUnchanged nextRun = "unchanged"
	// nextRefused: it exits the same way until --reset starts the issue over.
	nextRefused nextRun = "refused"
	// nextAsRecorded: malarun's own trouble ended the invocation wherever
	// it was, so the record as last saved decides (malarun status shows
	// it). After a failed final save it still says processing: the next
	// invocation reclaims the run, resuming its session (docs/design.md §D19).
	nextAsRecorded nextRun = "as_recorded"
)

// exitCodes is the one exit code table: exitCodeFor maps with it and
// `malarun --help` prints it, so the two cannot drift.
func exitCodes() []exitRow {
	return []exitRow{
		{exitOK, outcome.Success, "the run finished and claude reported success", retryNever, nextStartsOver},
		{exitFailure, outcome.ErrorResult, "claude finished with an error result that retrying cannot fix, or refused to start for a cause a person must fix (a configuration file that does not parse, a proxy variable that is not a URL: the reason names it)", retryNever, nextStartsOver},
		// retryNever as for error_result: a scheduler sees only the code,
		// and a retry before someone fixes the machine fails the same way.
		{exitFailure, outcome.Error, "malarun's own trouble: a state_dir it cannot write, a result it cannot write, a record it cannot save (the run still says processing: the next invocation reclaims it)", retryNever, nextAsRecorded},
		{exitUsage, outcome.Usage, "usage or configuration error: bad flag or value, missing or empty prompt, invalid issue id", retryNever, nextUnchanged},
		{3, outcome.RetriesExhausted, "claude hung or crashed and the run gave up (retries exhausted)", retryNow, nextResumes},
		{4, outcome.NotSafeToRetry, "not safe to retry: tool calls happened and no session can be resumed", retryNever, nextStartsOver},
		{5, outcome.ContextExhausted, "context restarts exhausted: the context filled up more often than max_continuations allows", retryNever, nextStartsOver},
		{6, outcome.Poisoned, "this issue's malarun died too many times in a row (max_reclaims): poisoned until --reset", retryNever, nextRefused},
		{7, outcome.Busy, "another malarun is already running this issue", retryNever, nextUnchanged},
		{8, outcome.Auth, "authentication failure, or claude refused to start on its sign-in or its organization's policy", retryNever, nextStartsOver},
		{9, outcome.Budget, "cost budget (max_cost_usd, summed over all attempts) exhausted", retryNever, nextStartsOver},
		{10, outcome.APIUnreachable, "the API cannot be reached and never was in this run: name not found, connection refused, no route, a bad certificate, or https:// on a plain-HTTP port; check ANTHROPIC_BASE_URL", retryNever, nextStartsOver},
		{75, outcome.RateLimit, "usage or rate limit reached; try again later (EX_TEMPFAIL)", retryAfterRetryAt, nextResumes},
		{124, outcome.SessionTimeout, "session_timeout elapsed (as timeout(1))", retryNow, nextResumes},
		{127, outcome.StartFailed, "the claude binary was not found or could not start", retryNever, nextStartsOver},
		{129, outcome.Interrupted, "interrupted by SIGHUP (the terminal closed); the run is resumable", retryNow, nextResumes},
		{130, outcome.Interrupted, "interrupted by SIGINT; the run is resumable", retryNow, nextResumes},
		{131, outcome.Interrupted, "interrupted by SIGQUIT; the run is resumable", retryNow, nextResumes},
		{143, outcome.Interrupted, "interrupted by SIGTERM; the run is resumable", retryNow, nextResumes},
	}
}

// usageError marks errors of the command line itself (exit 2).
type usageError struct {
	err error
	// quiet: the user was already told (the help was printed).
	quiet bool
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usage(err error) error {
	if err == nil {
		return nil
	}
	return &usageError{err: err}
}

func usagef(format string, args ...any) error { return usage(fmt.Errorf(format, args...)) }

// exitCodeFor maps the error a command returned to the process exit code.
func exitCodeFor(err error) int {
	if err == nil {
		return exitOK
	}
	if _, ok := errors.AsType[*usageError](err); ok {
		return exitUsage
	}
	if errors.Is(err, outcome.Interrupted) {
		// As a shell reports death by a signal: 128 + its number.
		if re, ok := errors.AsType[*supervisor.RunError](err); ok {
			if sig, ok := re.Signal.(syscall.Signal); ok && sig > 0 {
				return 128 + int(sig)
			}
		}
		return 128 + int(syscall.SIGINT)
	}
	o := outcome.Of(err)
	for _, r := range exitCodes() {
		if r.outcome == o {
			return r.code
		}
	}
	return exitFailure
}

// outcomeFor names how a command ended, for the --json report: the
// outcome of its exit code row, usage for the command line's own errors,
// or outcome.Error for an unexpected error.
func outcomeFor(err error) outcome.Outcome {
	if _, ok := errors.AsType[*usageError](err); ok {
		return outcome.Usage
	}
	return outcome.Of(err)
}
