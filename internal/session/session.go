// Package session reads the CLI's own session file for one fact: whether
// the prompt malarun gave an attempt reached the conversation
// (docs/design.md §F38, §D36). The CLI writes each session to
// <config dir>/projects/<encoded cwd>/<session id>.jsonl, its prompt as a
// user message whose content is the prompt as a JSON string. A model that
// answered a turn without the prompt ("I don't see a request", exit 0) has a
// session whose new user message does not hold it. The file is the CLI's
// private format, so every doubt is Unknown, which judges nothing: only a
// session that plainly holds another prompt and not this one is NotSeen.
package session

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/malarun/malarun/internal/environ"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/statefile"
)

// Verdict is what a session file says of a prompt.
type Verdict int

const (
	Unknown Verdict = iota // no file, another format, or too much to read: nothing is judged
	Seen                   // a user message of the attempt holds the prompt
	NotSeen                // the attempt's user messages hold another text, and the model answered
)

func (v Verdict) String() string {
	return [...]string{"unknown", "seen", "not seen"}[v]
}

// Limits on what is read: a session grows by an attempt's whole
// conversation (tool results, images), and one line can hold a prompt of
// 32 MiB, JSON-escaped. Past them the verdict is Unknown.
const (
	maxNewBytes  = 256 << 20 // what an attempt added to the file
	maxLineBytes = 64 << 20  // one line
	maxDirs      = 4096      // projects/ folders looked in for the file
	headBytes    = 256       // how much of the prompt is looked for
)

// Path is the session file of id for a CLI run with env: under
// CLAUDE_CONFIG_DIR, else HOME/.claude, in any folder of projects/ (the
// folder's name is the CLI's encoding of the working directory, which
// versions spell differently). "" when there is none, or id is no session
// id malarun makes.
func Path(env []string, id string) string {
	if !record.ValidSessionID(id) {
		return ""
	}
	dir := environ.Get(env, "CLAUDE_CONFIG_DIR")
	if dir == "" {
		home := environ.Get(env, "HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".claude")
	}
	projects := filepath.Join(dir, "projects")
	f, err := os.Open(projects)
	if err != nil {
		return ""
	}
	defer f.Close()
	names, _ := f.Readdirnames(maxDirs)
	for _, n := range names {
		p := filepath.Join(projects, n, id+".jsonl")
		if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// Size is the length of the file at path now (0: none yet).
func Size(path string) int64 {
	if path == "" {
		return 0
	}
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() {
		return 0
	}
	return st.Size()
}

// Check reads what the session file at path gained since it was from
// bytes long, and says whether it holds prompt.
func Check(path string, from int64, prompt []byte) Verdict {
	if path == "" {
		return Unknown
	}
	f, err := statefile.Open(path) // a regular file, no link, no blocking
	if err != nil {
		return Unknown
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() < from || st.Size()-from > maxNewBytes {
		return Unknown // rewritten shorter, or more than is read
	}
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return Unknown
	}
	return told(io.LimitReader(f, maxNewBytes), prompt)
}

// told says whether the session lines r holds show prompt in one of
// their user messages. A user message whose content is a string is a
// prompt (tool results are arrays); the CLI writes the prompt so,
// exactly as given (measured on 2.1.197 and 2.1.332).
func told(r io.Reader, prompt []byte) Verdict { return toldWithin(r, prompt, maxLineBytes) }

// toldWithin is told with the longest line it looks at.
func toldWithin(r io.Reader, prompt []byte, maxLine int) Verdict {
	head := headOf(prompt)
	if head == nil {
		return Unknown
	}
	br := bufio.NewReaderSize(r, 64<<10)
	var prompts, answers int
	for {
		line, long, err := readLine(br, maxLine)
		if long {
			return Unknown // a line too long to look at may be the one
		}
		if len(line) > 0 {
			switch {
			case isUserPrompt(line):
				if bytes.Contains(line, head) {
					return Seen
				}
				prompts++
			case bytes.Contains(line, []byte(`"type":"assistant"`)) && !bytes.Contains(line, []byte(`"model":"<synthetic>"`)):
				answers++
			}
		}
		if err != nil {
			break
		}
	}
	if prompts > 0 && answers > 0 {
		return NotSeen
	}
	return Unknown
}

// isUserPrompt reports whether a session line is a user message whose
// content is a string.
func isUserPrompt(line []byte) bool {
	return bytes.Contains(line, []byte(`"type":"user"`)) && bytes.Contains(line, []byte(`"role":"user","content":"`))
}

// readLine reads one line, or reports that it was longer than max.
func readLine(br *bufio.Reader, max int) (line []byte, long bool, err error) {
	var buf []byte
	for {
		part, err := br.ReadSlice('\n')
		if len(buf)+len(part) > max {
			return nil, true, err
		}
		buf = append(buf, part...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return buf, false, err
		}
	}
}

// headOf is how the start of prompt reads inside a JSON string the CLI
// wrote: its first headBytes (leading white space and a byte order mark
// left out, cut at a rune, and before any byte that is not UTF-8, which a
// decoder may replace in more than one way), escaped as JavaScript's
// JSON.stringify escapes. nil when nothing is left to look for.
func headOf(prompt []byte) []byte {
	p := bytes.TrimLeft(bytes.TrimPrefix(bytes.TrimLeft(prompt, " \t\r\n"), []byte("\xef\xbb\xbf")), " \t\r\n")
	var b strings.Builder
	for i := 0; i < len(p) && i < headBytes; {
		r, n := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		writeJS(&b, r)
		i += n
	}
	if b.Len() == 0 {
		return nil
	}
	return []byte(b.String())
}

// writeJS writes r as JSON.stringify does inside a string: '"' and '\\'
// escaped, the C0 controls as \b \t \n \f \r or \u00xx (lower-case hex),
// everything else (DEL, U+2028, non-ASCII) as it is.
func writeJS(b *strings.Builder, r rune) {
	switch r {
	case '"':
		b.WriteString(`\"`)
	case '\\':
		b.WriteString(`\\`)
	case '\b':
		b.WriteString(`\b`)
	case '\t':
		b.WriteString(`\t`)
	case '\n':
		b.WriteString(`\n`)
	case '\f':
		b.WriteString(`\f`)
	case '\r':
		b.WriteString(`\r`)
	default:
		if r < 0x20 {
			const hex = "0123456789abcdef"
			b.WriteString(`\u00`)
			b.WriteByte(hex[r>>4])
			b.WriteByte(hex[r&0xf])
			return
		}
		b.WriteRune(r)
	}
}
