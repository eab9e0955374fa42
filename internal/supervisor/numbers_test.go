package supervisor_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// rejectionWarnings returns the logged warnings about out-of-range numbers
// as field=raw, in order.
func rejectionWarnings(t *testing.T, logs string) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var l struct{ Level, Message, Field, Raw string }
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if l.Message == "claude printed an out-of-range number; it is ignored" {
			if l.Level != "warn" {
				t.Errorf("%q logged at %s, want warn", line, l.Level)
			}
			out = append(out, l.Field+"="+l.Raw)
		}
	}
	return out
}

// A cost of 1e308 is dropped: the attempt keeps its last good cost (and so
// does the result's entry in the report), the warning names the field and
// the number once per attempt, and the record saves, again and again. On
// main the second run's total was +Inf and the record could not be saved.
func TestAbsurdCostIsIgnoredAndTheRecordSaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		result := func(cost, usage string) string {
			return strings.Replace(testchild.Result, `"total_cost_usd":0.01`, `"total_cost_usd":`+cost+`,"usage":{"input_tokens":`+usage+`}`, 1)
		}
		path := transcriptFile(t, testchild.InitLine, testchild.TextLine,
			result("0.5", "10"), result("1e308", "-5"), result("1.5e308", "7"))
		h := newHarness(t, testchild.Replay, testchild.EnvTranscript+"="+path)
		for run := 1; run <= 2; run++ {
			rep, err, _ := h.run()
			if err != nil {
				t.Fatalf("run %d: %v\n%s", run, err, h.logs.String())
			}
			if len(rep.History) != 1 {
				t.Fatalf("run %d: attempts %+v, want one", run, rep.History)
			}
			if rep.CostUSD != 0.5 || rep.History[0].CostUSD != 0.5 {
				t.Errorf("run %d: cost %v, attempt's %v; want 0.5, the last good cost", run, rep.CostUSD, rep.History[0].CostUSD)
			}
			var costs []float64
			for _, rr := range rep.History[0].Results {
				costs = append(costs, rr.CostUSD)
			}
			if fmt.Sprint(costs) != "[0.5 0.5 0.5]" {
				t.Errorf("run %d: results' costs %v, want the last good one each time", run, costs)
			}
			if rep.Usage.InputTokens != 17 {
				t.Errorf("run %d: input tokens %d, want 17 (the -5 dropped)", run, rep.Usage.InputTokens)
			}
			want := strings.Repeat("total_cost_usd=1e308 usage.input_tokens=-5 ", run)
			if got := strings.Join(rejectionWarnings(t, h.logs.String()), " ") + " "; got != want {
				t.Errorf("run %d: warnings %q, want %q (once per field and attempt)", run, got, want)
			}
			rec, ok, rerr := journalOf(t, h)
			if !ok || rerr != nil || rec.Status != record.Succeeded || rec.CostUSD != 0.5 || rec.TotalCostUSD != 0.5*float64(run) {
				t.Errorf("run %d: record %v %v: status %s, cost %v, total %v", run, ok, rerr, rec.Status, rec.CostUSD, rec.TotalCostUSD)
			}
		}
	})
}

// A resetsAt in milliseconds is dropped, not read as a time in the year
// 58,000 that record.json cannot hold: the run ends as the rest of the line
// and the result say (a usage limit, exit 75, its reset read from the
// result text), and the record saves as waiting. On main the save failed
// with "year outside of range" and the run exited 1.
func TestResetsAtInMillisecondsIsIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		resetsAt := time.Now().Add(2 * time.Hour).Truncate(time.Minute).Unix()
		lines := testchild.UsageLimitLines(resetsAt)
		ms := fmt.Sprint(resetsAt * 1000)
		lines[1] = strings.Replace(lines[1], fmt.Sprintf(`"resetsAt":%d`, resetsAt), `"resetsAt":`+ms, 1)
		if !strings.Contains(lines[1], ms) {
			t.Fatalf("the rate_limit_event has no resetsAt to replace: %s", lines[1])
		}
		h := newHarness(t, testchild.Replay, testchild.EnvTranscript+"="+transcriptFile(t, lines...), testchild.EnvExit+"=1")
		rep, err, _ := h.run()
		wantKind(t, err, outcome.RateLimit, "five_hour")
		want := time.Unix(resetsAt, 0).Add(time.Minute) // the text names the minute; its end is the reset
		if !rep.RetryAt.Equal(want) || rep.LimitType != "five_hour" {
			t.Errorf("retry at %v (%s), want %v from the result text", rep.RetryAt, rep.LimitType, want)
		}
		if got := rejectionWarnings(t, h.logs.String()); len(got) != 1 || got[0] != "rate_limit_info.resetsAt="+ms {
			t.Errorf("warnings %q, want one for rate_limit_info.resetsAt=%s", got, ms)
		}
		rec, ok, rerr := journalOf(t, h)
		if !ok || rerr != nil || rec.Status != record.Waiting || !rec.RetryAt.Equal(want) {
			t.Fatalf("record %v %v: status %s, retry at %v; want waiting until %v", ok, rerr, rec.Status, rec.RetryAt, want)
		}
	})
}
