package replay

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/ui"
)

// mdLongLines is where an output folds into <details>.
const mdLongLines = 5

// mdRenderer writes the story as GitHub-flavoured Markdown, for a pull
// request comment or $GITHUB_STEP_SUMMARY. Text from outside is hostile
// there too: every multi-line text goes in a fenced block longer than any
// run of backticks in it, and every one-line text in a code span, so no
// HTML, link, @mention, #reference or emphasis in it is ever rendered.
type mdRenderer struct {
	w *bufio.Writer
	// following: a run going on is told; every item is written at once.
	following bool
}

// NewMarkdown writes the story as Markdown to w.
func NewMarkdown(w io.Writer) Renderer { return &mdRenderer{w: bufio.NewWriter(w)} }

func (m *mdRenderer) Begin(h Header) error {
	m.following = h.Following
	fmt.Fprintf(m.w, "### malarun show %s, run %s\n\n", ui.MarkdownCode(h.Issue), ui.MarkdownCode(h.RunID))
	if h.Status != "" {
		fmt.Fprintf(m.w, "Status: %s. ", ui.MarkdownCode(h.Status))
	}
	if !h.Timed {
		m.w.WriteString("_No times: this run was recorded before malarun kept a timeline, so only its transcripts are shown._")
	}
	m.w.WriteString("\n\n")
	return m.flushIf(h.Following)
}

func (m *mdRenderer) Item(it *Item) error {
	at := ""
	if !it.Time.IsZero() {
		at = it.Time.UTC().Format("15:04:05") + " "
	}
	switch it.Kind {
	case event.AttemptStarted:
		a := it.Info
		fmt.Fprintf(m.w, "\n#### Attempt %d: %s", it.Attempt, beganText(a.Began))
		if a.Session != "" {
			fmt.Fprintf(m.w, ", session %s", ui.MarkdownCode(ui.ShortSession(a.Session)))
		}
		m.w.WriteString("\n\n")
	case event.AttemptEnded:
		fmt.Fprintf(m.w, "- %s**attempt %d ended: %s**", at, it.Attempt, ui.MarkdownCode(firstNonEmpty(it.Info.Outcome, "no recorded end")))
		if it.Info.DurationMS > 0 {
			fmt.Fprintf(m.w, " after %s", ui.Duration(time.Duration(it.Info.DurationMS)*time.Millisecond))
		}
		fmt.Fprintf(m.w, ", %s, %s", ui.Cost(it.Info.CostUSD), ui.Plural(it.Info.ToolCalls, "tool call"))
		if lost := lostWords(it.Info); lost != "" {
			fmt.Fprintf(m.w, ", %s", lost)
		}
		m.w.WriteString("\n")
		if it.Info.Reason != "" && it.Info.Outcome != attempt.Success.String() {
			m.block("  ", "", it.Info.Reason)
		}
	case KindPrompt:
		fmt.Fprintf(m.w, "- %sprompt %s (%s)\n", at, ui.MarkdownCode(it.Path), bytesText(it.Bytes))
		m.block("  ", "", it.Text)
	case KindText:
		fmt.Fprintf(m.w, "- %sassistant\n", at)
		m.block("  ", "", it.Text)
	case KindToolCall:
		gist := firstNonEmpty(it.Summary, it.Input)
		fmt.Fprintf(m.w, "- %s%s %s\n", at, ui.MarkdownCode(it.Tool), ui.MarkdownCode(gist))
	case KindHook:
		fmt.Fprintf(m.w, "- %shook %s: %s\n", at, ui.MarkdownCode(it.Hook), hookGist(it))
	case KindToolRunning:
		fmt.Fprintf(m.w, "- %s⏳ %s still running, %s: %s\n", at, ui.MarkdownCode(it.Tool), ui.Duration(time.Duration(it.TookMS)*time.Millisecond), ui.MarkdownCode(it.Summary))
	case KindToolResult:
		status := "ok"
		if it.IsError {
			status = "**error**"
		}
		head := fmt.Sprintf("%s%s, %s", at, status, bytesText(it.Bytes))
		if it.TookMS > 0 {
			head += ", " + ui.Duration(time.Duration(it.TookMS)*time.Millisecond)
		}
		out := it.Head
		if it.Tail != "" {
			out += "\n…\n" + it.Tail
		}
		fmt.Fprintf(m.w, "  - %s\n", head)
		if out != "" {
			m.block("    ", "output", out)
		}
	case KindResult:
		state := "result"
		if it.IsError || it.Subtype != "success" {
			state = "**error result** " + ui.MarkdownCode(it.Subtype)
		}
		fmt.Fprintf(m.w, "- %s%s, %s\n", at, state, ui.Cost(it.CostUSD))
		m.block("  ", "", it.Text)
	case KindNote:
		fmt.Fprintf(m.w, "- %s_note:_ %s\n", at, ui.MarkdownCode(it.Text))
	default:
		fmt.Fprintf(m.w, "- %s**malarun** %s\n", at, ui.MarkdownCode(decision(it)))
	}
	return m.flushIf(m.following)
}

func (m *mdRenderer) End(s Summary) error {
	mark, word := "✅", "succeeded"
	if s.Outcome != string(outcome.Success) {
		mark, word = "❌", ui.MarkdownCode(firstNonEmpty(ui.EndWord(s.Outcome), "no recorded end"))
	}
	fmt.Fprintf(m.w, "\n%s **%s**", mark, word)
	if s.ExitCode != nil {
		fmt.Fprintf(m.w, " (exit %d)", *s.ExitCode)
	}
	fmt.Fprintf(m.w, ": %s, %s, %s, %s\n\n", ui.Plural(len(s.Attempts), "attempt"), ui.Cost(s.CostUSD), ui.Plural(s.ToolCalls, "tool call"), ui.Plural(s.Results, "result"))
	m.w.WriteString("| attempt | began | session | took | ended | cost |\n| ---: | --- | --- | ---: | --- | ---: |\n")
	for _, a := range s.Attempts {
		fmt.Fprintf(m.w, "| %d | %s | %s | %s | %s | %s |\n", a.N, beganText(a.Began), ui.MarkdownCodeCell(ui.ShortSession(a.Session)),
			ui.Duration(time.Duration(a.DurationMS)*time.Millisecond), ui.MarkdownCodeCell(firstNonEmpty(a.Outcome, "no recorded end")), ui.Cost(a.CostUSD))
	}
	if s.Stopped != "" {
		fmt.Fprintf(m.w, "\nStopped following: %s\n", ui.MarkdownCode(s.Stopped))
	}
	return m.w.Flush()
}

func (m *mdRenderer) flushIf(now bool) error {
	if now {
		return m.w.Flush()
	}
	return nil
}

// block writes text as a fenced block indented by indent, folded into
// <details> (its summary the given word) when it is long.
func (m *mdRenderer) block(indent, fold, text string) {
	text = strings.TrimRight(ui.Inert(text), "\n")
	if text == "" {
		return
	}
	lines := strings.Count(text, "\n") + 1
	long := lines > mdLongLines
	if long {
		fmt.Fprintf(m.w, "\n%s<details><summary>%s, %d lines</summary>\n\n", indent, firstNonEmpty(fold, "text"), lines)
	}
	m.w.WriteString(ui.MarkdownBlock(text, indent))
	if long {
		m.w.WriteString(indent + "</details>\n\n")
	}
}
