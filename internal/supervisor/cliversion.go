package supervisor

import (
	"strconv"
	"strings"
)

// The CLI versions malarun is tested against (the Makefile installs both;
// the README states the range). The CLI changes every few days: a CLI
// older than the range is warned about at every run; a newer one only when
// it prints a kind of line or result malarun does not know, naming it
// (docs/design.md §F17).
const (
	OldestSupportedCLI = "2.1.197"
	NewestTestedCLI    = "2.1.332"
)

// tooOld reports whether v is older than the oldest supported CLI (false
// when unknown): worth a warning at every run, since malarun relies on
// lines such a CLI does not print.
func tooOld(v string) bool {
	return v != "" && compareVersions(v, OldestSupportedCLI) < 0
}

// newerThanTested reports whether v is newer than the newest tested CLI:
// not a warning by itself, but said with anything malarun meets that it
// does not know.
func newerThanTested(v string) bool {
	return v != "" && compareVersions(v, NewestTestedCLI) > 0
}

// compareVersions compares dotted numeric versions ("2.1.330"); anything
// after a '-' or '+' is ignored, a missing part counts as 0.
func compareVersions(a, b string) int {
	pa, pb := versionParts(a), versionParts(b)
	for i := range max(len(pa), len(pb)) {
		x, y := 0, 0
		if i < len(pa) {
			x = pa[i]
		}
		if i < len(pb) {
			y = pb[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

func versionParts(v string) []int {
	v, _, _ = strings.Cut(v, "-")
	v, _, _ = strings.Cut(v, "+")
	var out []int
	for _, p := range strings.Split(v, ".") {
		n, _ := strconv.Atoi(p)
		out = append(out, n)
	}
	return out
}
