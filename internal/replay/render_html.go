package replay

import (
	"bufio"
	_ "embed"
	"html/template"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/ui"
)

// The page's own style and script, inline (the page is one file that works
// offline) and allowed by their hashes alone (docs/design.md §D20), and its
// templates.
var (
	//go:embed assets/show.css
	pageCSS string
	//go:embed assets/show.js
	pageJS string
	//go:embed assets/show.tmpl
	pageTemplates string
)

// contentSecurityPolicy allows nothing but the page's own style and script:
// no network, no other script, no inline handler or style attribute.
func contentSecurityPolicy() string {
	return "default-src 'none'; style-src " + ui.CSPSource(pageCSS) + "; script-src " + ui.CSPSource(pageJS) +
		"; img-src 'none'; base-uri 'none'; form-action 'none'"
}

// HTMLPages makes show pages, their templates parsed once: a folder of
// many (malarun summary's) makes each with the same HTMLPages.
type HTMLPages struct{ t *template.Template }

// NewHTMLPages parses the show page's templates.
func NewHTMLPages() *HTMLPages { return &HTMLPages{ui.PageTemplate("show", pageTemplates)} }

// Renderer writes the story as one HTML page to w.
func (p *HTMLPages) Renderer(w io.Writer) Renderer {
	return &htmlRenderer{w: bufio.NewWriter(w), t: p.t}
}

// NewHTML writes the story as one HTML page to w.
func NewHTML(w io.Writer) Renderer { return NewHTMLPages().Renderer(w) }

// htmlRenderer writes one self-contained page (assets/show.tmpl): the
// story as it is told, then the timeline picture, which CSS shows above
// it. Text from outside is made inert and escaped everywhere
// (html/template) and never reaches the style, the script or a URL.
type htmlRenderer struct {
	w       *bufio.Writer
	t       *template.Template
	header  Header
	picture picture
}

func (h *htmlRenderer) Begin(hd Header) error {
	h.header = hd
	h.picture.timed = hd.Timed
	return h.t.ExecuteTemplate(h.w, "begin", ui.Head{CSP: contentSecurityPolicy(),
		Title: ui.Inert("malarun show " + hd.Issue + ", run " + hd.RunID), CSS: template.CSS(pageCSS)})
}

// itemView is an item as its template (named for its kind) shows it:
// its words, sizes and times as text, the item's own text made inert.
type itemView struct {
	// The fields every item's template reads come first: the template
	// finds a field by name, field after field.
	Class string
	Seq   int
	At    string
	Block block
	Agent string // the sub-agent that wrote a text
	Tool  string
	Gist  string // a tool call's input, a hook's, a decision's words, a note
	Size  string
	Took  string
	// Word is what an attempt's heading says of it: how it began or ended.
	Word       string
	Attempt    int
	IsError    bool
	Background bool
	Session    string // short
	Pid        int
	Path       string // a prompt's file
	Hook       string
	Subtype    string
	Failed     bool // a result that is not a success
	Cost       string
	Tokens     string
	Calls      string
	CLIVersion string
	Lost       string
}

// block is text shown preformatted: folded into <details> when it has
// more lines than it may show open.
type block struct {
	Text   string
	Lines  int
	Folded bool
}

// preformatted is text as a block, folded when it has more than fold
// lines (0: never), made inert.
func preformatted(text string, fold int) block {
	text = strings.TrimRight(text, "\n")
	n := strings.Count(text, "\n") + 1
	return block{Text: ui.Inert(text), Lines: n, Folded: fold > 0 && n > fold}
}

func (h *htmlRenderer) Item(it *Item) error {
	h.picture.add(it)
	v := itemView{Seq: it.Seq, Attempt: it.Attempt, Class: "item k-" + string(it.Kind)}
	if ByMalarun(it.Kind) && it.Kind != event.AttemptStarted {
		v.Class += " malarun"
	}
	if !it.Time.IsZero() {
		v.At = it.Time.UTC().Format("15:04:05")
	}
	ms := func(n int64) string { return ui.Duration(time.Duration(n) * time.Millisecond) }
	name := string(it.Kind)
	switch it.Kind {
	case event.AttemptStarted:
		a := it.Info
		v.Word, v.Pid = ui.Inert(beganText(a.Began)), a.Pid
		if a.Session != "" {
			v.Session = ui.Inert(ui.ShortSession(a.Session))
		}
	case KindPrompt:
		v.Path, v.Size, v.Block = ui.Inert(it.Path), bytesText(it.Bytes), preformatted(it.Text, 0)
	case KindText:
		v.Agent, v.Block = ui.Inert(it.Agent), preformatted(it.Text, 0)
	case KindToolCall:
		v.Tool, v.Gist, v.Background = ui.Inert(it.Tool), ui.Inert(firstNonEmpty(it.Summary, it.Input)), it.Background
	case KindToolRunning:
		v.Tool, v.Took = ui.Inert(it.Tool), ms(it.TookMS)
	case KindHook:
		v.Hook, v.Gist, v.IsError = ui.Inert(it.Hook), ui.Inert(hookGist(it)), it.IsError
	case KindToolResult:
		v.Tool, v.Size, v.IsError = ui.Inert(it.Tool), bytesText(it.Bytes), it.IsError
		if it.TookMS > 0 {
			v.Took = ms(it.TookMS)
		}
		out := it.Head
		if it.Tail != "" {
			out += "\n…\n" + it.Tail
		}
		v.Block = preformatted(out, 6)
	case KindResult:
		v.Failed, v.Subtype, v.Cost, v.Block = it.IsError || it.Subtype != "success", ui.Inert(it.Subtype), ui.Cost(it.CostUSD), preformatted(it.Text, 12)
	case event.AttemptEnded:
		a := it.Info
		v.Word = ui.Inert(firstNonEmpty(a.Outcome, "no recorded end"))
		if a.DurationMS > 0 {
			v.Took = ms(a.DurationMS)
		}
		v.Cost, v.Calls = ui.Cost(a.CostUSD), ui.Plural(a.ToolCalls, "tool call")
		v.Tokens = ui.Tokens(a.Tokens.InputTokens) + " in / " + ui.Tokens(a.Tokens.OutputTokens) + " out"
		v.CLIVersion, v.Lost = ui.Inert(a.CLIVersion), ui.Inert(lostWords(a))
		if a.Outcome != attempt.Success.String() {
			v.Block = preformatted(a.Reason, 0)
		}
	case KindNote:
		v.Gist = ui.Inert(it.Text)
	default:
		name, v.Gist = "decision", ui.Inert(decision(it))
	}
	return h.t.ExecuteTemplate(h.w, name, v)
}

// endView is what the page says after the story: the run at a glance
// (its outside text made inert), the picture, and the page's script.
type endView struct {
	Issue, RunID string
	Word         string
	Exit         string
	Attempts     string
	Cost, Took   string
	Calls        string
	Tokens       string
	Reason       string
	Picture      pictureView
	JS           template.JS
}

func (h *htmlRenderer) End(s Summary) error {
	v := endView{Issue: ui.Inert(h.header.Issue), RunID: ui.Inert(h.header.RunID), Word: ui.Inert(firstNonEmpty(ui.EndWord(s.Outcome), "no recorded end")),
		Attempts: ui.Plural(len(s.Attempts), "attempt"), Cost: ui.Cost(s.CostUSD), Calls: ui.Plural(s.ToolCalls, "tool call"),
		Tokens: ui.Tokens(s.Tokens.InputTokens) + " in, " + ui.Tokens(s.Tokens.OutputTokens) + " out, " + ui.Tokens(s.Tokens.CacheReadInputTokens) + " cache read",
		Reason: ui.Inert(s.Reason), Picture: h.picture.view(), JS: template.JS(pageJS)}
	if s.ExitCode != nil {
		v.Exit = strconv.Itoa(*s.ExitCode)
	}
	if !s.Started.IsZero() && !s.Ended.IsZero() {
		v.Took = ui.Duration(s.Ended.Sub(s.Started))
	}
	if err := h.t.ExecuteTemplate(h.w, "end", v); err != nil {
		return err
	}
	return h.w.Flush()
}
