package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/testing/fakeapi"
)

// The usage-limit and credit states of docs/design.md §F34, as the API
// signals them in headers, through the real CLI: what the CLI prints for
// each (logged, per version) and what malarun makes of it with limit_wait
// 0. Each exits 75 with the reason; retry_at is the reset that lifts it,
// when one is known (a plan window's, or the credits' own a month away),
// and the reason says when waiting within a run fixes nothing; a throttle
// that is not the account's limit is resumed like an overloaded API.
func TestRealCLILimitStates(t *testing.T) {
	t.Parallel()
	reset := time.Now().Add(2 * time.Hour).Truncate(time.Second)
	monthly := time.Now().Add(30 * 24 * time.Hour).Truncate(time.Second)
	unix := func(at time.Time) string { return strconv.FormatInt(at.Unix(), 10) }
	cases := []struct {
		name    string
		step    fakeapi.Step
		code    int
		retryAt time.Time // zero: none
		reason  string    // in the report's reason
	}{
		{"Fable's included allowance", fakeapi.UsageLimited("seven_day_overage_included", reset), 75, reset, "usage limit (seven_day_overage_included)"},
		{"a plan window, usage credits out",
			fakeapi.UsageLimited("five_hour", reset).WithHeader("Anthropic-Ratelimit-Unified-Overage-Status", "rejected").
				WithHeader("Anthropic-Ratelimit-Unified-Overage-Disabled-Reason", "out_of_credits"), 75, reset, "usage limit (five_hour)"},
		{"the credits' monthly cap",
			fakeapi.UsageLimited("overage", monthly).WithHeader("Anthropic-Ratelimit-Unified-Overage-Status", "rejected").
				WithHeader("Anthropic-Ratelimit-Unified-Overage-Reset", unix(monthly)).
				WithHeader("Anthropic-Ratelimit-Unified-Overage-Disabled-Reason", "org_level_disabled_until"), 75, monthly, "raise the limit or add credits"},
		{"a seat without credits",
			fakeapi.HTTPError(http.StatusTooManyRequests, "rate_limit_error", "This request would exceed your account's rate limit.", nil).
				WithHeader("Anthropic-Ratelimit-Unified-Status", "rejected").
				WithHeader("Anthropic-Ratelimit-Unified-Overage-Status", "rejected").
				WithHeader("Anthropic-Ratelimit-Unified-Overage-Disabled-Reason", "seat_tier_level_disabled"), 75, time.Time{}, "waiting fixes nothing"},
		{"the server's throttle", fakeapi.HTTPError(http.StatusTooManyRequests, "rate_limit_error", "Too many requests, slow down.", nil).
			WithHeader("X-Should-Retry", "false"), 0, time.Time{}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, c.step, fakeapi.Text("Done after the limit."))
			oauthEnv(e)
			r := e.run("--limit-wait", "0s", "--json", "--backoff", "0s")
			t.Logf("claude %s printed: %s", e2e.claudeVersion, lastResultText(t, e))
			r.wantCode(t, c.code)
			if c.code != 75 {
				return
			}
			var rep limitReport
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
				t.Fatalf("report: %v\n%s", err, r.stdout)
			}
			if !rep.RetryAt.Equal(c.retryAt) || !strings.Contains(rep.Reason, c.reason) {
				t.Errorf("retry_at %v, reason %q; want %v and %q", rep.RetryAt, rep.Reason, c.retryAt, c.reason)
			}
		})
	}
}

// lastResultText is the result text of the issue's first attempt: what the
// CLI printed for the state (the record of §F34 for this version).
func lastResultText(t *testing.T, e *env) string {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(e.stateDirPath(), e.issueID(), "runs", "*", "attempt-1.jsonl"))
	if len(paths) == 0 {
		return "(no transcript)"
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		return err.Error()
	}
	for _, line := range strings.Split(string(b), "\n") {
		var res struct {
			Type     string `json:"type"`
			Result   string `json:"result"`
			APIError string `json:"api_error"`
		}
		if json.Unmarshal([]byte(line), &res) == nil && res.Type == "result" {
			return fmt.Sprintf("%q (api_error %q)", res.Result, res.APIError)
		}
	}
	return "(no result line)"
}
