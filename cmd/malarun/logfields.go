package main

import "io"

// withoutEmptyFields leaves out of each log record the fields that say
// nothing: an empty string, an empty array or object, a null. A retry
// decision to give up has no session to name, a result no terminal reason,
// an old CLI no version, and `session=` or `"left":[]` in a log line
// only makes a reader wonder (issue 49). Done once for every record, here,
// rather than at each of the sixty places that log a field that may be
// empty. zerolog writes a record as one JSON object in one Write, before
// the console writer formats it; a record that is not such an object
// passes as it came.
type withoutEmptyFields struct{ next io.Writer }

func (w withoutEmptyFields) Write(p []byte) (int, error) {
	if _, err := w.next.Write(dropEmptyFields(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// dropEmptyFields is the JSON object line p without its members whose
// value is "", [], {} or null; p itself when it has none, or is not one
// object (followed by a newline or nothing).
func dropEmptyFields(p []byte) []byte {
	if len(p) < 2 || p[0] != '{' {
		return p
	}
	var kept [][2]int // the members kept, as spans of p
	dropped := false
	i := skipSpace(p, 1)
	if i < len(p) && p[i] == '}' {
		return p // {}
	}
	for {
		memberStart := i
		if i >= len(p) || p[i] != '"' {
			return p
		}
		keyEnd := skipString(p, i)
		if keyEnd < 0 {
			return p
		}
		i = skipSpace(p, keyEnd)
		if i >= len(p) || p[i] != ':' {
			return p
		}
		valueStart := skipSpace(p, i+1)
		valueEnd := skipValue(p, valueStart)
		if valueEnd < 0 {
			return p
		}
		if emptyValue(p[valueStart:valueEnd]) {
			dropped = true
		} else {
			kept = append(kept, [2]int{memberStart, valueEnd})
		}
		i = skipSpace(p, valueEnd)
		if i >= len(p) || (p[i] != ',' && p[i] != '}') {
			return p
		}
		if p[i] == '}' {
			break
		}
		i = skipSpace(p, i+1)
	}
	if !dropped {
		return p
	}
	out := make([]byte, 0, len(p))
	out = append(out, '{')
	for k, m := range kept {
		if k > 0 {
			out = append(out, ',')
		}
		out = append(out, p[m[0]:m[1]]...)
	}
	return append(out, p[i:]...) // the closing brace and what follows it
}

func emptyValue(v []byte) bool {
	switch string(v) {
	case `""`, `[]`, `{}`, `null`:
		return true
	}
	return false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(p []byte, i int) int {
	for i < len(p) && isSpace(p[i]) {
		i++
	}
	return i
}

// skipString is the index past the JSON string at p[i] ('"'), -1 if it
// does not end.
func skipString(p []byte, i int) int {
	for i++; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue is the index past the JSON value at p[i], -1 if it does not end.
func skipValue(p []byte, i int) int {
	if i >= len(p) {
		return -1
	}
	switch p[i] {
	case '"':
		return skipString(p, i)
	case '[', '{':
		depth := 0
		for ; i < len(p); i++ {
			switch p[i] {
			case '"':
				end := skipString(p, i)
				if end < 0 {
					return -1
				}
				i = end - 1
			case '[', '{':
				depth++
			case ']', '}':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	}
	for ; i < len(p); i++ { // a number, true, false or null
		switch p[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return -1
}
