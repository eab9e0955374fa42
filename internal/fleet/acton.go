package fleet

import (
	"time"

	"github.com/malarun/malarun/internal/notrun"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/usagelimit"
)

// ActOn is one kind of thing a person must do before the next night can
// go better: no retry fixes it. Every form puts these first.
type ActOn struct {
	// Kind is credentials, credit, configuration, not_run, budget,
	// poisoned or damaged (actKinds).
	Kind string `json:"kind"`
	// What says what happened and what to do, in a sentence.
	What string `json:"what"`
	// Count is how many issues and prompt files it is; Issues and Files
	// name them (a prompt file a fleet recipe could not run, as the recipe
	// named it: outside text), at most jsonRows in all, NotListed the rest.
	Count     int      `json:"count"`
	Issues    []string `json:"issues"`
	Files     []string `json:"files"`
	NotListed int      `json:"not_listed,omitempty"`
	// Reason is the first one's reason, as its record or note says it.
	Reason string `json:"reason,omitempty"`
}

// actKinds are the kinds of actOnItem, in the order the forms show them, and
// what each says.
func actKinds() []struct{ kind, what string } {
	return []struct{ kind, what string }{
		{"credentials", "claude could not authenticate: renew the API key or token (ANTHROPIC_API_KEY, claude setup-token), then run these again"},
		{"credit", "a usage limit that no wait lifts soon (no reset known, or one more than 8 days away: usage credits, a spend cap): add credits or raise the cap"},
		{"configuration", "the run could not start (a configuration error, claude not found, an API address that cannot work): fix it, then run again"},
		{"not_run", "prompt files the fleet recipe could not run (a name that is no issue id): rename them"},
		{"budget", "the runs spent their max_cost_usd: raise it, or look at what they did (malarun show ISSUE)"},
		{"poisoned", "malarun died on these runs max_reclaims times in a row: look (malarun show ISSUE), then run with --reset"},
		{"damaged", "records that cannot be read: malarun status ISSUE says why; --reset starts the issue over"},
	}
}

// actOn sorts out what a person must act on: from the issues (their
// outcome or status) and the prompt files a fleet could not run.
func actOn(sc *Scanned, now time.Time) []ActOn {
	by := map[string]*ActOn{}
	add := func(kind, issue, file, reason string) {
		a := by[kind]
		if a == nil {
			a = &ActOn{Kind: kind, Reason: reason, Issues: []string{}, Files: []string{}}
			by[kind] = a
		}
		a.Count++
		switch {
		case len(a.Issues)+len(a.Files) >= jsonRows:
			a.NotListed++
		case file != "":
			a.Files = append(a.Files, file)
		default:
			a.Issues = append(a.Issues, issue)
		}
	}
	for i := range sc.Issues {
		is := &sc.Issues[i]
		switch {
		case is.Status == "damaged":
			add("damaged", is.ID, "", is.Damaged)
		case is.Status == "poisoned":
			add("poisoned", is.ID, "", is.Reason)
		case is.Status == "waiting" && (is.RetryAt.IsZero() || is.RetryAt.Sub(now) > usagelimit.MaxAhead):
			add("credit", is.ID, "", is.Reason)
		case !failed(is.Status):
		case is.Outcome == string(outcome.Auth):
			add("credentials", is.ID, "", is.Reason)
		case is.Outcome == string(outcome.Budget):
			add("budget", is.ID, "", is.Reason)
		case is.Outcome == string(outcome.Usage), is.Outcome == string(outcome.StartFailed), is.Outcome == string(outcome.APIUnreachable):
			add("configuration", is.ID, "", is.Reason)
		}
	}
	for _, n := range sc.NotRun {
		if n.ExitCode != nil { // malarun ran and refused: a configuration error
			add("configuration", n.Issue, n.File, n.Reason)
		} else {
			add("not_run", n.Issue, n.File, n.Reason)
		}
	}
	if sc.NotRunError != "" { // the notes' folder is not fit to read
		add("not_run", "", notrun.DirName, sc.NotRunError)
	}
	var out []ActOn
	for _, k := range actKinds() {
		if a := by[k.kind]; a != nil {
			a.What = k.what
			out = append(out, *a)
		}
	}
	return out
}
