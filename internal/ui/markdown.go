package ui

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Markdown is written one way, here, wherever malarun writes it (the step
// summary, `malarun show --format md`, `malarun summary --format md`): text
// from outside (the model's, a record's, the CLI's) goes in as a code span
// (MarkdownCode, MarkdownCodeCell), as prose (MarkdownText, MarkdownCell) or as a fenced
// block (MarkdownBlock), and renders as the text it is, never as Markdown,
// HTML, a mention or a link.
//
// GitHub finds mentions, issue and commit references and links in the
// rendered text, after Markdown's escapes are gone (a backslash before "@"
// does not stop a mention: github/markup#1168), so escaping cannot keep a
// word from them: a code span can. So in prose each word GitHub could link
// goes in a code span, and the rest is escaped only where Markdown would
// act on it: a colon or an underscore inside a word stays as it is.

// MarkdownCode is s as one inline code span: cleaned to one line of at
// most 300 runes, with a backtick fence longer than any run of backticks
// in it (padded with a space when it begins or ends with one, as
// CommonMark asks). A code span renders its content literally: no HTML,
// link, mention or emphasis.
func MarkdownCode(s string) string { return codeSpan(Clean(s, 300)) }

// MarkdownCodeCell is MarkdownCode in a table's cell.
func MarkdownCodeCell(s string) string { return inCell(MarkdownCode(s)) }

// MarkdownText is one line of prose, outside a table (s is one line
// already: the summary's sentences, made of cleaned values).
func MarkdownText(s string) string { return prose(s, false) }

// MarkdownCell is the same in a table's cell.
func MarkdownCell(s string) string { return prose(s, true) }

// MarkdownBlock is s as a fenced code block ("text") whose fence no line
// of s can close, each line after indent; s is made inert (it quotes the
// model: bidirectional controls would reorder it on the page).
func MarkdownBlock(s, indent string) string {
	s = strings.TrimRight(Inert(s), "\n")
	fence := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	var b strings.Builder
	b.WriteString(indent + fence + "text\n")
	for l := range strings.SplitSeq(s, "\n") {
		b.WriteString(indent + l + "\n")
	}
	b.WriteString(indent + fence + "\n")
	return b.String()
}

// codeSpan is s, one line, as a code span.
func codeSpan(s string) string {
	if s == "" {
		return "` `"
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// inCell is Markdown made to stay in a table's cell: there a bar ends the
// cell even in a code span unless escaped.
func inCell(md string) string { return strings.ReplaceAll(md, "|", `\|`) }

func prose(s string, cell bool) string {
	var b strings.Builder
	for i, word := range strings.Split(s, " ") {
		if i > 0 {
			b.WriteByte(' ')
		}
		core := strings.TrimRight(word, ",;.:)")
		if linkable(core) {
			code := MarkdownCode(core)
			if cell {
				code = inCell(code)
			}
			b.WriteString(code)
			b.WriteString(escapeWord(word[len(core):]))
			continue
		}
		b.WriteString(escapeWord(word))
	}
	return b.String()
}

// linkable reports a word GitHub could turn into a mention, a reference
// or a link: one with "@" (a mention, an email, user@sha), "#" (#12,
// owner/repo#12), "://" or a scheme GitHub links (mailto:, xmpp:), one
// that begins with "www.", a "GH-12", or a run of 7 to 40 hex digits (a
// commit's hash).
func linkable(w string) bool {
	lower := strings.ToLower(w)
	if strings.ContainsAny(w, "@#") || strings.Contains(w, "://") || strings.HasPrefix(lower, "www.") ||
		strings.HasPrefix(lower, "mailto:") || strings.HasPrefix(lower, "xmpp:") {
		return true
	}
	if rest, ok := strings.CutPrefix(lower, "gh-"); ok && rest != "" && rest[0] >= '0' && rest[0] <= '9' {
		return true
	}
	if len(w) >= 7 && len(w) <= 40 && strings.Trim(lower, "0123456789abcdef") == "" {
		return true
	}
	return false
}

// escapeWord escapes what Markdown acts on in a word: emphasis (an
// asterisk always, an underscore at a word's edge), code, links, HTML,
// entities, strikethrough and a table's bar.
func escapeWord(w string) string {
	var b strings.Builder
	for i, c := range w {
		escape := strings.ContainsRune("\\`*[]<>|~&", c)
		if c == '_' {
			before, _ := utf8.DecodeLastRuneInString(w[:i])
			after, _ := utf8.DecodeRuneInString(w[i+1:])
			escape = !wordRune(before) || !wordRune(after)
		}
		if escape {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func wordRune(r rune) bool { return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r)) }

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}
