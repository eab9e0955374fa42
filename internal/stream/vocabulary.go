package stream

import "unicode/utf8"

// The kinds of line the CLI is known to print (recorded from 2.1.197 to
// 2.1.332, thinking_tokens included; model_refusal_no_fallback and
// memory_recall read from 2.1.332's output filter; and the Agent SDK's
// message types), whether malarun acts on them
// or not. A line of another kind is what a newer CLI may bring that
// malarun does not know: it is ignored, and said once (docs/design.md
// §F17), instead of a warning on every run of a CLI newer than the
// newest tested.
func knownType(t string) bool {
	switch t {
	case "system", "assistant", "user", "result", "stream_event", "rate_limit_event",
		"tool_progress", "auth_status", "tool_use_summary", "prompt_suggestion", "keep_alive",
		"conversation_reset": // 2.1.332 on /clear (docs/design.md §F37)
		return true
	}
	return false
}

func knownSystemSubtype(s string) bool {
	switch s {
	case "init", "api_retry", "compact_boundary", "status",
		"hook_started", "hook_progress", "hook_response",
		"task_started", "task_progress", "task_updated", "task_notification",
		"background_tasks_changed", "files_persisted", "local_command_output", "elicitation_complete",
		"thinking_tokens", "model_refusal_no_fallback", "memory_recall",
		// 2.1.332's lines that end, hand over or describe a turn (read from
		// its code, docs/design.md §F37).
		"turn_preempted", "turn_handoff_available", "session_state_changed", "worker_shutting_down",
		"session_writes_lost", "turn_duration", "agents_killed",
		"commands_changed": // both versions' schemas; 2.1.332 prints it when it takes the address for Anthropic's
		return true
	}
	return false
}

// Unfamiliar names what in a decoded line malarun does not know ("type
// X", "system subtype Y"), or "" when it knows the kind. Results are judged
// by attempt.UnknownResult, which knows what each of theirs means.
func Unfamiliar(ev Event) string {
	switch {
	case ev.Kind != KindJSON || ev.Type == "result":
		return ""
	case !knownType(ev.Type):
		return "type " + shortName(ev.Type)
	case ev.Type == "system" && !knownSystemSubtype(ev.Subtype):
		return "system subtype " + shortName(ev.Subtype)
	}
	return ""
}

// shortName bounds a name the CLI printed to 64 bytes, cut at a rune: it
// goes into a log line once per name, and a run keeps at most
// MaxListItems of them.
func shortName(s string) string {
	if len(s) <= 64 {
		return s
	}
	cut := 64
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
