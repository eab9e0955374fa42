package fleet

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"
)

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

// failed reports whether a status word is a run that ended without
// success: what --since-summary compares night over night.
func failed(status string) bool { return ended(status) && status != "succeeded" }

// Scanned is what Scan read of a state directory.
type Scanned struct {
	Issues []Issue
	// Skipped are folders whose names are not issue ids, Linked symbolic
	// links (never followed); each at most jsonRows, with the count of the
	// rest. NotRead counts the issue folders past maxIssues.
	Skipped, Linked         []string
	SkippedMore, LinkedMore int
	NotRead                 int
	NotRun                  []NotRun
	NotRunUnread            int
	NotRunError             string
}

// Summarize sums a scanned state directory up at now.
func Summarize(stateDir string, sc Scanned, since, now time.Time) Summary {
	issues := sc.Issues
	s := Summary{Version: version, StateDir: cut(stateDir, 4096), MadeAt: now.UTC(), Issues: len(issues), NotRead: sc.NotRead,
		Skipped: sc.Skipped, Linked: sc.Linked, NotRun: sc.NotRun, Rescues: RescueTotals{HangsByPhase: map[string]int{}},
		Statuses: make(map[string]string, len(issues))}
	s.Omitted.Skipped, s.Omitted.Linked, s.Omitted.NotRun = sc.SkippedMore, sc.LinkedMore, sc.NotRunUnread
	if !since.IsZero() {
		s.Since = since.UTC()
	}
	counts := map[string]int{}
	groups := map[[2]string]*Group{}
	var walls, costs, toFailure []float64
	for i := range issues {
		is := &issues[i]
		counts[is.Status]++
		s.Statuses[is.ID] = is.Status
		row := rowOf(is, now)
		s.Rows = append(s.Rows, row)
		s.Totals.CostUSD += is.CostUSD
		s.Totals.Tokens = s.Totals.Tokens.Add(is.Tokens)
		s.Totals.WallMS = satAdd(s.Totals.WallMS, row.WallMS) // a planted record's times are not trusted
		s.Rescues.add(is)
		s.Failures.HangLostMS = satAdd(s.Failures.HangLostMS, is.HangLost.Milliseconds())
		if is.NoResponseUncounted {
			s.Failures.NoResponseUncounted++
		}
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
		if failed(is.Status) {
			s.Failures.Runs++
			s.Failures.CostUSD += is.CostUSD
			toFailure = append(toFailure, float64(row.WallMS))
		}
	}
	for _, st := range statusOrder() {
		if counts[st] > 0 {
			s.ByStatus = append(s.ByStatus, Count{Status: st, Count: counts[st]})
			delete(counts, st)
		}
	}
	var newer []Count
	for st, n := range counts { // a word of a newer malarun (or a planted one)
		newer = append(newer, Count{Status: st, Count: n})
	}
	slices.SortFunc(newer, func(a, b Count) int { return cmp.Compare(a.Status, b.Status) })
	s.ByStatus = append(s.ByStatus, newer...)
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
	s.Failures.ToFailure = spreadOf(toFailure)
	noResponseMS := s.Rescues.NoResponseMS // every run's, as the hangs' time
	s.Failures.NoResponseLostMS = &noResponseMS
	s.Slowest = topRows(s.Rows, func(r Row) float64 { return float64(r.WallMS) })
	s.Costliest = topRows(s.Rows, func(r Row) float64 { return r.CostUSD })
	s.ActOn = actOn(&sc, now)
	s.Page = Page{Number: 1, Pages: max(1, (len(s.Rows)+pageRows-1)/pageRows), Size: pageRows, Rows: len(s.Rows)}
	return s
}

func rowOf(is *Issue, now time.Time) Row {
	r := Row{Issue: is.ID, Status: is.Status, Outcome: is.Outcome, Reason: is.Reason, Started: is.Started.UTC(), Ended: is.Ended.UTC(),
		WallMS: is.Wall(now).Milliseconds(), CostUSD: is.CostUSD, Attempts: is.Attempts, Hangs: is.Rescues.HangCount(),
		RetryAt: is.RetryAt.UTC(), LimitType: is.LimitType, Attempt: is.Running, RunningSince: is.RunningSince.UTC(),
		Phase: is.Phase, Doing: is.Doing, LastLine: is.LastLine.UTC(), RunDir: is.RunDir, Described: is.Described}
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
	// In order, so that which names are kept does not depend on a map's.
	for _, phase := range slices.Sorted(maps.Keys(r.Hangs)) {
		n := r.Hangs[phase]
		named := len(t.HangsByPhase)
		if _, ok := t.HangsByPhase[otherPhase]; ok {
			named--
		}
		if _, ok := t.HangsByPhase[phase]; !ok && named >= phasesMax-1 {
			phase = otherPhase // the names are bounded in all as in each issue
		}
		t.HangsByPhase[phase] += n
		t.Hangs += n
	}
	t.Crashes += r.Crashes
	t.LimitWaits += r.LimitWaits
	t.Reclaims += r.Reclaims
	t.Restarts += r.Restarts
	t.Tasks += r.Tasks
	t.APIRetries += r.APIRetries
	t.NoResponses += r.NoResponses
	t.NoResponseMS = satAdd(t.NoResponseMS, r.NoResponseMS)
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
	g.CostUSD += is.CostUSD
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
