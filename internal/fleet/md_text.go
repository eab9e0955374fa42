package fleet

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/malarun/malarun/internal/ui"
)

// The Markdown form's prose. The summary's sentences carry short values
// from records (a phase, an outcome, a limit's type, a tool's name, an
// issue id), which must neither render as Markdown nor become a mention
// or a link on GitHub. GitHub finds mentions, issue and commit references
// and links in the rendered text, after Markdown's escapes are gone (a
// backslash before "@" does not stop a mention: github/markup#1168), so
// escaping cannot keep a word from them: a code span can. So each word
// GitHub could link goes in a code span, and the rest is escaped only
// where Markdown would act on it: a colon or an underscore inside a word
// stays as it is.

// mdText is one line of the summary's prose in Markdown, outside a table.
func mdText(s string) string { return mdProse(s, false) }

// mdCell is the same in a table's cell, where a bar ends the cell even in
// a code span unless escaped.
func mdCell(s string) string { return mdProse(s, true) }

func mdProse(s string, cell bool) string {
	var b strings.Builder
	for i, word := range strings.Split(s, " ") {
		if i > 0 {
			b.WriteByte(' ')
		}
		core := strings.TrimRight(word, ",;.:)")
		if linkable(core) {
			code := ui.MarkdownCode(core)
			if cell {
				code = strings.ReplaceAll(code, "|", `\|`)
			}
			b.WriteString(code)
			b.WriteString(mdEscape(word[len(core):]))
			continue
		}
		b.WriteString(mdEscape(word))
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

// mdEscape escapes what Markdown acts on in a word: emphasis (an asterisk
// always, an underscore at a word's edge), code, links, HTML, entities,
// strikethrough and a table's bar.
func mdEscape(w string) string {
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
