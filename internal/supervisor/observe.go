package supervisor

import (
	"slices"
	"strings"

	"github.com/rs/zerolog"

	"github.com/malarun/malarun/internal/stream"
)

// attemptLog accumulates what the stream of one attempt said: enough to
// classify how it ended and to tell the retry logic what happened.
type attemptLog struct {
	// sessionID is the session malarun started or resumed: the CLI keeps
	// the id it is given, and an id read from the stream is never used (it
	// would become an argument of the next claude). otherSession is the
	// first other id the stream named, if any, for a warning.
	sessionID    string
	otherSession string
	sawInit      bool
	lines        int64
	malformed    int64
	cutShort     bool
	assistants   int              // top-level and sub-agent assistant messages
	toolCalls    []stream.ToolUse // every tool_use seen, in order
	result       *stream.Event    // the last result line, if any: it decides
	results      []ResultReport   // every result line, in order
	cliVersion   string           // claude_code_version of the init line
	authRetry    *stream.Event    // an api_retry line reporting a 401
	rateLimit    *stream.Event    // a rate_limit_event that was rejected (or named an error code)
	costUSD      float64
	lastText     string // the text of the last top-level assistant message
	// rejected are the field paths of numbers the decoder dropped that
	// this attempt has warned about, so a CLI repeating one warns once.
	rejected []string
}

func (a *attemptLog) observe(ev stream.Event) {
	a.lines++
	switch ev.Kind {
	case stream.KindMalformed:
		a.malformed++
		return
	case stream.KindCutShort:
		a.cutShort = true
		return
	}
	if ev.SessionID != "" && ev.SessionID != a.sessionID && a.otherSession == "" {
		a.otherSession = ev.SessionID
	}
	switch ev.Type {
	case "system":
		switch ev.Subtype {
		case "init":
			a.sawInit = true
			if ev.ClaudeCodeVersion != "" {
				a.cliVersion = ev.ClaudeCodeVersion
			}
		case "api_retry":
			if ev.ErrorStatus == 401 || ev.Error == "authentication_failed" {
				e := ev
				a.authRetry = &e
			}
		}
	case "rate_limit_event":
		if ev.RateLimitStatus == "rejected" || ev.RateLimitErrorCode != "" {
			e := ev
			a.rateLimit = &e
		}
	case "assistant":
		if ev.Model == "<synthetic>" {
			return // the CLI's own message (an API error), not the model's work
		}
		a.assistants++
		a.toolCalls = append(a.toolCalls, ev.ToolUses...)
		if ev.ParentToolUseID == "" && len(ev.Texts) > 0 {
			a.lastText = strings.Join(ev.Texts, "\n")
		}
	case "result":
		e := ev
		a.result = &e
		// total_cost_usd is cumulative over the process; usage covers the
		// turns since the previous result (docs/design.md §F17). A cost the
		// decoder rejected tells nothing, and 0 would undo what the process
		// already cost: the last good value stands, for the result too.
		if !ev.Rejects(stream.FieldTotalCostUSD) {
			a.costUSD = ev.TotalCostUSD
		}
		a.results = append(a.results, ResultReport{Subtype: ev.Subtype, IsError: ev.IsError, TerminalReason: ev.TerminalReason,
			APIErrorStatus: ev.APIErrorStatus, Origin: ev.OriginKind, CostUSD: a.costUSD, Usage: ev.Usage})
	}
}

// warnRejected logs each number of ev that the decoder dropped as out of
// range, once per field and attempt. The raw text comes from the CLI: it
// goes in a log field, never in the message.
func (a *attemptLog) warnRejected(log zerolog.Logger, ev stream.Event) {
	for _, rj := range ev.Rejected {
		if slices.Contains(a.rejected, rj.Field) {
			continue
		}
		a.rejected = append(a.rejected, rj.Field)
		log.Warn().Str("field", rj.Field).Str("raw", rj.Raw).Int64("line", ev.Line).Msg("claude printed an out-of-range number; it is ignored")
	}
}
