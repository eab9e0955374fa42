package replay

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/ui"
)

// The page's own style and script, inline (the page is one file that works
// offline) and allowed by their hashes alone (docs/design.md §D20).
var (
	//go:embed assets/show.css
	pageCSS string
	//go:embed assets/show.js
	pageJS string
)

// contentSecurityPolicy allows nothing but the page's own style and script:
// no network, no other script, no inline handler or style attribute.
func contentSecurityPolicy() string {
	return "default-src 'none'; style-src " + ui.CSPSource(pageCSS) + "; script-src " + ui.CSPSource(pageJS) +
		"; img-src 'none'; base-uri 'none'; form-action 'none'"
}

// htmlRenderer writes one self-contained page: the story as it is told,
// then the timeline picture, which CSS shows above it. Text from outside is
// escaped everywhere (html.EscapeString) and never reaches the style, the
// script or a URL.
type htmlRenderer struct {
	w       *bufio.Writer
	header  Header
	picture picture
}

// NewHTML writes the story as one HTML page to w.
func NewHTML(w io.Writer) Renderer { return &htmlRenderer{w: bufio.NewWriter(w)} }

func (h *htmlRenderer) Begin(hd Header) error {
	h.header = hd
	h.picture.timed = hd.Timed
	fmt.Fprintf(h.w, `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="%s">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>malarun show %s, run %s</title>
<style>%s</style>
</head><body><main>
<section id="story">
`, ui.HTMLText(contentSecurityPolicy()), ui.HTMLText(hd.Issue), ui.HTMLText(hd.RunID), pageCSS)
	return nil
}

func (h *htmlRenderer) Item(it *Item) error {
	h.picture.add(it)
	class := "item k-" + string(it.Kind)
	if ByMalarun(it.Kind) && it.Kind != event.AttemptStarted {
		class += " malarun"
	}
	at := ""
	if !it.Time.IsZero() {
		at = `<span class="t">` + it.Time.UTC().Format("15:04:05") + `</span>`
	}
	switch it.Kind {
	case event.AttemptStarted:
		a := it.Info
		fmt.Fprintf(h.w, `<h2 class="%s" id="item-%d">%sAttempt %d: %s`, class, it.Seq, at, it.Attempt, ui.HTMLText(beganText(a.Began)))
		if a.Session != "" {
			fmt.Fprintf(h.w, `, session <code>%s</code>`, ui.HTMLText(ui.ShortSession(a.Session)))
		}
		if a.Pid != 0 {
			fmt.Fprintf(h.w, `, pid %d`, a.Pid)
		}
		h.w.WriteString("</h2>\n")
		return nil
	}
	fmt.Fprintf(h.w, `<div class="%s" id="item-%d">%s`, class, it.Seq, at)
	switch it.Kind {
	case KindPrompt:
		fmt.Fprintf(h.w, `prompt <code>%s</code> (%s)`, ui.HTMLText(it.Path), bytesText(it.Bytes))
		h.pre(it.Text, 0)
	case KindText:
		h.w.WriteString(`assistant`)
		if it.Agent != "" {
			fmt.Fprintf(h.w, ` (sub-agent <code>%s</code>)`, ui.HTMLText(it.Agent))
		}
		h.pre(it.Text, 0)
	case KindToolCall:
		fmt.Fprintf(h.w, `<span class="tool">%s</span> <code>%s</code>`, ui.HTMLText(it.Tool), ui.HTMLText(firstNonEmpty(it.Summary, it.Input)))
		if it.Background {
			h.w.WriteString(` (background)`)
		}
	case KindToolRunning:
		fmt.Fprintf(h.w, `<span class="tool">%s</span> still running, %s`, ui.HTMLText(it.Tool), ui.Duration(time.Duration(it.TookMS)*time.Millisecond))
	case KindHook:
		class := "ok"
		if it.IsError {
			class = "err"
		}
		fmt.Fprintf(h.w, `hook <span class="tool">%s</span> <span class="%s">%s</span>`, ui.HTMLText(it.Hook), class, ui.HTMLText(hookGist(it)))
	case KindToolResult:
		status := `<span class="ok">ok</span>`
		if it.IsError {
			status = `<span class="err">error</span>`
		}
		fmt.Fprintf(h.w, `↳ %s <code>%s</code>, %s`, status, ui.HTMLText(it.Tool), bytesText(it.Bytes))
		if it.TookMS > 0 {
			fmt.Fprintf(h.w, `, %s`, ui.Duration(time.Duration(it.TookMS)*time.Millisecond))
		}
		out := it.Head
		if it.Tail != "" {
			out += "\n…\n" + it.Tail
		}
		h.pre(out, 6)
	case KindResult:
		if it.IsError || it.Subtype != "success" {
			fmt.Fprintf(h.w, `<span class="err">error result <code>%s</code></span>`, ui.HTMLText(it.Subtype))
		} else {
			h.w.WriteString(`<span class="ok">result</span>`)
		}
		fmt.Fprintf(h.w, `, %s`, ui.Cost(it.CostUSD))
		h.pre(it.Text, 12)
	case event.AttemptEnded:
		a := it.Info
		fmt.Fprintf(h.w, `<span class="what">attempt %d ended: %s</span>`, it.Attempt, ui.HTMLText(firstNonEmpty(a.Outcome, "no recorded end")))
		if a.DurationMS > 0 {
			fmt.Fprintf(h.w, ` after %s`, ui.Duration(time.Duration(a.DurationMS)*time.Millisecond))
		}
		fmt.Fprintf(h.w, `, %s, %s in / %s out, %s`, ui.Cost(a.CostUSD), ui.Tokens(a.Tokens.Input), ui.Tokens(a.Tokens.Output), ui.Plural(a.ToolCalls, "tool call"))
		if a.CLIVersion != "" {
			fmt.Fprintf(h.w, `, claude %s`, ui.HTMLText(a.CLIVersion))
		}
		if lost := lostWords(a); lost != "" {
			fmt.Fprintf(h.w, `, %s`, ui.HTMLText(lost))
		}
		if a.Outcome != attempt.Success.String() {
			h.pre(a.Reason, 0)
		}
	case KindNote:
		fmt.Fprintf(h.w, `<span class="note">note: %s</span>`, ui.HTMLText(it.Text))
	default:
		fmt.Fprintf(h.w, `<span class="what">malarun</span> %s`, ui.HTMLText(decision(it)))
	}
	h.w.WriteString("</div>\n")
	return nil
}

// pre writes text as a preformatted block, folded into <details> when it
// has more than fold lines (0: never).
func (h *htmlRenderer) pre(text string, fold int) {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return
	}
	n := strings.Count(text, "\n") + 1
	if fold > 0 && n > fold {
		fmt.Fprintf(h.w, `<details><summary>%d lines</summary><pre>%s</pre></details>`, n, ui.HTMLText(text))
		return
	}
	fmt.Fprintf(h.w, `<pre>%s</pre>`, ui.HTMLText(text))
}

func (h *htmlRenderer) End(s Summary) error {
	h.w.WriteString("</section>\n<section id=\"picture\">\n")
	outcome := firstNonEmpty(ui.EndWord(s.Outcome), "no recorded end")
	fmt.Fprintf(h.w, `<h1>malarun show %s, run %s</h1>`+"\n", ui.HTMLText(h.header.Issue), ui.HTMLText(h.header.RunID))
	fmt.Fprintf(h.w, `<p class="facts"><b>%s</b>`, ui.HTMLText(outcome))
	if s.ExitCode != nil {
		fmt.Fprintf(h.w, ` (exit %d)`, *s.ExitCode)
	}
	fmt.Fprintf(h.w, ` · %s · %s`, ui.Plural(len(s.Attempts), "attempt"), ui.Cost(s.CostUSD))
	if !s.Started.IsZero() && !s.Ended.IsZero() {
		fmt.Fprintf(h.w, ` · %s`, ui.Duration(s.Ended.Sub(s.Started)))
	}
	fmt.Fprintf(h.w, ` · %s · %s in, %s out, %s cache read</p>`+"\n", ui.Plural(s.ToolCalls, "tool call"),
		ui.Tokens(s.Tokens.Input), ui.Tokens(s.Tokens.Output), ui.Tokens(s.Tokens.CacheRead))
	if s.Reason != "" {
		fmt.Fprintf(h.w, "<pre>%s</pre>\n", ui.HTMLText(s.Reason))
	}
	h.picture.draw(h.w)
	fmt.Fprintf(h.w, "</section>\n</main>\n<script>%s</script>\n</body></html>\n", pageJS)
	return h.w.Flush()
}
