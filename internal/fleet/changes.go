package fleet

import (
	"encoding/json"
	"fmt"
	"time"
)

// Changes is what changed since an earlier summary (--since-summary
// PREVIOUS.json, the JSON form of last night's): the runs that newly
// ended without success, those that succeed again, and last night's
// failure totals beside tonight's.
type Changes struct {
	PreviousMadeAt time.Time `json:"previous_made_at"`
	PreviousIssues int       `json:"previous_issues"`
	// NewlyFailed ended without success now and did not then (they
	// succeeded, waited, ran, or were not there); PassesAgain succeed now
	// and ended without success then. Each at most jsonRows, by issue id,
	// with the count of all.
	NewlyFailed      []Change `json:"newly_failed"`
	NewlyFailedCount int      `json:"newly_failed_count"`
	PassesAgain      []Change `json:"passes_again"`
	PassesAgainCount int      `json:"passes_again_count"`
	// StillFailing ended without success both times.
	StillFailing     int      `json:"still_failing"`
	PreviousFailures Failures `json:"previous_failures"`
}

// Change is an issue whose run changed side: its status then and now.
type Change struct {
	Issue string `json:"issue"`
	// Was is the status word in the earlier summary; "" when the issue
	// was not in it.
	Was      string  `json:"was"`
	Status   string  `json:"status"`
	Outcome  string  `json:"outcome,omitempty"`
	ExitCode *int    `json:"exit_code,omitempty"`
	Reason   string  `json:"reason,omitempty"`
	WallMS   int64   `json:"wall_ms"`
	CostUSD  float64 `json:"cost_usd"`
}

// Previous is what a comparison takes from an earlier summary.
type Previous struct {
	MadeAt   time.Time
	Issues   int
	Statuses map[string]string
	Failures Failures
}

// ParsePrevious reads an earlier summary's JSON form as outside input:
// only version 1; statuses by issue (or, from a malarun that wrote none,
// its issues_list) whose ids validID accepts, at most maxIssues, each
// word cut; numbers that cannot be are refused. The time requests never
// answered took is nil (unknown, never 0) when it does not say it: a
// summary made before it was counted.
func ParsePrevious(data []byte, validID func(string) error) (Previous, error) {
	var in struct {
		Version  *int              `json:"version"`
		MadeAt   time.Time         `json:"made_at"`
		Issues   int               `json:"issues"`
		Statuses map[string]string `json:"statuses"`
		Rows     []struct {
			Issue  string `json:"issue"`
			Status string `json:"status"`
		} `json:"issues_list"`
		Page     *Page    `json:"issues_list_page"`
		Failures Failures `json:"failures"`
		Rescues  struct {
			NoResponseMS *int64 `json:"no_response_ms"`
		} `json:"rescues"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return Previous{}, fmt.Errorf("not a summary's JSON form (malarun summary --format json): %w", err)
	}
	switch {
	case in.Version == nil:
		return Previous{}, fmt.Errorf("not a summary's JSON form (malarun summary --format json): it has no version")
	case *in.Version != version:
		return Previous{}, fmt.Errorf("a summary of version %d; this malarun reads version %d", *in.Version, version)
	case in.MadeAt.Year() < 2000 || in.MadeAt.Year() >= 2100:
		return Previous{}, fmt.Errorf("its made_at (%s) is not a time a summary was made", in.MadeAt.Format(time.RFC3339))
	case in.Issues < 0 || in.Issues > maxIssues || len(in.Statuses) > maxIssues || len(in.Rows) > maxIssues:
		return Previous{}, fmt.Errorf("it counts more issues than a summary reads (%d)", maxIssues)
	}
	p := Previous{MadeAt: in.MadeAt, Issues: in.Issues, Statuses: map[string]string{}, Failures: in.Failures}
	statuses := in.Statuses
	if statuses == nil {
		if in.Page != nil && in.Page.Pages > 1 {
			return Previous{}, fmt.Errorf("it lists one page of its issues and no statuses: compare with a summary that has them all")
		}
		statuses = map[string]string{}
		for _, r := range in.Rows {
			statuses[r.Issue] = r.Status
		}
	}
	for id, st := range statuses {
		if validID != nil && validID(id) != nil {
			continue // not an issue this malarun could have summed up
		}
		p.Statuses[id] = cut(st, wordMax)
	}
	// Numbers no summary writes (negative, or a cost past what a record
	// holds) are read as nothing.
	f := &p.Failures
	f.Runs, f.HangLostMS = max(f.Runs, 0), max(f.HangLostMS, 0)
	f.NoResponseUncounted = min(max(f.NoResponseUncounted, 0), maxIssues)
	if f.NoResponseLostMS == nil && in.Rescues.NoResponseMS != nil {
		// A summary made before failures said it, after the runs counted
		// requests never answered (issue 47), wrote their time here, and
		// only when there was some: absent there is still unknown.
		f.NoResponseLostMS = in.Rescues.NoResponseMS
	}
	if f.NoResponseLostMS != nil && *f.NoResponseLostMS < 0 {
		f.NoResponseLostMS = nil // unknown: no summary writes it
	}
	if !(f.CostUSD >= 0 && f.CostUSD <= 1e12) {
		f.CostUSD = 0
	}
	t := &f.ToFailure
	t.N = max(t.N, 0)
	for _, v := range []*float64{&t.P50, &t.P90, &t.P99, &t.Max} {
		*v = max(*v, 0)
	}
	return p, nil
}

// Compare adds to s what changed since p.
func (s *Summary) Compare(p Previous) {
	c := &Changes{PreviousMadeAt: p.MadeAt.UTC(), PreviousIssues: p.Issues, PreviousFailures: p.Failures,
		NewlyFailed: []Change{}, PassesAgain: []Change{}}
	for _, r := range s.Rows { // every issue, by id
		was, seen := p.Statuses[r.Issue]
		now, then := failed(r.Status), seen && failed(was)
		var list *[]Change
		switch {
		case now && then:
			c.StillFailing++
		case now:
			c.NewlyFailedCount++
			list = &c.NewlyFailed
		case r.Status == "succeeded" && then:
			c.PassesAgainCount++
			list = &c.PassesAgain
		}
		if list != nil && len(*list) < jsonRows {
			*list = append(*list, Change{Issue: r.Issue, Was: was, Status: r.Status, Outcome: r.Outcome, ExitCode: r.ExitCode,
				Reason: r.Reason, WallMS: r.WallMS, CostUSD: r.CostUSD})
		}
	}
	s.Changes = c
}
