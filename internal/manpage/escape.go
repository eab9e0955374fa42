package manpage

import (
	"fmt"
	"strings"
)

// escape makes s literal text inside a roff line. What roff would read
// otherwise:
//   - a backslash starts an escape: \e prints one;
//   - '-' is a hyphen, which may print as U+2010 and cannot be pasted into a
//     shell: \- is the minus sign, ASCII '-' on a terminal;
//   - ' and ` print as curly quotes in groff's UTF-8 output, and ^ and ~ as
//     small accents: \(aq, \(ga, \(ha and \(ti are the ASCII characters, so
//     a command copied from the page runs;
//   - a control character (a newline, an escape sequence) has no place in
//     a line: it becomes a space;
//   - any other non-ASCII character is written as \[uXXXX], so the page
//     is ASCII and reads the same whatever encoding the formatter assumes.
//
// A line beginning with '.' is handled where lines are written (line).
func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\e`)
		case r == '-':
			b.WriteString(`\-`)
		case r == '\'':
			b.WriteString(`\(aq`)
		case r == '`':
			b.WriteString(`\(ga`)
		case r == '^':
			b.WriteString(`\(ha`)
		case r == '~':
			b.WriteString(`\(ti`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			b.WriteByte(' ')
		case r >= 0x80:
			fmt.Fprintf(&b, `\[u%04X]`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
