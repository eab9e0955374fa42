package replay

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// summaryRunes bounds a tool call's one-line gist.
const summaryRunes = 200

// describe is a tool call's gist for people, fitting the tool: a Bash
// command and its description, the path a file tool works on, a search's
// pattern. input is the call's input as compact JSON, possibly cut (the
// decoder keeps 512 bytes): a value cut short is shown as far as it goes.
// Empty when nothing fits: the renderer then shows the input itself.
func describe(tool, input string) string {
	var keys []string
	switch tool {
	case "Bash":
		keys = []string{"command", "description"}
	case "Read", "Write", "Edit", "MultiEdit":
		keys = []string{"file_path"}
	case "NotebookEdit", "NotebookRead":
		keys = []string{"notebook_path"}
	case "Glob":
		keys = []string{"pattern", "path"}
	case "Grep":
		keys = []string{"pattern", "path", "glob"}
	case "WebFetch":
		keys = []string{"url"}
	case "WebSearch":
		keys = []string{"query"}
	case "Task", "Agent":
		keys = []string{"description", "subagent_type"}
	case "BashOutput", "KillShell", "KillBash", "TaskOutput", "TaskStop":
		keys = []string{"bash_id", "shell_id", "task_id"}
	default:
		return ""
	}
	vals := topStrings(input, keys)
	var parts []string
	for _, k := range keys {
		if v := vals[k]; v != "" {
			parts = append(parts, oneLine(v))
		}
	}
	return cutRunes(strings.Join(parts, " — "), summaryRunes)
}

// topStrings reads the string values of keys at the top level of a JSON
// object that may be cut short anywhere: what was read before the cut is
// kept, and a string cut short is kept as far as it goes.
func topStrings(input string, keys []string) map[string]string {
	out := map[string]string{}
	dec := json.NewDecoder(strings.NewReader(input))
	depth, key := 0, ""
	wantValue := false
	for {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			if depth == 1 && wantValue && isWanted(key, keys) {
				if s, ok := cutString(input[off:]); ok {
					out[key] = s
				}
			}
			return out
		}
		switch t := tok.(type) {
		case json.Delim:
			if t == '{' || t == '[' {
				depth++
			} else {
				depth--
			}
			if depth == 1 {
				wantValue = false // a container value of the top level ended
			} else if depth == 2 && wantValue {
				wantValue = false // a container value began: not a string
			}
			continue
		case string:
			if depth == 1 && !wantValue {
				key, wantValue = t, true
				continue
			}
			if depth == 1 && isWanted(key, keys) {
				out[key] = t
			}
		}
		if depth == 1 {
			wantValue = false
		}
	}
}

func isWanted(k string, keys []string) bool {
	for _, w := range keys {
		if k == w {
			return true
		}
	}
	return false
}

// cutString decodes a JSON string cut short: rest is what follows the
// colon, e.g. `:"go test ./.` or ` "ab\u00`.
func cutString(rest string) (string, bool) {
	rest = strings.TrimLeft(rest, " \t\r\n:")
	if !strings.HasPrefix(rest, `"`) {
		return "", false
	}
	b := []byte(rest)
	// Drop a dangling escape, then close the string.
	for range 6 {
		var s string
		if json.Unmarshal(append(bytes.Clone(b), '"'), &s) == nil {
			return s + "…", true
		}
		if len(b) <= 1 {
			break
		}
		b = b[:len(b)-1]
	}
	return "", false
}

// oneLine joins lines with " ⏎ " and trims blanks.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }), " ⏎ ")
}

// cutRunes keeps the first n runes of s, marking a cut with "…".
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, k := 0, 0
	for i = range s {
		if k == n-1 {
			break
		}
		k++
	}
	return s[:i] + "…"
}
