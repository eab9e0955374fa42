package fakeapi

import (
	"encoding/json"
	"strings"
)

// titleSystemPrompt starts the system prompt of the CLI's session-title
// side query.
const titleSystemPrompt = "Generate a concise, sentence-case title"

// Classify is the default classifier: how the server decides what a
// request to /v1/messages is. A request whose body did not parse is
// KindOther. A conversation must be streaming, offer at least one tool, and
// ask for no structured output format; anything else is a side request,
// except compaction, recognised by its instructions. Running the CLI with
// no tools at all (--tools "") would make every request look like a side
// request: give such a test its own classifier with [WithClassifier].
//
// What the real CLI sends (Claude Code 2.1.197, observed against this
// server, and read from the binary's side-query helper):
//
//   - `HEAD /` once at start-up, a connectivity probe (User-Agent Bun).
//   - Conversation requests: POST /v1/messages?beta=true, "stream": true,
//     the full tool list (24-25 tools), thinking {"type":"adaptive"},
//     context_management, max_tokens 64000, header X-Claude-Code-Session-Id.
//     A retry (after 429/529...) is the same request again; its
//     X-Stainless-Retry-Count header stays 0, because the CLI retries by
//     itself rather than through its SDK.
//   - Side queries (the CLI's internal helper for titles, tool-use
//     summaries, permission explainers...) are ALSO streaming, same path,
//     same model, same max_tokens 64000, same headers (session id
//     included). What sets them apart: "tools": [], thinking
//     {"type":"disabled"}, no context_management, and the helper's own
//     system prompt. The one seen in -p runs is the session title: system
//     text "Generate a concise, sentence-case title ...", output_config.format
//     a json_schema with a "title" property (and the extra beta
//     structured-outputs-2025-12-15 in Anthropic-Beta), one user message
//     "<session>PROMPT</session>...". It is sent only without
//     CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC and only for a prompt of 10
//     characters or more, concurrently with the first conversation request
//     (it arrived first in every run observed), so arrival order cannot be
//     used to classify it. Answered with text that is not such JSON, the
//     CLI simply has no title and goes on.
//   - --json-schema does not use output_config.format: the CLI adds a
//     StructuredOutput tool to the conversation instead (25 tools), so
//     such runs classify as conversations all the same.
//   - A non-streaming request with the conversation's shape is the CLI's
//     fallback after its own stream watchdog gave up on a streaming one
//     (docs/design.md §F22, §F32): the same turn asked again, so it is a
//     conversation request and takes the next step, answered whole once
//     the step's [Pace] has passed.
//   - Compaction (verified with `/compact` on a resumed session) reuses the
//     conversation's shape exactly, tools and thinking included; only its
//     last user message differs: after the last tool results, a text block
//     "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools. ..." asking
//     to "create a detailed summary". The CLI accepts the canned
//     <summary> reply and prints a compact_boundary line. Its fallback path
//     (read from the binary, not observed) uses the system prompt "You are
//     a helpful AI assistant tasked with summarizing conversations."
func Classify(r *Request) Kind {
	p := r.Parsed
	if p == nil {
		return KindOther
	}
	if isCompaction(r) {
		return KindCompaction
	}
	if len(p.Tools) == 0 || hasOutputFormat(p.OutputConfig) ||
		strings.Contains(r.SystemText(), titleSystemPrompt) {
		return KindSide
	}
	return KindConversation
}

// isCompaction recognises the CLI's compaction request by the instructions
// it appends as the last user message, or by the system prompt of its
// fallback path.
func isCompaction(r *Request) bool {
	if strings.Contains(r.SystemText(), "tasked with summarizing conversations") {
		return true
	}
	last := r.LastUserText()
	return strings.Contains(last, "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.") &&
		strings.Contains(last, "create a detailed summary")
}

// hasOutputFormat reports whether output_config asks for structured output
// (a JSON schema): side queries do, the agent's main loop does not.
func hasOutputFormat(raw json.RawMessage) bool {
	var oc struct {
		Format json.RawMessage `json:"format"`
	}
	if json.Unmarshal(raw, &oc) != nil {
		return false
	}
	return len(oc.Format) > 0 && string(oc.Format) != "null"
}

// sideReplyText is the canned answer to a side request. The title query
// validates its answer against a JSON schema; a valid title keeps the CLI
// on its normal path rather than its error branch.
func sideReplyText(r *Request) string {
	if r.Parsed != nil && strings.Contains(string(r.Parsed.OutputConfig), `"title"`) {
		return `{"title":"Fake session title"}`
	}
	return "fakeapi: side reply"
}

// compactionReplyText is the canned answer to a compaction request, in the
// <analysis>/<summary> form the CLI's compaction prompt asks for.
const compactionReplyText = "<analysis>fakeapi</analysis>\n<summary>fakeapi: compacted conversation.</summary>"
