package fleet

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/timeline"
)

// Version is the summary's JSON version (docs/summary.schema.json).
const Version = 1

// Summary is a state directory at a glance. Its JSON form is the --format
// json output; the other forms say the same.
type Summary struct {
	Version  int       `json:"version"`
	StateDir string    `json:"state_dir"`
	MadeAt   time.Time `json:"made_at"`
	Since    time.Time `json:"since,omitzero"`
	Issues   int       `json:"issues"`
	// ByStatus counts the issues by status word, in statusOrder.
	ByStatus []Count `json:"by_status"`
	// Ended are the runs that ended without success, grouped by outcome
	// and reason; Waiting wait for a usage limit; Running run now (or
	// their malarun is gone: orphaned); Damaged could not be read.
	Ended   []Group   `json:"ended_unsuccessfully"`
	Waiting []Row     `json:"waiting"`
	Running []Row     `json:"running"`
	Damaged []Damaged `json:"damaged"`
	// Skipped are folders of the state directory that are not issues.
	Skipped []string     `json:"skipped_folders"`
	Rescues RescueTotals `json:"rescues"`
	Totals  Totals       `json:"totals"`
	// Slowest and Costliest are the ten runs that took longest and cost
	// most.
	Slowest   []Row `json:"slowest"`
	Costliest []Row `json:"costliest"`
	// Rows is every issue, sorted by id.
	Rows []Row `json:"issues_list"`
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
}

// Damaged is an issue whose record or timeline could not be read.
type Damaged struct {
	Issue string `json:"issue"`
	Error string `json:"error"`
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
	// Rescued are the runs that succeeded after a hang, a crash, a limit
	// wait, a reclaim or a context restart.
	Rescued int `json:"rescued"`
}

// Totals are the cost, tokens and time of every run, with the spread of
// the runs that ended.
type Totals struct {
	CostUSD float64         `json:"cost_usd"`
	Tokens  timeline.Tokens `json:"tokens"`
	WallMS  int64           `json:"wall_ms"`
	// Wall and Cost are percentiles over the runs that ended.
	Wall Spread `json:"wall_ms_ended"`
	Cost Spread `json:"cost_usd_ended"`
}

// Spread is a distribution: how many, and its percentiles.
type Spread struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// statusOrder is the order statuses are counted in: done, then what needs
// a look, then what goes on.
func statusOrder() []string {
	return []string{"succeeded", "failed", "stopped", "interrupted", "poisoned", "damaged", "waiting", "processing", "orphaned"}
}

// ended reports whether a status word is a run that ended (no malarun will
// go on with it by itself).
func ended(status string) bool {
	switch status {
	case "waiting", "processing", "orphaned", "damaged":
		return false
	}
	return true
}

// Summarize sums issues up (as Scan returns them) at now.
func Summarize(stateDir string, issues []Issue, skipped []string, since, now time.Time) Summary {
	s := Summary{Version: Version, StateDir: stateDir, MadeAt: now.UTC(), Issues: len(issues),
		Skipped: skipped, Rescues: RescueTotals{HangsByPhase: map[string]int{}}}
	if !since.IsZero() {
		s.Since = since.UTC()
	}
	counts := map[string]int{}
	groups := map[[2]string]*Group{}
	var walls, costs []float64
	for i := range issues {
		is := &issues[i]
		counts[is.Status]++
		row := rowOf(is, now)
		s.Rows = append(s.Rows, row)
		s.Totals.CostUSD += is.CostUSD
		s.Totals.Tokens = addTokens(s.Totals.Tokens, is.Tokens)
		s.Totals.WallMS = satAdd(s.Totals.WallMS, row.WallMS) // a planted record's times are not trusted
		s.Rescues.add(is)
		if is.Damaged != "" { // its record, or only its timeline
			s.Damaged = append(s.Damaged, Damaged{Issue: is.ID, Error: is.Damaged})
		}
		switch {
		case is.Status == "damaged":
		case is.Status == "waiting":
			s.Waiting = append(s.Waiting, row)
		case is.Status == "processing" || is.Status == "orphaned":
			s.Running = append(s.Running, row)
		case is.Status != "succeeded":
			addToGroup(groups, is)
		}
		if ended(is.Status) {
			walls, costs = append(walls, float64(row.WallMS)), append(costs, is.CostUSD)
		}
	}
	for _, st := range statusOrder() {
		if counts[st] > 0 {
			s.ByStatus = append(s.ByStatus, Count{Status: st, Count: counts[st]})
			delete(counts, st)
		}
	}
	for st, n := range counts { // a word of a newer malarun
		s.ByStatus = append(s.ByStatus, Count{Status: st, Count: n})
	}
	for _, g := range groups {
		if g.ExitCodes == nil {
			g.ExitCodes = []int{}
		}
		slices.Sort(g.ExitCodes)
		s.Ended = append(s.Ended, *g)
	}
	slices.SortFunc(s.Ended, func(a, b Group) int {
		return cmp.Or(cmp.Compare(len(b.Issues), len(a.Issues)), cmp.Compare(a.Outcome, b.Outcome), cmp.Compare(a.Reason, b.Reason))
	})
	slices.SortFunc(s.Waiting, func(a, b Row) int { return cmp.Or(a.RetryAt.Compare(b.RetryAt), cmp.Compare(a.Issue, b.Issue)) })
	s.Totals.Wall, s.Totals.Cost = spreadOf(walls), spreadOf(costs)
	s.Slowest = topRows(s.Rows, func(r Row) float64 { return float64(r.WallMS) })
	s.Costliest = topRows(s.Rows, func(r Row) float64 { return r.CostUSD })
	return s
}

func rowOf(is *Issue, now time.Time) Row {
	r := Row{Issue: is.ID, Status: is.Status, Outcome: is.Outcome, Reason: is.Reason, Started: is.Started.UTC(), Ended: is.Ended.UTC(),
		WallMS: is.Wall(now).Milliseconds(), CostUSD: is.CostUSD, Attempts: is.Attempts, Hangs: is.Rescues.HangCount(),
		RetryAt: is.RetryAt.UTC(), LimitType: is.LimitType, Attempt: is.Running, RunningSince: is.RunningSince.UTC(),
		Phase: is.Phase, Doing: is.Doing, LastLine: is.LastLine.UTC()}
	if is.HasExit {
		code := is.ExitCode
		r.ExitCode = &code
	}
	for _, t := range []*time.Time{&r.Started, &r.Ended, &r.RetryAt, &r.RunningSince, &r.LastLine} {
		if t.Equal(time.Time{}.UTC()) {
			*t = time.Time{}
		}
	}
	return r
}

func (t *RescueTotals) add(is *Issue) {
	r := is.Rescues
	for phase, n := range r.Hangs {
		t.HangsByPhase[phase] += n
		t.Hangs += n
	}
	t.Crashes += r.Crashes
	t.LimitWaits += r.LimitWaits
	t.Reclaims += r.Reclaims
	t.Restarts += r.Restarts
	t.Tasks += r.Tasks
	t.APIRetries += r.APIRetries
	if is.Status == "succeeded" && r.HangCount()+r.Crashes+r.LimitWaits+r.Reclaims+r.Restarts > 0 {
		t.Rescued++
	}
}

// addToGroup files a run that ended without success under its outcome
// and reason (numbers in the reason left out of the key: "no output for
// 4s" and "... for 5s" are one group).
func addToGroup(groups map[[2]string]*Group, is *Issue) {
	outcome := is.Outcome
	if outcome == "" {
		outcome = is.Status
	}
	key := [2]string{outcome, reasonKey(is.Reason)}
	g := groups[key]
	if g == nil {
		g = &Group{Outcome: outcome, Reason: is.Reason}
		groups[key] = g
	}
	g.Issues = append(g.Issues, is.ID)
	if is.HasExit && !slices.Contains(g.ExitCodes, is.ExitCode) {
		g.ExitCodes = append(g.ExitCodes, is.ExitCode)
	}
}

// reasonKey is a reason with its digits left out, at most 200 bytes.
func reasonKey(reason string) string {
	var b strings.Builder
	for _, c := range reason {
		if b.Len() >= 200 {
			break
		}
		if c < '0' || c > '9' {
			b.WriteRune(c)
		}
	}
	return b.String()
}

// spreadOf is the percentiles of xs (nearest rank).
func spreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	at := func(p float64) float64 {
		i := int(p*float64(len(s))+0.999999) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	return Spread{N: len(s), P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: s[len(s)-1]}
}

// topRows is the ten rows with the largest key (over zero), largest first.
func topRows(rows []Row, key func(Row) float64) []Row {
	var out []Row
	for _, r := range rows {
		if key(r) > 0 {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b Row) int { return cmp.Compare(key(b), key(a)) })
	return out[:min(10, len(out))]
}
