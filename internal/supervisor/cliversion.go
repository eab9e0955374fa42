package supervisor

import (
	"strconv"
	"strings"
)

// The CLI versions malarun is tested against (the Makefile installs both;
// the README states the range). The CLI changes every few days: outside
// this range malarun still runs, and says so, because a new line type or a
// changed meaning can go unnoticed (docs/design.md §F17).
const (
	OldestSupportedCLI = "2.1.197"
	NewestTestedCLI    = "2.1.332"
)

// cliVersionNote says why a version is worth a warning ("" when it is in
// range or unknown).
func cliVersionNote(v string) string {
	switch {
	case v == "":
		return ""
	case compareVersions(v, OldestSupportedCLI) < 0:
		return "older than the oldest supported (" + OldestSupportedCLI + "): upgrade the CLI"
	case compareVersions(v, NewestTestedCLI) > 0:
		return "newer than the newest tested (" + NewestTestedCLI + "): it may print what malarun does not know yet"
	}
	return ""
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
