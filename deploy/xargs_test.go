package deploy_test

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The laptop recipe's case arms are the exit-code contract: 75 is the one
// code run again after retry_at, the retry-now codes are run again at
// once, every other code stops the issue (its behaviour is tested in
// e2e/fleet_test.go against the fake CLI).
func TestXargsRecipeFollowsTheContract(t *testing.T) {
	b, err := os.ReadFile("xargs/malarun-fleet.sh")
	if err != nil {
		t.Fatal(err)
	}
	arm := regexp.MustCompile(`(?m)^\t\t([0-9][0-9 |]*)\)$`)
	var arms [][]int
	for _, m := range arm.FindAllStringSubmatch(string(b), -1) {
		var codes []int
		for _, f := range strings.Split(m[1], "|") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				t.Fatalf("arm %q: %v", m[1], err)
			}
			codes = append(codes, n)
		}
		arms = append(arms, codes)
	}
	var now, later []int
	for _, c := range deploy.contract {
		switch c.Retry {
		case retryNow:
			now = append(now, c.Code)
		case retryAfterRetryAt:
			later = append(later, c.Code)
		}
	}
	slices.Sort(now)
	if len(arms) != 3 || !slices.Equal(arms[0], []int{0}) || !slices.Equal(arms[1], later) || !slices.Equal(arms[2], now) {
		t.Errorf("the recipe's arms are %v; the contract: 0, after retry_at %v, now %v", arms, later, now)
	}
}
