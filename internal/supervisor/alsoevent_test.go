package supervisor_test

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/malarun/malarun/internal/event"

	"github.com/malarun/malarun/internal/testing/testchild"
)

// A log record that names an event (event.AlsoField) is one an
// event of that kind reports too, so an output that shows the events may
// leave it out (docs/design.md §D15): the hang, claude's retries while the
// attempt runs, the limit wait, and a stop's cause, which the attempt's end
// gives as its reason. A retry read while the tree is being stopped has no
// event, so its record names none.
func TestLogsNameTheEventThatSaysThem(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T) *harness
		want  map[string]int // records naming each event
		// check looks at the records that name an event against the events.
		check func(t *testing.T, recs []map[string]any, evs *events)
	}{
		{"hang", func(t *testing.T) *harness {
			h := retrying(t, testchild.ResumeAware, testchild.EnvLines+"=2",
				testchild.EnvTranscript+"="+transcriptFile(t, testchild.InitLine, testchild.ToolLine))
			h.cfg.ToolTimeout = 300 * time.Millisecond
			return h
		}, map[string]int{"hang_detected": 1}, nil},
		{"refused credentials: no retry, the attempt stops", func(t *testing.T) *harness {
			// Four 401 retries: the first stops the attempt, so the retry
			// it announces never happens (no api_retry event: the
			// attempt_ended says it); those read after it (as many as
			// claude printed before its SIGTERM) have no event either.
			return newHarness(t, testchild.Replay, testchild.EnvTranscript+"="+transcripts+"auth-failed-api-retry.jsonl")
		}, map[string]int{"attempt_ended": 1}, func(t *testing.T, recs []map[string]any, evs *events) {
			if n := len(evs.of(event.APIRetry)); n != 0 {
				t.Errorf("%d api_retry events for a refusal at the first request", n)
			}
			if ended := evs.of(event.AttemptEnded); len(ended) != 1 || !strings.Contains(ended[0].Reason, "at claude's first request") {
				t.Errorf("attempt_ended %+v", ended)
			}
		}},
		{"limit wait", func(t *testing.T) *harness {
			h, _ := limited(t, time.Now().Add(30*time.Second).Truncate(time.Second))
			h.cfg.LimitWait = time.Minute
			return h
		}, map[string]int{"limit_wait": 1}, nil},
		{"claude would wait out a usage limit", func(t *testing.T) *harness {
			retryLine := `{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":600000,"error_status":429,"error":"rate_limit","session_id":"` + testchild.SessionID + `"}`
			h := newHarness(t, testchild.Hang, testchild.EnvLines+"=2", testchild.EnvTranscript+"="+transcriptFile(t, testchild.InitLine, retryLine))
			h.cfg.LimitWait = time.Minute
			return h
		}, map[string]int{"attempt_ended": 1}, func(t *testing.T, recs []map[string]any, evs *events) {
			// The retry claude announces (a sleep till the reset) never
			// happens: malarun stops it first, so it is no api_retry.
			if n := len(evs.of(event.APIRetry)); n != 0 {
				t.Errorf("%d api_retry events for a retry that never happened", n)
			}
			ended := evs.of(event.AttemptEnded)
			for _, rec := range withEvent(recs, event.AttemptEnded) {
				if why, _ := rec["why"].(string); why == "" || len(ended) != 1 || ended[0].Reason != why {
					t.Errorf("the record says %q, attempt_ended %+v", why, ended)
				}
			}
		}},
		{"an API that cannot be reached", func(t *testing.T) *harness {
			h := newHarness(t, testchild.Hang, testchild.EnvTranscript+"="+transcripts+"api-unreachable-notfound-2.1.330.jsonl", testchild.EnvLines+"=2",
				"ANTHROPIC_BASE_URL=http://no-such-host.invalid/v1")
			h.cfg.IdleTimeout = time.Hour
			h.probe = (&fakeProbe{finding: nameNotFound}).probe
			return h
		}, map[string]int{"api_retry": 1, "attempt_ended": 1}, func(t *testing.T, recs []map[string]any, evs *events) {
			ended := evs.of(event.AttemptEnded)
			for _, rec := range withEvent(recs, event.AttemptEnded) {
				api, _ := rec["api"].(string)
				code, _ := rec["code"].(string)
				if api == "" || code == "" || len(ended) != 1 || ended[0].Outcome != "api-unreachable" ||
					!strings.Contains(ended[0].Reason, api) || !strings.Contains(ended[0].Reason, code) {
					t.Errorf("the record says %s %s, attempt_ended %+v", api, code, ended)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := tt.setup(t)
				var evs events
				h.observer = evs.add
				h.run() // how the run ends is other tests' business
				var recs []map[string]any
				got := map[string]int{}
				for _, line := range strings.Split(strings.TrimSpace(h.logs.String()), "\n") {
					var rec map[string]any
					if err := json.Unmarshal([]byte(line), &rec); err != nil {
						t.Fatalf("log line %q: %v", line, err)
					}
					if kind, ok := rec[event.AlsoField]; ok {
						s, _ := kind.(string)
						got[s]++
						recs = append(recs, rec)
					}
				}
				for kind, n := range got {
					if want := tt.want[kind]; n != want {
						t.Errorf("%d records name %s, want %d", n, kind, want)
					}
					if m := len(evs.of(event.Kind(kind))); m < n {
						t.Errorf("%d records name %s, and only %d such events came", n, kind, m)
					}
				}
				for kind, want := range tt.want {
					if got[kind] != want {
						t.Errorf("%d records name %s, want %d; logs:\n%s", got[kind], kind, want, h.logs.String())
					}
				}
				if tt.check != nil {
					tt.check(t, recs, &evs)
				}
			})
		})
	}
}

func withEvent(recs []map[string]any, kind event.Kind) []map[string]any {
	var out []map[string]any
	for _, r := range recs {
		if r[event.AlsoField] == string(kind) {
			out = append(out, r)
		}
	}
	return out
}
