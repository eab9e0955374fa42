package stream

// The names the CLI prints on nearly every line (a line's type, a
// stream_event's event and block and delta types), kept as constants: a
// reply with partial messages is thousands of lines, and a string made for
// each of these would be thousands of allocations for the same few words.

// vocabulary reports whether f holds one of those names.
func vocabulary(f field) bool {
	switch f {
	case fType, fSubtype, fEventType, fEventBlockType, fEventDeltaType, fStatus:
		return true
	}
	return false
}

// interned is b as one of those names, without an allocation ("" when it
// is none of them: the caller makes a string of its own).
func interned(b []byte) string {
	switch string(b) { // compared, not converted: no allocation
	case "stream_event":
		return "stream_event"
	case "assistant":
		return "assistant"
	case "user":
		return "user"
	case "system":
		return "system"
	case "result":
		return "result"
	case "content_block_delta":
		return "content_block_delta"
	case "content_block_start":
		return "content_block_start"
	case "content_block_stop":
		return "content_block_stop"
	case "message_start":
		return "message_start"
	case "message_delta":
		return "message_delta"
	case "message_stop":
		return "message_stop"
	case "ping":
		return "ping"
	case "text_delta":
		return "text_delta"
	case "thinking_delta":
		return "thinking_delta"
	case "input_json_delta":
		return "input_json_delta"
	case "signature_delta":
		return "signature_delta"
	case "text":
		return "text"
	case "thinking":
		return "thinking"
	case "tool_use":
		return "tool_use"
	case "thinking_tokens":
		return "thinking_tokens"
	case "status":
		return "status"
	case "requesting":
		return "requesting"
	}
	return ""
}
