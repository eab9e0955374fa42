package replay

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"html"
	"regexp"
	"strings"
	"testing"
)

// hostile is text a model or a tool could print, aimed at each medium.
const hostile = "a\x1b]0;pwned\x07b \x1b[2J\x1b[31mred \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \u202eevil\u202c \x9b31m \r\b" +
	"<script>window.pwned=1</script> <img src=x onerror=\"window.pwned=2\"> </style></svg></details> ]]> " +
	"[x](javascript:alert(1)) @octocat #123 ``` `code` ::error::planted ##[error]planted\nsecond line"

// hostileItems is the hang-then-resume story with hostile text in every
// text field.
func hostileItems(t *testing.T) (Header, []Item, Summary) {
	rf := hangThenResume(t)
	var r recorder
	sum, err := Tell(Source{Issue: "issue-1", RunDir: rf.dir, Status: "succeeded"}, &r)
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.items {
		it := &r.items[i]
		it.Text, it.Summary, it.Head, it.Tail, it.Reason, it.Tool = hostile, hostile, hostile, hostile, hostile, hostile
		if it.Info != nil {
			info := *it.Info
			info.Reason, info.Outcome, info.Session = hostile, hostile, hostile
			it.Info = &info
		}
	}
	sum.Reason = hostile
	return r.header, r.items, sum
}

func render(t *testing.T, r Renderer, h Header, items []Item, s Summary) string {
	t.Helper()
	if err := r.Begin(h); err != nil {
		t.Fatal(err)
	}
	for i := range items {
		if err := r.Item(&items[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.End(s); err != nil {
		t.Fatal(err)
	}
	return ""
}

var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

func TestTextIsInertAndWrapped(t *testing.T) {
	h, items, s := hostileItems(t)
	for _, opt := range []TextOptions{{}, {Width: 40}, {Width: 80, Color: true}} {
		var out bytes.Buffer
		render(t, NewText(&out, opt), h, items, s)
		text := out.String()
		if opt.Color && !strings.Contains(text, "\x1b[") {
			t.Errorf("%+v: no colour", opt)
		}
		plain := sgr.ReplaceAllString(text, "")
		for _, r := range plain {
			if r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r < 0xa0 || r == '\u202e' {
				t.Fatalf("%+v: %U reaches the terminal:\n%q", opt, r, plain)
			}
		}
		if !opt.Color && plain != text {
			t.Errorf("%+v: colour without Color", opt)
		}
		for _, want := range []string{"hang: no output for 5m0s", "attempt 2", "retry decision: resume after 5s", "^[]0;pwned^Gb"} {
			if opt.Width == 0 && !strings.Contains(plain, want) {
				t.Errorf("%+v: lacks %q", opt, want)
			}
		}
		if opt.Width > 0 {
			for _, l := range strings.Split(plain, "\n") {
				if w := visibleWidth(l); w > opt.Width {
					t.Errorf("width %d: a line of %d columns: %q", opt.Width, w, l)
				}
			}
		}
	}
}

func TestMarkdownKeepsHostileTextInCode(t *testing.T) {
	h, items, s := hostileItems(t)
	var out bytes.Buffer
	render(t, NewMarkdown(&out), h, items, s)
	md := out.String()
	if strings.ContainsAny(md, "\x1b\x07\u202e\u009b") {
		t.Errorf("a control reaches the Markdown")
	}
	// Outside code spans and fenced blocks, none of the hostile text is left.
	inFence := false
	for _, l := range strings.Split(md, "\n") {
		trim := strings.TrimSpace(l)
		if strings.HasPrefix(trim, "````") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		outside := withoutCodeSpans(trim)
		for _, bad := range []string{"<script", "onerror", "</details", "javascript:", "@octocat", "#123", "::error", "##["} {
			if strings.Contains(outside, bad) {
				t.Errorf("%q outside code in line %q", bad, l)
			}
		}
	}
	if inFence {
		t.Error("a fenced block is not closed")
	}
}

func TestHTMLIsSelfContainedAndEscaped(t *testing.T) {
	h, items, s := hostileItems(t)
	var out bytes.Buffer
	render(t, NewHTML(&out), h, items, s)
	page := out.String()
	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
	}
	style := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindAllStringSubmatch(page, -1)
	script := regexp.MustCompile(`(?s)<script>(.*?)</script>`).FindAllStringSubmatch(page, -1)
	if len(style) != 1 || len(script) != 1 {
		t.Fatalf("%d style and %d script elements, want one each (a planted one is escaped)", len(style), len(script))
	}
	// The attribute as a browser reads it: its character references
	// decoded (html/template writes ' and + as references).
	csp := regexp.MustCompile(`http-equiv="Content-Security-Policy" content="([^"]*)"`).FindStringSubmatch(page)
	if csp == nil {
		t.Fatal("the page has no Content-Security-Policy")
	}
	policy := html.UnescapeString(csp[1])
	if !strings.Contains(policy, "default-src 'none'") || !strings.Contains(policy, hash(style[0][1])) ||
		!strings.Contains(policy, hash(script[0][1])) || strings.Contains(policy, "unsafe") {
		t.Errorf("CSP %q does not allow exactly the page's style and script by hash", policy)
	}
	if m := regexp.MustCompile(`(?i)<[a-z][^>]*\s(on[a-z]+|style|href|src)=`).FindString(page); m != "" {
		t.Errorf("the page has an attribute %q: CSP blocks inline handlers and styles, and no URL is built", m)
	}
	if strings.Contains(page, "<img") || strings.Contains(page, "</details> ]]>") || strings.ContainsAny(page, "\x1b\x07\u202e") {
		t.Error("hostile text is not escaped")
	}
	if n := strings.Count(page, `<g class="lane-group" data-attempt="`); n != 2 {
		t.Errorf("%d lanes, want one per attempt (2)", n)
	}
	// Every drawn item points at an item of the story.
	for _, m := range regexp.MustCompile(`data-seq="(\d+)"`).FindAllStringSubmatch(page, -1) {
		if !strings.Contains(page, `id="item-`+m[1]+`"`) {
			t.Errorf("the picture points at item %s, which the story lacks", m[1])
		}
	}
	for _, want := range []string{`class="silence"`, `class="bar"`, `class="wait"`, `class="mark bad"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the picture lacks %s", want)
		}
	}
}

// withoutCodeSpans removes CommonMark code spans from a line: a run of n
// backticks up to the next run of exactly n.
func withoutCodeSpans(l string) string {
	var out strings.Builder
	for i := 0; i < len(l); {
		if l[i] != '`' {
			out.WriteByte(l[i])
			i++
			continue
		}
		n := 0
		for i+n < len(l) && l[i+n] == '`' {
			n++
		}
		end := -1
		for j := i + n; j < len(l); {
			if l[j] != '`' {
				j++
				continue
			}
			k := 0
			for j+k < len(l) && l[j+k] == '`' {
				k++
			}
			if k == n {
				end = j + k
				break
			}
			j += k
		}
		if end < 0 {
			out.WriteString(l[i:])
			break
		}
		i = end
	}
	return out.String()
}
