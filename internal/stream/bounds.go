package stream

import (
	"math"
	"strconv"
)

// The numbers the CLI prints flow into arithmetic, the --json report and the
// issue's record.json. A value no real CLI prints (a cost of 1e308, a
// negative token count, a resetsAt in milliseconds) would otherwise sum to
// +Inf, which encoding/json refuses, or become a time it cannot encode, and
// the record could no longer be saved. So every kept number is checked here,
// where it enters, against a range far wider than anything real and narrow
// enough that the consumers' sums and conversions cannot overflow.
//
// The ranges are inclusive. Integer fields are truncated toward zero first
// (1e3 and 2.0 are integers, 2.5 reads as 2, as it always has).
const (
	// maxCostUSD bounds total_cost_usd, the cumulative cost of one CLI
	// process. Nothing real comes close: at the priciest model's output
	// rate a process would have to produce billions of tokens. Summed over
	// any number of attempts a run could reach it stays finite.
	maxCostUSD = 1e6

	// maxTokens bounds each token count of a usage (one API call, or a
	// result's turns). A call holds at most one context window (maxContextWindow);
	// 1e12 is a million calls at today's largest window of 1e6. Four of
	// them (Tokens.Occupancy) are far inside int64, and a sum of counts
	// stops at maxTokenSum (Tokens.Add), 9007 results at the bound.
	maxTokens = 1e12

	// maxContextWindow bounds modelUsage.<model>.contextWindow, which must
	// also be above 0: a window of no tokens is no window. Today's windows
	// are 2e5 and 1e6 tokens; 1e9 leaves room for a thousandfold growth.
	maxContextWindow = 1e9

	// minResetsAt and maxResetsAt bound rate_limit_info.resetsAt, unix
	// seconds: 2000-01-01 and the last second before 2100-01-01 (UTC). A
	// CLI that switched to milliseconds (1.7e12 today, a year past 50,000)
	// is rejected rather than misread as a time that encoding/json refuses
	// to encode (years beyond 9999); 0 and negative values are no time.
	minResetsAt = 946_684_800
	maxResetsAt = 4_102_444_800 - 1

	// maxRetryDelayMS bounds api_retry's retry_delay_ms: one year. The CLI
	// waits at most for a usage limit's reset, a week away for a seven_day
	// window; a year of nanoseconds (3.2e16) fits a time.Duration.
	maxRetryDelayMS = 365 * 24 * 3600 * 1000

	// maxHTTPStatus bounds api_error_status and error_status: HTTP status
	// codes have three digits (RFC 9110, section 15); 0 is "none".
	maxHTTPStatus = 999

	// maxRetryCount bounds api_retry's attempt and max_retries. The CLI
	// retries 10 times by default; a million fits an int anywhere and keeps
	// the messages that quote them short.
	maxRetryCount = 1e6
	// maxExitCode bounds a hook's exit_code either way: a process's status
	// is a byte, a signal's negative number smaller; this keeps messages
	// short and fits an int anywhere.
	maxExitCode = 1 << 16
	// MaxCount bounds the counts a result carries: num_turns (model
	// round-trips in one turn), result_index (results a process wrote
	// before this one) and queued_turn_count (sends still queued). A
	// process reaches thousands at most; 1e9 fits an int anywhere, and a
	// count one past it still does.
	MaxCount = 1e9
)

// FieldTotalCostUSD is the Rejected.Field of a result's cost: a consumer
// that keeps a running cost keeps its last good value when it sees it.
const FieldTotalCostUSD = "total_cost_usd"

// Rejected is a number a line carried that was dropped: out of its range,
// beyond a float64 (±1.8e308), or longer than maxNumBytes. The field it was
// for is left as if the key were absent (its zero value, or what an earlier
// duplicate of the key set).
type Rejected struct {
	// Field is the key path as the CLI wrote it: total_cost_usd,
	// usage.input_tokens, message.usage.output_tokens,
	// rate_limit_info.resetsAt, modelUsage.*.contextWindow (any model), ...
	// It is always one of this package's own constants, never text from
	// the line.
	Field string
	// Raw is the number as written, cut to maxNumBytes; "..." follows a cut
	// one. It is valid JSON number text (digits, sign, '.', 'e').
	Raw string
}

// numSpec is where a kept number goes and the range it must lie in.
type numSpec struct {
	path   string
	lo, hi float64
	isInt  bool
}

func isNumberField(f field) bool {
	switch f {
	case fAPIErrorStatus, fTotalCost, fInputTokens, fOutputTokens, fCacheCreation, fCacheRead,
		fContextWindow, fAttempt, fMaxRetries, fRetryDelay, fErrorStatus, fRLResetsAt, fHookExitCode,
		fNumTurns, fResultIndex, fQueuedTurns, fNoResponseWaited, fNoResponseRetryWait:
		return true
	}
	return false
}

func (d *Decoder) numSpec(f field) numSpec {
	switch f {
	case fTotalCost:
		return numSpec{FieldTotalCostUSD, 0, maxCostUSD, false}
	case fInputTokens, fOutputTokens, fCacheCreation, fCacheRead:
		return numSpec{d.usagePath(f), 0, maxTokens, true}
	case fContextWindow:
		return numSpec{"modelUsage.*.contextWindow", 1, maxContextWindow, true}
	case fAPIErrorStatus:
		return numSpec{"api_error_status", 0, maxHTTPStatus, true}
	case fErrorStatus:
		return numSpec{"error_status", 0, maxHTTPStatus, true}
	case fAttempt:
		return numSpec{"attempt", 0, maxRetryCount, true}
	case fMaxRetries:
		return numSpec{"max_retries", 0, maxRetryCount, true}
	case fRetryDelay:
		return numSpec{"retry_delay_ms", 0, maxRetryDelayMS, false}
	case fRLResetsAt:
		return numSpec{"rate_limit_info.resetsAt", minResetsAt, maxResetsAt, true}
	case fHookExitCode:
		return numSpec{"exit_code", -maxExitCode, maxExitCode, true}
	case fNumTurns:
		return numSpec{"num_turns", 0, MaxCount, true}
	case fResultIndex:
		return numSpec{"result_index", 0, MaxCount, true}
	case fQueuedTurns:
		return numSpec{"queued_turn_count", 0, MaxCount, true}
	case fNoResponseWaited:
		return numSpec{"no_response.waited_ms", 0, maxRetryDelayMS, false}
	case fNoResponseRetryWait:
		return numSpec{"no_response.retry_wait_ms", 0, maxRetryDelayMS, false}
	}
	return numSpec{}
}

// usagePath names a token count by where its usage object is: a result's
// top-level usage or an assistant message's message.usage (the only two
// places childCtx opens ctxUsage).
func (d *Decoder) usagePath(f field) string {
	inMessage := len(d.stack) >= 2 && d.stack[len(d.stack)-2].ctx == ctxMessage
	switch f {
	case fInputTokens:
		if inMessage {
			return "message.usage.input_tokens"
		}
		return "usage.input_tokens"
	case fOutputTokens:
		if inMessage {
			return "message.usage.output_tokens"
		}
		return "usage.output_tokens"
	case fCacheCreation:
		if inMessage {
			return "message.usage.cache_creation_input_tokens"
		}
		return "usage.cache_creation_input_tokens"
	}
	if inMessage {
		return "message.usage.cache_read_input_tokens"
	}
	return "usage.cache_read_input_tokens"
}

// setNumber keeps a number of field f, or rejects it. num is valid JSON
// number text (the scanner checked it); cut says it was longer than
// maxNumBytes and num holds only its start. A rejected value leaves the
// field as it was, as a null would.
func (d *Decoder) setNumber(f field, num []byte, cut bool) {
	spec := d.numSpec(f)
	v, ok := parseNumber(num)
	if ok && spec.isInt {
		v = math.Trunc(v)
	}
	if cut || !ok || !(v >= spec.lo && v <= spec.hi) { // NaN cannot come from JSON, but fails too
		d.reject(spec.path, num, cut)
		return
	}
	v += 0 // -0 reads as 0
	ev := &d.ev
	switch f {
	case fTotalCost:
		ev.TotalCostUSD = v
	case fInputTokens:
		ev.Usage.InputTokens = int64(v)
	case fOutputTokens:
		ev.Usage.OutputTokens = int64(v)
	case fCacheCreation:
		ev.Usage.CacheCreationInputTokens = int64(v)
	case fCacheRead:
		ev.Usage.CacheReadInputTokens = int64(v)
	case fContextWindow:
		ev.ContextWindow = max(ev.ContextWindow, int64(v))
	case fAPIErrorStatus:
		ev.APIErrorStatus = int(v)
	case fErrorStatus:
		ev.ErrorStatus = int(v)
	case fAttempt:
		ev.Attempt = int(v)
	case fMaxRetries:
		ev.MaxRetries = int(v)
	case fRetryDelay:
		ev.RetryDelayMS = v
	case fRLResetsAt:
		ev.ResetsAt = int64(v)
	case fHookExitCode:
		ev.HookExitCode, ev.HasHookExitCode = int(v), true
	case fNumTurns:
		ev.NumTurns, ev.HasNumTurns = int(v), true
	case fResultIndex:
		ev.ResultIndex, ev.HasResultIndex = int(v), true
	case fQueuedTurns:
		ev.QueuedTurnCount = int(v)
	case fNoResponseWaited:
		ev.NoResponseWaitedMS = v
	case fNoResponseRetryWait:
		ev.NoResponseRetryWaitMS = v
	}
}

// reject lists a dropped number, once per field path and line (the first
// value): the list stays as short as the set of kept number fields, however
// many models or repeated keys a line has.
func (d *Decoder) reject(path string, num []byte, cut bool) {
	for _, r := range d.ev.Rejected {
		if r.Field == path {
			return
		}
	}
	raw := string(num)
	if cut {
		raw += "..."
	}
	d.ev.Rejected = append(d.ev.Rejected, Rejected{Field: path, Raw: raw})
}

// parseNumber reads valid JSON number text. ok is false for a value beyond
// a float64; a value too small for one reads as 0. Every integer within the
// ranges above is exact in a float64 (they are below 2^53).
func parseNumber(num []byte) (v float64, ok bool) {
	// The common case, a plain integer of a few digits, without strconv.
	if len(num) > 0 && len(num) <= 15 {
		i, neg := 0, num[0] == '-'
		if neg {
			i = 1
		}
		var n int64
		for ; i < len(num) && num[i] >= '0' && num[i] <= '9'; i++ {
			n = n*10 + int64(num[i]-'0')
		}
		if i == len(num) && (!neg || len(num) > 1) {
			if neg {
				return -float64(n), true
			}
			return float64(n), true
		}
	}
	f, err := strconv.ParseFloat(string(num), 64)
	return f, err == nil // the only error left is ErrRange: ±Inf
}
