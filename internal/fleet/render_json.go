package fleet

import (
	"encoding/json"
	"io"
	"slices"

	"github.com/malarun/malarun/internal/usd"
)

// WriteJSON writes the summary as JSON (docs/summary.schema.json): the
// given page of issues_list (1-based; pageRows rows), every list at most
// its bound with a count of the rest (not_listed, issues_not_listed), so
// that the JSON of any state directory fits its bound
// (TestWorstCaseFitsItsBound). Costs are rounded to the millionth of a
// dollar (the CLI's own precision: 0.0006, not 0.0006000000000000001).
// Strings from records are inert and cut as they were read (bounds.go); a
// caller writing to a terminal still wraps w (ui.InertJSONWriter) for the
// joiners, which stay as they are.
func WriteJSON(w io.Writer, s *Summary, page int) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// < > & as they are: the JSON form is no HTML, and the escapes would
	// make a hostile string six times its length.
	enc.SetEscapeHTML(false)
	out := *s
	page = min(max(page, 1), out.Page.Pages)
	out.Page.Number = page
	out.Rows = out.Rows[min(len(out.Rows), (page-1)*pageRows):min(len(out.Rows), page*pageRows)]
	out.Ended, out.Omitted.Groups = capped(out.Ended, jsonGroups)
	out.Ended = slices.Clone(out.Ended)
	for i := range out.Ended {
		g := &out.Ended[i]
		var more int
		g.Issues, more = capped(g.Issues, jsonGroupIssues)
		g.IssuesNotListed += more
	}
	out.Waiting, out.Omitted.Waiting = capped(out.Waiting, jsonRows)
	out.Running, out.Omitted.Running = capped(out.Running, jsonRows)
	out.Damaged, out.Omitted.Damaged = capped(out.Damaged, jsonRows)
	roundCosts(&out)
	// Empty lists are [] (a reader need not test for null).
	for _, l := range []*[]Row{&out.Waiting, &out.Running, &out.Slowest, &out.Costliest, &out.Rows} {
		if *l == nil {
			*l = []Row{}
		}
	}
	for _, l := range []*[]string{&out.Skipped, &out.Linked} {
		if *l == nil {
			*l = []string{}
		}
	}
	if out.Ended == nil {
		out.Ended = []Group{}
	}
	if out.Damaged == nil {
		out.Damaged = []Damaged{}
	}
	if out.ByStatus == nil {
		out.ByStatus = []Count{}
	}
	out.ActOn = slices.Clone(out.ActOn)
	if out.ActOn == nil {
		out.ActOn = []ActOn{}
	}
	for i := range out.ActOn {
		for _, l := range []*[]string{&out.ActOn[i].Issues, &out.ActOn[i].Files} {
			if *l == nil {
				*l = []string{}
			}
		}
	}
	if c := out.Changes; c != nil {
		for _, l := range []*[]Change{&c.NewlyFailed, &c.PassesAgain} {
			if *l == nil {
				*l = []Change{}
			}
		}
	}
	if out.NotRun == nil {
		out.NotRun = []NotRun{}
	}
	if out.Statuses == nil {
		out.Statuses = map[string]string{}
	}
	return enc.Encode(out)
}

// roundCosts rounds every cost of out, in copies of its lists.
func roundCosts(out *Summary) {
	r := usd.Round // the one rounding of a printed cost (internal/usd)
	out.Totals.CostUSD = r(out.Totals.CostUSD)
	c := &out.Totals.Cost
	c.P50, c.P90, c.P99, c.Max = r(c.P50), r(c.P90), r(c.P99), r(c.Max)
	out.Failures.CostUSD = r(out.Failures.CostUSD)
	for _, l := range []*[]Row{&out.Waiting, &out.Running, &out.Slowest, &out.Costliest, &out.Rows} {
		*l = slices.Clone(*l)
		for i := range *l {
			(*l)[i].CostUSD = r((*l)[i].CostUSD)
		}
	}
	for i := range out.Ended {
		out.Ended[i].CostUSD = r(out.Ended[i].CostUSD)
	}
	if c := out.Changes; c != nil {
		cc := *c
		cc.PreviousFailures.CostUSD = r(cc.PreviousFailures.CostUSD)
		for _, l := range []*[]Change{&cc.NewlyFailed, &cc.PassesAgain} {
			*l = slices.Clone(*l)
			for i := range *l {
				(*l)[i].CostUSD = r((*l)[i].CostUSD)
			}
		}
		out.Changes = &cc
	}
}
