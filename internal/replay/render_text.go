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

// TextOptions says how the text is shown: the caller knows the terminal.
type TextOptions struct {
	// Width wraps lines to this many columns; 0 does not wrap (a pipe).
	Width int
	// Color adds ANSI colours (a terminal, NO_COLOR unset).
	Color bool
	// Location is the zone times are shown in; nil is UTC.
	Location *time.Location
}

// ANSI colours (SGR), used only with Color.
const (
	sgrReset   = "\x1b[0m"
	sgrBold    = "\x1b[1m"
	sgrDim     = "\x1b[2m"
	sgrRed     = "\x1b[31m"
	sgrGreen   = "\x1b[32m"
	sgrYellow  = "\x1b[33m"
	sgrMagenta = "\x1b[35m"
	sgrCyan    = "\x1b[36m"
)

// timeCols is the width of the time column ("15:04:05  "); items are
// indented under it.
const timeCols = 10

// outputLines is how many of a tool result's first and last lines are shown.
const outputLines = 3

// textRenderer writes the story for people: one block per item, times in
// a column, malarun's decisions marked, everything from outside cleaned
// (ui.Clean, ui.Inert) so it cannot drive the terminal.
type textRenderer struct {
	w     *bufio.Writer
	opt   TextOptions
	day   string // the date last shown: a story that crosses days says so
	timed bool
	// following: a run going on is told; every item is written at once.
	following bool
}

// NewText writes the story as text to w.
func NewText(w io.Writer, opt TextOptions) Renderer {
	if opt.Location == nil {
		opt.Location = time.UTC
	}
	return &textRenderer{w: bufio.NewWriter(w), opt: opt}
}

func (t *textRenderer) paint(sgr, s string) string {
	if !t.opt.Color || s == "" {
		return s
	}
	return sgr + s + sgrReset
}

func (t *textRenderer) Begin(h Header) error {
	t.timed, t.following = h.Timed, h.Following
	head := fmt.Sprintf("malarun show · %s · run %s", ui.Clean(h.Issue, 0), ui.Clean(h.RunID, 0))
	if h.Status != "" {
		head += " · " + ui.Clean(h.Status, 0)
	}
	if h.Attempt != 0 {
		head += fmt.Sprintf(" · attempt %d only", h.Attempt)
	}
	t.wrapped("", t.paint(sgrBold, head))
	t.wrapped("", t.paint(sgrDim, "run folder "+ui.Clean(h.RunDir, 0)))
	if !h.Timed {
		t.wrapped("", t.paint(sgrYellow, "no times: this run was recorded before malarun kept a timeline (timeline.jsonl), so only its transcripts are shown, without malarun's decisions"))
	}
	if h.Following {
		t.wrapped("", t.paint(sgrDim, "following the run until it ends…"))
	}
	return t.flushIf(h.Following)
}

func (t *textRenderer) Item(it *Item) error {
	switch it.Kind {
	case event.AttemptStarted:
		t.attemptHeader(it)
	case event.AttemptEnded:
		t.attemptFooter(it)
	case KindPrompt:
		t.entry(it, t.paint(sgrDim, fmt.Sprintf("prompt (%s, %s)", ui.Clean(it.Path, 0), bytesText(it.Bytes))), it.Text)
	case KindText:
		t.entry(it, t.agentMark(it), it.Text)
	case KindToolCall:
		gist := it.Summary
		if gist == "" {
			gist = it.Input
		}
		what := t.paint(sgrCyan, "⏺ "+ui.Clean(it.Tool, 80))
		if it.Background {
			what += t.paint(sgrDim, " (background)")
		}
		t.entry(it, what+"  "+ui.Clean(gist, 0), "")
	case KindToolResult:
		t.toolResult(it)
	case KindToolRunning:
		t.entry(it, t.paint(sgrDim, "⏳ "+ui.Clean(it.Tool, 80)+" still running · "+ui.Duration(time.Duration(it.TookMS)*time.Millisecond))+"  "+ui.Clean(it.Summary, 0), "")
	case KindHook:
		color := sgrCyan
		if it.IsError {
			color = sgrRed
		}
		t.entry(it, t.paint(color, "⏺ hook "+ui.Clean(it.Hook, 80))+"  "+hookGist(it), "")
	case KindResult:
		head := "result " + ui.Clean(it.Subtype, 40)
		color := sgrGreen
		if it.IsError || it.Subtype != "success" {
			head, color = head+" (error)", sgrRed
		}
		head += " · " + ui.Cost(it.CostUSD)
		t.entry(it, t.paint(color, head), it.Text)
	case KindNote:
		t.entry(it, t.paint(sgrYellow, "note: ")+ui.Clean(it.Text, 0), "")
	default:
		t.entry(it, t.paint(sgrMagenta, "▲ malarun ")+decision(it), "")
	}
	// Followed, every item goes out as it comes: the agent's too (a
	// tool call is what someone watching waits to see).
	return t.flushIf(ByMalarun(it.Kind) || t.following)
}

func (t *textRenderer) End(s Summary) error {
	t.line("")
	out := "story ends"
	switch {
	case s.Outcome == string(outcome.Success):
		out = t.paint(sgrGreen+sgrBold, "succeeded")
	case s.Outcome != "":
		out = t.paint(sgrRed+sgrBold, ui.Clean(ui.EndWord(s.Outcome), 80))
	}
	if s.ExitCode != nil {
		out += fmt.Sprintf(" (exit %d)", *s.ExitCode)
	}
	parts := []string{out, ui.Plural(len(s.Attempts), "attempt"), ui.Cost(s.CostUSD)}
	if !s.Started.IsZero() && !s.Ended.IsZero() {
		parts = append(parts, ui.Duration(s.Ended.Sub(s.Started)))
	}
	parts = append(parts, ui.Plural(s.ToolCalls, "tool call")+", "+ui.Plural(s.Results, "result"),
		fmt.Sprintf("%s in, %s out, %s cache write, %s cache read", ui.Tokens(s.Tokens.InputTokens), ui.Tokens(s.Tokens.OutputTokens),
			ui.Tokens(s.Tokens.CacheCreationInputTokens), ui.Tokens(s.Tokens.CacheReadInputTokens)))
	t.wrapped("", strings.Join(parts, " · "))
	if s.Reason != "" {
		t.wrapped(strings.Repeat(" ", 2), ui.Inert(s.Reason))
	}
	if s.DamagedTimeline > 0 {
		t.line(t.paint(sgrYellow, fmt.Sprintf("%d lines of the timeline were not entries and were skipped", s.DamagedTimeline)))
	}
	if s.Stopped != "" {
		t.line(t.paint(sgrDim, "stopped following: "+ui.Clean(s.Stopped, 0)))
	}
	return t.w.Flush()
}

func (t *textRenderer) flushIf(now bool) error {
	if now {
		return t.w.Flush()
	}
	return nil
}

// agentMark names a sub-agent's message; the main agent's has none.
func (t *textRenderer) agentMark(it *Item) string {
	if it.Agent == "" {
		return ""
	}
	return t.paint(sgrDim, "sub-agent "+ui.Clean(it.Agent, 24))
}

func (t *textRenderer) attemptHeader(it *Item) {
	a := it.Info
	head := fmt.Sprintf("── attempt %d · %s", it.Attempt, beganText(a.Began))
	if a.Session != "" {
		head += " · session " + ui.ShortSession(a.Session)
	}
	if a.Pid != 0 {
		head += fmt.Sprintf(" · pid %d", a.Pid)
	}
	t.line("")
	t.wrapped(t.stamp(it.Time), t.paint(sgrBold, head+" "+strings.Repeat("─", max(3, t.opt.Width-visibleWidth(head)-timeCols-1))))
}

func (t *textRenderer) attemptFooter(it *Item) {
	a := it.Info
	outcome := firstNonEmpty(a.Outcome, "no recorded end")
	color := sgrGreen
	if a.Outcome != attempt.Success.String() {
		color = sgrRed
	}
	parts := []string{fmt.Sprintf("── attempt %d ended: %s", it.Attempt, t.paint(color, ui.Clean(outcome, 60)))}
	if a.DurationMS > 0 {
		parts = append(parts, "after "+ui.Duration(time.Duration(a.DurationMS)*time.Millisecond))
	}
	if a.ExitCode != nil {
		parts = append(parts, fmt.Sprintf("claude exit %d", *a.ExitCode))
	}
	parts = append(parts, ui.Cost(a.CostUSD), fmt.Sprintf("%s in / %s out", ui.Tokens(a.Tokens.InputTokens), ui.Tokens(a.Tokens.OutputTokens)),
		ui.Plural(a.ToolCalls, "tool call"))
	if a.CLIVersion != "" {
		parts = append(parts, "claude "+ui.Clean(a.CLIVersion, 40))
	}
	if lost := lostWords(a); lost != "" {
		parts = append(parts, t.paint(sgrRed, lost))
	}
	t.entry(it, strings.Join(parts, " · "), "")
	if a.Reason != "" && a.Outcome != attempt.Success.String() {
		t.wrapped(strings.Repeat(" ", timeCols+2), ui.Inert(a.Reason))
	}
}

func (t *textRenderer) toolResult(it *Item) {
	status, color := "ok", sgrGreen
	if it.IsError {
		status, color = "error", sgrRed
	}
	head := "  ↳ " + t.paint(color, status) + " · " + bytesText(it.Bytes)
	if it.Images > 0 {
		head += fmt.Sprintf(" · %d images", it.Images)
	}
	if it.TookMS > 0 {
		head += " · " + ui.Duration(time.Duration(it.TookMS)*time.Millisecond)
	}
	t.entry(it, head, "")
	first := strings.Split(strings.TrimRight(ui.Inert(it.Head), "\n"), "\n")
	var last []string
	if it.Tail != "" {
		last = strings.Split(strings.TrimRight(ui.Inert(it.Tail), "\n"), "\n")
	}
	indent := strings.Repeat(" ", timeCols+4)
	shown := first[:min(len(first), outputLines)]
	for _, l := range shown {
		t.wrapped(indent, l)
	}
	switch {
	case it.Tail != "":
		t.line(indent + t.paint(sgrDim, "…"))
		for _, l := range last[max(0, len(last)-outputLines):] {
			t.wrapped(indent, l)
		}
	case len(first) > 2*outputLines:
		t.line(indent + t.paint(sgrDim, fmt.Sprintf("… %d lines …", len(first)-2*outputLines)))
		for _, l := range first[len(first)-outputLines:] {
			t.wrapped(indent, l)
		}
	case len(first) > outputLines:
		for _, l := range first[outputLines:] {
			t.wrapped(indent, l)
		}
	}
}

// entry writes an item: its time, a head line, then body lines indented.
// Without a head, the body's first line goes on the time's line.
func (t *textRenderer) entry(it *Item, head, body string) {
	stamp := t.stamp(it.Time)
	var lines []string
	if body != "" {
		lines = strings.Split(strings.TrimRight(ui.Inert(body), "\n"), "\n")
	}
	if head == "" && len(lines) > 0 {
		head, lines = lines[0], lines[1:]
	}
	t.wrapped(stamp, head)
	for _, l := range lines {
		t.wrapped(strings.Repeat(" ", timeCols+2), l)
	}
}

// stamp is the time column: HH:MM:SS, the date first when it changes.
func (t *textRenderer) stamp(at time.Time) string {
	if at.IsZero() {
		return strings.Repeat(" ", timeCols)
	}
	at = at.In(t.opt.Location)
	if day := at.Format("2006-01-02 MST"); day != t.day {
		t.day = day
		t.line(t.paint(sgrDim, day))
	}
	return t.paint(sgrDim, at.Format("15:04:05")) + "  "
}

// wrapped writes prefix and s, wrapped to the width with later lines
// indented as far as prefix is wide. s is clean, or made so here.
func (t *textRenderer) wrapped(prefix, s string) {
	s = strings.ReplaceAll(s, "\t", "    ")
	if t.opt.Width <= 0 {
		t.line(prefix + s)
		return
	}
	indent := strings.Repeat(" ", visibleWidth(prefix))
	room := max(20, t.opt.Width-visibleWidth(prefix))
	for first := true; ; first = false {
		p := prefix
		if !first {
			p = indent
		}
		if visibleWidth(s) <= room {
			t.line(p + s)
			return
		}
		cut := cutAt(s, room)
		t.line(p + s[:cut])
		s = strings.TrimLeft(s[cut:], " ")
	}
}

func (t *textRenderer) line(s string) {
	t.w.WriteString(s)
	t.w.WriteByte('\n')
}
