package fleet

import (
	"strings"
	"unicode/utf8"

	"github.com/malarun/malarun/internal/ui"
)

// The summary's bounds (docs/many-issues.md, "Bounds"): whatever a state
// directory holds, what the summary keeps and writes has a ceiling, so
// every form fits its documented size (TestWorstCaseFitsItsBound works
// the ceilings out from these) in bounded memory.
const (
	// maxIssues is how many issue folders a summary reads, by name; the
	// others are counted (Summary.NotRead), never opened.
	maxIssues = 100_000
	// reasonMax bounds a record's reason or a damaged record's error, in
	// bytes (the whole is in `malarun status ISSUE`).
	reasonMax = 500
	// wordMax bounds a word from a record or a timeline (a status, an
	// outcome, a limit's type, a phase's name), in bytes.
	wordMax = 40
	// doingMax bounds what a running claude is doing, in words.
	doingMax = 160
	// nameMax bounds a folder's name that is not an issue's.
	nameMax = 200
	// phasesMax is how many phase names the hangs are counted under, per
	// issue and in all; hangs in any other name count as "other".
	phasesMax = 24
	// listMax is how many issues a group names, and how many groups and
	// rows a table has, in the text and Markdown forms.
	listMax = 30
	// jsonGroups and jsonGroupIssues bound the groups of the JSON form
	// and the issues each names (issues_list and statuses name them all).
	jsonGroups      = 200
	jsonGroupIssues = 100
	// jsonRows bounds the JSON form's other lists: waiting, running,
	// damaged, skipped and linked folders, the changes since a summary.
	jsonRows = 1000
	// pageRows is how many rows of issues_list one JSON page holds.
	pageRows = 5000
	// htmlRows is how many issues the HTML index lists; the others are on
	// list pages beside it, htmlRows each.
	htmlRows = 1000
)

// otherPhase counts the hangs in the phases past phasesMax.
const otherPhase = "other"

// cut makes text from outside inert (ui.Inert: controls in caret
// notation, invisible and bidirectional characters U+FFFD) and keeps at
// most max bytes of it, ending on a whole rune, with an ellipsis when it
// cut. Every string the summary keeps from a record, a timeline or a
// folder's name passes here as it is read.
func cut(s string, max int) string {
	if len(s) > 4*max {
		s = s[:4*max] // what Inert could grow back to max, at most
	}
	s = ui.Inert(s)
	if len(s) <= max {
		return s
	}
	end := max - len("…")
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return strings.TrimRight(s[:end], " \t\n") + "…"
}

// capped is the first n of xs, and how many are left out.
func capped[T any](xs []T, n int) ([]T, int) {
	if len(xs) <= n {
		return xs, 0
	}
	return xs[:n], len(xs) - n
}
