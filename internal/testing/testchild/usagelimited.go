package testchild

import (
	"fmt"
	"strings"
	"time"
)

// UsageLimited (the behaviour) is the real CLI (2.1.330) refused by a
// subscription's usage limit (docs/design.md §F19; the recording
// usage-limit-oauth-2.1.330, abridged): init, a rejected rate_limit_event
// resetting at EnvResetsAt (unix seconds), a <synthetic> message, an error
// result with the CLI's text, exit 1. A --resume prints EnvResumed
// (default: a success) unless EnvLimitAlways is set; with EnvResetsAt 0
// the event is left out (API-key mode prints none).

// EnvResetsAt is the resetsAt (unix seconds) UsageLimited reports;
// EnvLimitAlways makes it refuse a resumed session too.
const (
	EnvResetsAt    = "MALARUN_FAKE_RESETS_AT"
	EnvLimitAlways = "MALARUN_FAKE_LIMIT_ALWAYS"
)

// UsageLimitLines are UsageLimited's lines for a limit resetting at
// resetsAt: the result text names it as the CLI does, in UTC, without seconds.
func UsageLimitLines(resetsAt int64) []string {
	text := "You've hit your 5-hour limit · resets " + strings.ToLower(time.Unix(resetsAt, 0).UTC().Format("3:04PM")) + " (UTC)"
	lines := []string{InitLine}
	if resetsAt > 0 {
		lines = append(lines, fmt.Sprintf(`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":%d,"rateLimitType":"five_hour","isUsingOverage":false},"session_id":"%s"}`, resetsAt, SessionID))
	}
	return append(lines,
		`{"type":"assistant","message":{"model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"`+text+`"}],"usage":{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}},"parent_tool_use_id":null,"session_id":"`+SessionID+`","error":"rate_limit","is_api_error_message":true,"api_error_status":429}`,
		`{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"api_error":"usage_limit_reached","terminal_reason":"api_error","result":"`+text+`","session_id":"`+SessionID+`","total_cost_usd":0,"num_turns":1}`)
}
