package usagelimit

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

func TestFromEvent(t *testing.T) {
	reset := time.Unix(1795363511, 0)
	cases := []struct {
		name   string
		ev     Event
		ok     bool
		want   Limit
		reason string // a word the reason must contain ("" = no reason)
	}{
		{"rejected with reset", Event{Status: "rejected", ResetsAt: 1795363511, RateLimitType: "five_hour"},
			true, Limit{RetryAt: reset, Type: "five_hour", Waitable: true}, ""},
		{"rejected without reset", Event{Status: "rejected", RateLimitType: "seven_day"},
			true, Limit{Type: "seven_day", Waitable: true}, "without a reset time"},
		{"allowed_warning is not a limit", Event{Status: "allowed_warning", ResetsAt: 1795363511, RateLimitType: "five_hour"},
			false, Limit{}, ""},
		{"allowed is not a limit", Event{Status: "allowed"}, false, Limit{}, ""},
		{"unknown status is not a limit", Event{Status: "surprise", ResetsAt: 1}, false, Limit{}, ""},
		{"credits required", Event{Status: "rejected", ResetsAt: 1795363511, RateLimitType: "overage", ErrorCode: "credits_required"},
			true, Limit{RetryAt: reset, Type: "overage"}, "fixes nothing"},
		{"credits required even if not rejected", Event{Status: "allowed", ErrorCode: "credits_required"},
			true, Limit{}, "usage credits"},
		{"model needs credits", Event{Status: "rejected", ErrorCode: "model_requires_usage_credits"},
			true, Limit{}, "fixes nothing"},
		{"long context needs credits", Event{Status: "rejected", ErrorCode: "long_context_credits_required"},
			true, Limit{}, "fixes nothing"},
		{"unknown code stays waitable", Event{Status: "rejected", ResetsAt: 1795363511, ErrorCode: "something_new"},
			true, Limit{RetryAt: reset, Waitable: true}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := FromEvent(c.ev)
			if ok != c.ok {
				t.Fatalf("ok = %v, want %v (%+v)", ok, c.ok, got)
			}
			checkLimit(t, got, c.want, c.reason)
		})
	}
}

// checkLimit compares everything but the reason's wording.
func checkLimit(t *testing.T, got, want Limit, reasonWord string) {
	t.Helper()
	if !got.RetryAt.Equal(want.RetryAt) || got.Type != want.Type || got.Waitable != want.Waitable {
		t.Errorf("got {%v %q waitable=%v}, want {%v %q waitable=%v}", got.RetryAt.UTC(), got.Type, got.Waitable,
			want.RetryAt.UTC(), want.Type, want.Waitable)
	}
	if reasonWord == "" && got.Reason != "" || !strings.Contains(got.Reason, reasonWord) {
		t.Errorf("reason %q, want one with %q", got.Reason, reasonWord)
	}
}

func TestMerge(t *testing.T) {
	exact := time.Date(2026, 11, 22, 16, 5, 11, 0, time.UTC)
	rounded := time.Date(2026, 11, 22, 16, 6, 0, 0, time.UTC)
	cases := []struct {
		name              string
		primary, fallback Limit
		want              Limit
		reason            string
	}{
		{"event wins: exact to the second",
			Limit{RetryAt: exact, Type: "five_hour", Waitable: true}, Limit{RetryAt: rounded, Type: "five_hour", Waitable: true},
			Limit{RetryAt: exact, Type: "five_hour", Waitable: true}, ""},
		{"text fills an unknown reset and the reason goes",
			Limit{Type: "five_hour", Waitable: true, Reason: "no reset"}, Limit{RetryAt: rounded, Waitable: true},
			Limit{RetryAt: rounded, Type: "five_hour", Waitable: true}, ""},
		{"text fills the type",
			Limit{RetryAt: exact, Waitable: true}, Limit{Type: "seven_day", Waitable: true, Reason: "x"},
			Limit{RetryAt: exact, Type: "seven_day", Waitable: true}, ""},
		{"text says spend limit: not waitable",
			Limit{RetryAt: exact, Type: "overage", Waitable: true}, Limit{Type: "spend_limit", Reason: "spend limit"},
			Limit{RetryAt: exact, Type: "overage"}, "spend limit"},
		{"event says credits: not waitable",
			Limit{Reason: "credits"}, Limit{RetryAt: rounded, Type: "five_hour", Waitable: true},
			Limit{RetryAt: rounded, Type: "five_hour"}, "credits"},
		{"both unknown: a reason stays",
			Limit{Waitable: true}, Limit{Waitable: true, Reason: "claude did not say"},
			Limit{Waitable: true}, "did not say"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkLimit(t, Merge(c.primary, c.fallback), c.want, c.reason)
		})
	}
}

// TestRecordedTranscript reads the real CLI's answer to a 5-hour limit
// (CLI 2.1.330, docs/design.md §F19): the event's reset is exact, the text's
// is rounded up to the next minute, and both agree within that minute.
func TestRecordedTranscript(t *testing.T) {
	f, err := os.Open("testdata/usage-limit-oauth-2.1.330.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		event  *Limit
		text   string
		stamp  time.Time
		result string
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Type string `json:"type"`
			Info *struct {
				Status        string `json:"status"`
				ResetsAt      int64  `json:"resetsAt"`
				RateLimitType string `json:"rateLimitType"`
				ErrorCode     string `json:"errorCode"`
			} `json:"rate_limit_info"`
			Timestamp time.Time `json:"timestamp"`
			Message   struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"message"`
			Result string `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		switch line.Type {
		case "rate_limit_event":
			l, ok := FromEvent(Event{Status: line.Info.Status, ResetsAt: line.Info.ResetsAt, RateLimitType: line.Info.RateLimitType, ErrorCode: line.Info.ErrorCode})
			if !ok {
				t.Fatalf("the recorded rejected event is not a limit")
			}
			event = &l
		case "assistant":
			text, stamp = line.Message.Content[0].Text, line.Timestamp
		case "result":
			result = line.Result
		}
	}
	if event == nil || text == "" || result != text {
		t.Fatalf("transcript: event %v, text %q, result %q", event, text, result)
	}
	fromText := FromText(result, stamp, time.UTC)
	checkLimit(t, *event, Limit{RetryAt: time.Date(2026, 11, 22, 16, 5, 11, 0, time.UTC), Type: "five_hour", Waitable: true}, "")
	checkLimit(t, fromText, Limit{RetryAt: time.Date(2026, 11, 22, 16, 6, 0, 0, time.UTC), Type: "five_hour", Waitable: true}, "")
	if d := fromText.RetryAt.Sub(event.RetryAt); d <= 0 || d > time.Minute {
		t.Errorf("text reset %v is not within the minute after the event's %v", fromText.RetryAt, event.RetryAt)
	}
}
