package telemetry

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/record"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Observe turns one of the supervisor's events into span attributes,
// span events and measurements. It runs on the supervisor's goroutine and
// never blocks: the SDK queues what it exports. malarun's own words go
// out (kinds, endings, counts, durations, ids) and, of claude's, only tool
// names, task ids, its version and a limit's kind, each bounded: never the
// prompt, the model's text, a tool's input or a reason that quotes them.
func (t *Run) Observe(e event.Event) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.finished {
		return
	}
	ctx := context.Background()
	at := trace.WithTimestamp(e.Time)
	switch e.Kind {
	case event.RunStarted:
		t.root.SetAttributes(attribute.String("malarun.run.id", filepath.Base(e.RunDir)), attribute.Bool("malarun.run.continued", e.Continued))
		if link, ok := linkTo(e.PreviousTrace); ok {
			t.root.AddLink(link)
		}
	case event.AttemptStarted:
		t.endLimitWait(e.Time)
		span := t.attemptSpan(e.Attempt, e.Time)
		span.SetAttributes(attribute.String("session.id", e.Session), attribute.Int("process.pid", e.Pid),
			attribute.Bool("malarun.attempt.resume", e.Resume), attribute.String("malarun.attempt.purpose", e.Purpose))
	case event.TaskStarted, event.TaskFinished:
		// The task's id only: its description and command are the agent's.
		t.attemptEvent(e.Attempt, string(e.Kind), at, attribute.String("malarun.task.id", cutText(e.Task)))
	case event.APIRetry:
		t.attemptEvent(e.Attempt, string(e.Kind), at, seconds("malarun.backoff", e.Backoff))
	case event.HangDetected:
		t.attemptEvent(e.Attempt, string(e.Kind), at, seconds("malarun.hang.silence", e.Silence), seconds("malarun.hang.limit", e.Limit),
			attribute.StringSlice("malarun.tools_running", cutTexts(e.ToolsRunning)), attribute.String(attrHangPhase, cutText(e.Phase)))
		// The phase on the attempt's span too, so a trace view can group
		// attempts by where they hung (nine names at most: a bounded label).
		t.attemptSpan(e.Attempt, e.Time).SetAttributes(attribute.String(attrHangPhase, cutText(e.Phase)))
		t.inst.hangs.Add(ctx, 1, with(attribute.String(attrHangPhase, cutText(e.Phase))))
		t.inst.hangSilence.Record(ctx, e.Silence.Seconds())
	case event.KillSent:
		t.attemptEvent(e.Attempt, string(e.Kind), at, attribute.String("malarun.kill.reason", e.Reason), seconds("malarun.kill.grace", e.Grace))
	case event.TreeGone:
		t.attemptEvent(e.Attempt, string(e.Kind), at, attribute.Int("malarun.tree.termed", e.Termed),
			attribute.Int("malarun.tree.killed", e.Killed), seconds("malarun.tree.took", e.Took))
		t.inst.treeStop.Record(ctx, e.Took.Seconds())
	case event.AttemptEnded:
		span := t.attemptSpan(e.Attempt, e.Time)
		span.SetAttributes(attribute.String(attrEnding, e.Ending), attribute.String(attrOutcome, e.Outcome),
			attribute.Int("process.exit.code", e.ExitCode))
		if e.ClaudeCodeVersion != "" {
			span.SetAttributes(attribute.String("malarun.claude.version", e.ClaudeCodeVersion))
		}
		if e.Outcome != attempt.Success.String() {
			span.SetStatus(codes.Error, e.Ending)
		}
		span.End(at)
		delete(t.attempts, e.Attempt)
		t.inst.attempts.Add(ctx, 1, with(attribute.String(attrEnding, e.Ending)))
	case event.RetryDecided:
		t.root.AddEvent(string(e.Kind), at, trace.WithAttributes(attribute.Int("malarun.attempt.number", e.Attempt),
			attribute.String("malarun.retry.action", e.Action), seconds("malarun.backoff", e.Backoff)))
	case event.Checkpoint:
		t.root.AddEvent(string(e.Kind), at, trace.WithAttributes(attribute.Int("malarun.attempt.number", e.Attempt),
			attribute.Int64("malarun.context.occupancy", e.Occupancy), attribute.Int64("malarun.context.window", e.Window)))
	case event.Restart:
		t.root.AddEvent(string(e.Kind), at, trace.WithAttributes(attribute.Int("malarun.continuation", e.Continuation),
			attribute.Int64("malarun.context.occupancy", e.Occupancy), attribute.Int64("malarun.context.window", e.Window),
			attribute.Int("malarun.checkpoint.bytes", e.CheckpointBytes)))
	case event.LimitWait:
		kind := limitKind(e.LimitType)
		kvs := []attribute.KeyValue{attribute.String(attrLimitType, kind)}
		if !e.RetryAt.IsZero() {
			kvs = append(kvs, attribute.String("malarun.limit.retry_at", e.RetryAt.UTC().Format(time.RFC3339)))
		}
		if !e.Until.IsZero() {
			kvs = append(kvs, attribute.String("malarun.limit.until", e.Until.UTC().Format(time.RFC3339)))
		}
		t.root.AddEvent(string(e.Kind), at, trace.WithAttributes(kvs...))
		t.endLimitWait(e.Time)
		t.waitFrom, t.waitType = e.Time, kind
		t.inst.limitWaits.Add(ctx, 1, with(attribute.String(attrLimitType, kind)))
	}
}

// attemptEvent adds a span event to attempt n's span.
func (t *Run) attemptEvent(n int, name string, at trace.SpanStartEventOption, kvs ...attribute.KeyValue) {
	t.attemptSpan(n, time.Now()).AddEvent(name, at, trace.WithAttributes(kvs...))
}

// endLimitWait measures a usage-limit wait that ends at now. t.mu is held.
func (t *Run) endLimitWait(now time.Time) {
	if t.waitFrom.IsZero() {
		return
	}
	t.inst.limitWaitSeconds.Record(context.Background(), max(now.Sub(t.waitFrom), 0).Seconds(),
		with(attribute.String(attrLimitType, t.waitType)))
	t.waitFrom, t.waitType = time.Time{}, ""
}

// Finish ends the run's span with what the report says and records the
// run's measurements. Events after it are ignored.
func (t *Run) Finish(rep event.Report, outcome string, exitCode int) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.finished {
		return
	}
	t.finished = true
	now := time.Now()
	t.endLimitWait(now)
	// An attempt without an end (malarun stopped while claude ran) ends now.
	for n, span := range t.attempts {
		span.SetAttributes(attribute.String(attrEnding, "unfinished"))
		span.End(trace.WithTimestamp(now))
		delete(t.attempts, n)
	}
	ctx := context.Background()
	t.root.SetAttributes(attribute.String(attrOutcome, outcome), attribute.Int("process.exit.code", exitCode),
		attribute.Int("malarun.attempts", rep.Attempts), attribute.Int("malarun.attempts.invocation", len(rep.History)),
		attribute.Int("malarun.continuations", rep.Continuations), attribute.Int("malarun.reclaims", rep.Reclaims),
		attribute.Bool("malarun.run.reclaimed", rep.Reclaimed), attribute.Float64("malarun.cost_usd", rep.CostUSD),
		attribute.Int64("gen_ai.usage.input_tokens", rep.Usage.InputTokens), attribute.Int64("gen_ai.usage.output_tokens", rep.Usage.OutputTokens),
		attribute.Int64("gen_ai.usage.cache_read.input_tokens", rep.Usage.CacheReadInputTokens),
		attribute.Int64("gen_ai.usage.cache_creation.input_tokens", rep.Usage.CacheCreationInputTokens))
	if rep.SessionID != "" {
		t.root.SetAttributes(attribute.String("session.id", rep.SessionID))
	}
	if exitCode != 0 {
		t.root.SetStatus(codes.Error, outcome)
	}
	t.root.End(trace.WithTimestamp(now))
	byOutcome := with(attribute.String(attrOutcome, outcome))
	t.inst.runs.Add(ctx, 1, byOutcome)
	if !rep.Started.IsZero() {
		t.inst.runSeconds.Record(ctx, now.Sub(rep.Started).Seconds(), byOutcome)
	}
	if rep.Reclaimed {
		t.inst.reclaims.Add(ctx, 1)
	}
	// The cost and tokens of this invocation's attempts: a continued run's
	// earlier ones were counted by the malaruns that ran them.
	var cost float64
	for _, a := range rep.History {
		cost += a.CostUSD
	}
	if cost > 0 {
		t.inst.cost.Add(ctx, cost)
	}
	for kind, n := range map[string]int64{"input": rep.Usage.InputTokens, "output": rep.Usage.OutputTokens,
		"cache_read": rep.Usage.CacheReadInputTokens, "cache_creation": rep.Usage.CacheCreationInputTokens} {
		if n > 0 {
			t.inst.tokens.Add(ctx, n, with(attribute.String(attrTokenType, kind)))
		}
	}
}

// linkTo is a span link to the run span a record names.
func linkTo(ref record.TraceRef) (trace.Link, bool) {
	tid, err1 := trace.TraceIDFromHex(ref.TraceID)
	sid, err2 := trace.SpanIDFromHex(ref.SpanID)
	if err1 != nil || err2 != nil {
		return trace.Link{}, false
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true})
	return trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{attribute.String("malarun.link", "continues")}}, true
}

// limitKind is a usage limit's kind as a metric label: claude's word
// (rateLimitType) when it is one malarun knows, else "other", so that a
// CLI can never add series without bound.
func limitKind(t string) string {
	switch t {
	case "five_hour", "seven_day", "seven_day_opus", "seven_day_sonnet", "seven_day_overage_included", "overage", "spend_limit":
		return t
	case "":
		return "unknown"
	}
	return "other"
}

// cutText bounds one text that comes from claude.
func cutText(s string) string {
	if len(s) > maxAttributeBytes {
		s = strings.ToValidUTF8(s[:maxAttributeBytes], "")
	}
	return s
}

// maxTools bounds the tool names an event carries.
const maxTools = 32

// cutTexts bounds texts that come from claude (tool names): the SDK cuts
// span attributes (spanLimits) but not those of span events.
func cutTexts(texts []string) []string {
	out := make([]string, 0, min(len(texts), maxTools))
	for _, s := range texts[:min(len(texts), maxTools)] {
		out = append(out, cutText(s))
	}
	return out
}

// seconds is a duration attribute in seconds (OpenTelemetry's unit).
func seconds(key string, d time.Duration) attribute.KeyValue {
	return attribute.Float64(key+"_s", d.Seconds())
}
