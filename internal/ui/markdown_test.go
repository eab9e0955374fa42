package ui

import (
	"strings"
	"testing"
)

// TestMarkdownSentencesMentionAndLinkNothing: the short values from records
// in the summary's sentences (internal/fleet) (a phase, an outcome, a limit type, a tool's
// name, an issue id) cannot become a mention, a reference or a link on
// GitHub, which finds them in the rendered text, escapes or not: each such
// word is in a code span. The rest reads as it is: no needless escape.
func TestMarkdownSentencesMentionAndLinkNothing(t *testing.T) {
	in := "@org/team mail@example.com www.evil.example WWW.x https://evil.example/*x* mailto:x xmpp:y GH-12, #12 owner/repo#3 " +
		"0a1b2c3d user@0a1b2c3 night: 11 issues five_hour _emph_ *bold* [link](x) <b>&amp; ~strike~ a|b"
	for _, form := range []struct {
		name string
		md   string
	}{{"prose", MarkdownText(in)}, {"cell", MarkdownCell(in)}} {
		out := outsideCodeSpans(form.md)
		for _, bad := range []string{"@", "www.", "WWW.", "://", "mailto:", "xmpp:", "GH-12", "#", "0a1b2c3"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s: %q outside a code span in %q", form.name, bad, form.md)
			}
		}
		for _, want := range []string{"night: 11 issues", "five_hour", `\_emph\_`, `\*bold\*`, `\[link\](x)`, `\<b\>\&amp;`, `\~strike\~`, `a\|b`} {
			if !strings.Contains(form.md, want) {
				t.Errorf("%s: %q not in %q", form.name, want, form.md)
			}
		}
	}
	if got := MarkdownCell("x x@y|z"); !strings.Contains(got, "`x@y\\|z`") {
		t.Errorf("a bar in a code span in a cell is not escaped: %q", got)
	}
}

// outsideCodeSpans is md without its code spans (a run of backticks to
// the next run of as many).
func outsideCodeSpans(md string) string {
	var b strings.Builder
	for md != "" {
		i := strings.IndexByte(md, '`')
		if i < 0 {
			b.WriteString(md)
			break
		}
		b.WriteString(md[:i])
		n := len(md[i:]) - len(strings.TrimLeft(md[i:], "`"))
		fence := md[i : i+n]
		rest := md[i+n:]
		end := strings.Index(rest, fence)
		if end < 0 {
			b.WriteString(rest)
			break
		}
		md = rest[end+n:]
	}
	return b.String()
}

// The one escaper's code span and block: a fence longer than any run of
// backticks inside, a space where the text begins or ends with one, an
// empty span still a span; in a table's cell a bar is escaped even in a
// span; a block's fence is at least three backticks, each line indented.
func TestMarkdownCodeAndBlock(t *testing.T) {
	for in, want := range map[string]string{
		"":            "` `",
		"a":           "`a`",
		"a`b":         "``a`b``",
		"`x`":         "`` `x` ``",
		"a\nb\x1b[2J": "`a b [2J`",
		"|":           "`|`",
	} {
		if got := MarkdownCode(in); got != want {
			t.Errorf("MarkdownCode(%q) = %q, want %q", in, got, want)
		}
	}
	if got := code("a|b"); got != "`a\\|b`" {
		t.Errorf("code in a cell: %q", got)
	}
	if got := MarkdownCodeCell("x|" + strings.Repeat("y", 400)); !strings.HasPrefix(got, "`x\\|yy") || !strings.HasSuffix(got, "y…`") || len(got) > 310 {
		t.Errorf("MarkdownCodeCell = %q, want the bar escaped and the text cut", got)
	}
	if got := MarkdownBlock("one\n````\nthree\x1b\n\n", "  "); got != "  `````text\n  one\n  ````\n  three^[\n  `````\n" {
		t.Errorf("MarkdownBlock = %q", got)
	}
	if got := MarkdownBlock("", ""); got != "```text\n\n```\n" {
		t.Errorf("an empty block = %q", got)
	}
}
