package fleet

import (
	"time"

	"github.com/malarun/malarun/internal/stream"
)

// version is the summary's JSON version (docs/summary.schema.json).
const version = 1

// Summary is a state directory at a glance. Its JSON form is the --format
// json output; the other forms say the same. Every list in it is bounded
// (bounds.go): the JSON form writes at most its bound of each, with a
// count of the rest.
type Summary struct {
	Version  int       `json:"version"`
	StateDir string    `json:"state_dir"`
	MadeAt   time.Time `json:"made_at"`
	Since    time.Time `json:"since,omitzero"`
	Issues   int       `json:"issues"`
	// NotRead counts the issue folders past maxIssues, never opened.
	NotRead int `json:"issues_not_read,omitempty"`
	// ActOn are what a person must act on, first: credentials, credit, a
	// configuration error, prompt files a fleet could not run, ...
	ActOn []ActOn `json:"act_on"`
	// Changes is what changed since an earlier summary (--since-summary).
	Changes *Changes `json:"since_summary,omitempty"`
	// ByStatus counts the issues by status word, in statusOrder.
	ByStatus []Count `json:"by_status"`
	// Ended are the runs that ended without success, grouped by outcome
	// and reason; Waiting wait for a usage limit; Running run now (or
	// their malarun is gone: orphaned); Damaged could not be read.
	Ended   []Group   `json:"ended_unsuccessfully"`
	Waiting []Row     `json:"waiting"`
	Running []Row     `json:"running"`
	Damaged []Damaged `json:"damaged"`
	// Skipped are folders of the state directory that are not issues;
	// Linked are symbolic links there, never followed (an issue's folder
	// is a folder); NotRun are prompt files a fleet recipe could not run.
	Skipped []string `json:"skipped_folders"`
	Linked  []string `json:"linked_folders"`
	NotRun  []NotRun `json:"not_run"`
	// Omitted counts what the lists above leave out past their bounds.
	Omitted  Omitted      `json:"not_listed"`
	Rescues  RescueTotals `json:"rescues"`
	Totals   Totals       `json:"totals"`
	Failures Failures     `json:"failures"`
	// Slowest and Costliest are the ten runs that took longest and cost
	// most.
	Slowest   []Row `json:"slowest"`
	Costliest []Row `json:"costliest"`
	// Statuses is every issue's status word, by issue: what the next
	// night's --since-summary compares with.
	Statuses map[string]string `json:"statuses"`
	// Rows is every issue, sorted by id; the JSON form writes one page of
	// them (Page).
	Rows []Row `json:"issues_list"`
	Page Page  `json:"issues_list_page"`
}

// Count is how many issues have a status word.
type Count struct {
	Status string `json:"status"`
	Count  int    `json:"count"`
}

// Group is the runs that ended with one outcome and reason.
type Group struct {
	Outcome string `json:"outcome"`
	// ExitCodes are the codes their malaruns exited with (an orchestrator
	// saw them), ascending.
	ExitCodes []int `json:"exit_codes"`
	// Reason is the first issue's reason; the others' differ from it at
	// most in numbers.
	Reason string   `json:"reason"`
	Issues []string `json:"issues"`
	// IssuesNotListed counts the group's issues past the form's bound.
	IssuesNotListed int `json:"issues_not_listed,omitempty"`
	// CostUSD is what the group's runs cost.
	CostUSD float64 `json:"cost_usd"`
}

// Damaged is an issue whose record or timeline could not be read.
type Damaged struct {
	Issue string `json:"issue"`
	Error string `json:"error"`
}

// NotRun is a prompt file a fleet recipe could not run (notrun.Note, cut
// to the summary's bounds).
type NotRun struct {
	File     string    `json:"file"`
	Issue    string    `json:"issue,omitempty"`
	Reason   string    `json:"reason"`
	ExitCode *int      `json:"exit_code,omitempty"`
	At       time.Time `json:"at"`
}

// Omitted counts, for each bounded list, what it leaves out.
type Omitted struct {
	Groups  int `json:"groups,omitempty"`
	Waiting int `json:"waiting,omitempty"`
	Running int `json:"running,omitempty"`
	Damaged int `json:"damaged,omitempty"`
	Skipped int `json:"skipped_folders,omitempty"`
	Linked  int `json:"linked_folders,omitempty"`
	// NotRun counts the notes not read (past notrun.MaxNotes, or unfit).
	NotRun int `json:"not_run,omitempty"`
}

// Page says which rows of issues_list a JSON form holds: page Number of
// Pages, pageRows rows each (the last may hold fewer), Rows in all.
type Page struct {
	Number int `json:"page"`
	Pages  int `json:"pages"`
	Size   int `json:"rows_per_page"`
	Rows   int `json:"rows"`
}

// Row is one issue as the summary lists it.
type Row struct {
	Issue     string    `json:"issue"`
	Status    string    `json:"status"`
	Outcome   string    `json:"outcome,omitempty"`
	ExitCode  *int      `json:"exit_code,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	Started   time.Time `json:"started,omitzero"`
	Ended     time.Time `json:"ended,omitzero"`
	WallMS    int64     `json:"wall_ms"`
	CostUSD   float64   `json:"cost_usd"`
	Attempts  int       `json:"attempts"`
	Hangs     int       `json:"hangs"`
	RetryAt   time.Time `json:"retry_at,omitzero"`
	LimitType string    `json:"limit_type,omitempty"`
	// Running: the attempt, since when, its phase and when claude last wrote.
	Attempt      int       `json:"attempt,omitempty"`
	RunningSince time.Time `json:"running_since,omitzero"`
	Phase        string    `json:"phase,omitempty"`
	Doing        string    `json:"doing,omitempty"`
	LastLine     time.Time `json:"last_line,omitzero"`
	// RunDir and Described are the record's run folder (checked by the
	// journal) and its status as `malarun status` describes it, for the
	// issue's own page; "" when the record could not be read.
	RunDir    string `json:"-"`
	Described string `json:"-"`
}

// RescueTotals sum what malarun did beyond starting claude, and how many
// runs needed it.
type RescueTotals struct {
	Hangs        int            `json:"hangs"`
	HangsByPhase map[string]int `json:"hangs_by_phase"`
	Crashes      int            `json:"crashes"`
	LimitWaits   int            `json:"limit_waits"`
	Reclaims     int            `json:"reclaims"`
	Restarts     int            `json:"context_restarts"`
	Tasks        int            `json:"background_tasks"`
	APIRetries   int            `json:"api_retries"`
	// NoResponses are requests the API never answered that claude asked
	// again itself, NoResponseMS what they cost (absent: none).
	NoResponses  int   `json:"no_response_retries,omitempty"`
	NoResponseMS int64 `json:"no_response_ms,omitempty"`
	// Rescued are the runs that succeeded after a hang, a crash, a limit
	// wait, a reclaim or a context restart.
	Rescued int `json:"rescued"`
}

// Totals are the cost, tokens and time of every run, with the spread of
// the runs that ended.
type Totals struct {
	CostUSD float64       `json:"cost_usd"`
	Tokens  stream.Tokens `json:"tokens"`
	WallMS  int64         `json:"wall_ms"`
	// Wall and Cost are percentiles over the runs that ended.
	Wall Spread `json:"wall_ms_ended"`
	Cost Spread `json:"cost_usd_ended"`
}

// Failures are what the runs that did not succeed cost, and the time
// malarun saw lost in every run.
type Failures struct {
	// Runs is how many runs ended without success; CostUSD what they cost.
	Runs    int     `json:"runs"`
	CostUSD float64 `json:"cost_usd"`
	// ToFailure is how long those runs took to end (wall time).
	ToFailure Spread `json:"time_to_failure_ms"`
	// HangLostMS is the time hangs took from every run: from claude's
	// last line (the limit it was given) to the next attempt's start, or
	// to the run's end.
	HangLostMS int64 `json:"hang_lost_ms"`
	// NoResponseLostMS is the time requests the API never answered took
	// from every run (claude's wait for each, and from its retry's line to
	// the next line of progress: the attempts' attempt_ended entries),
	// beside the hangs' and never added to it (a hang after such a request
	// counts the same silence). A summary always says it; nil is an
	// earlier summary that did not (unknown, never 0).
	NoResponseLostMS *int64 `json:"no_response_lost_ms,omitempty"`
	// NoResponseUncounted are the runs whose record a malarun before
	// record version 9 wrote: it counted no request never answered, so
	// their share of the time above is unknown.
	NoResponseUncounted int `json:"no_response_uncounted_runs,omitempty"`
}

// Spread is a distribution: how many, and its percentiles.
type Spread struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}
