// Package ctxpressure measures how full the conversation's context window
// is and turns an agent's checkpoint reply into the text that seeds the
// next session. Occupancy comes from the usage of the last top-level
// assistant message (input + cache creation + cache read + output tokens),
// never from a result line's usage, which is cumulative over the session
// (docs/design.md §F5). It does no I/O.
package ctxpressure

import (
	"strings"

	"github.com/malarun/malarun/internal/stream"
)

// defaultWindow is the context window assumed when nothing tells otherwise.
const defaultWindow = 200_000

// Window sources, for the log.
const (
	sourceConfig = "config context_limit"
	sourceResult = "result modelUsage.contextWindow"
	sourceModel  = "init model name"
	sourceAssume = "default"
)

// Monitor follows one session's stream.
type Monitor struct {
	configLimit int64   // context_limit; 0 = from the model
	threshold   float64 // fraction of the window that triggers a checkpoint

	resultWindow int64  // a result line's contextWindow, once seen (any session of the run)
	initModel    string // the init line's model

	occupancy    int64 // tokens, from the last top-level assistant message
	measured     bool  // occupancy is current (false before the first message and after a compaction)
	sawAssistant bool
	missingUsage bool // a top-level assistant message came without usage
}

// New returns a Monitor; configLimit 0 means "from the model".
func New(configLimit int64, threshold float64) *Monitor {
	return &Monitor{configLimit: configLimit, threshold: threshold}
}

// Observation is what one line changed.
type Observation struct {
	// Crossed: occupancy is at or above the threshold.
	Crossed bool
	// MissingUsage: the first top-level assistant message without usage.
	MissingUsage bool
	// Compacted: the CLI compacted the conversation; occupancy is unknown
	// until the next assistant message.
	Compacted bool
}

// Observe folds one event in.
func (m *Monitor) Observe(ev stream.Event) Observation {
	var o Observation
	switch {
	case ev.Type == "system" && ev.Subtype == "init":
		m.initModel = ev.Model
	case ev.Type == "system" && ev.Subtype == "compact_boundary":
		m.measured = false
		o.Compacted = true
	case ev.Type == "result" && ev.ContextWindow > 0:
		// Within [1, stream.maxContextWindow]: Over multiplies it by the
		// threshold as a float64, far from any overflow.
		m.resultWindow = ev.ContextWindow
	case ev.Type == "assistant" && ev.ParentToolUseID == "" && ev.Model != "<synthetic>":
		m.sawAssistant = true
		if !ev.HasUsage {
			if !m.missingUsage {
				m.missingUsage = true
				o.MissingUsage = true
			}
			return o
		}
		// A count the decoder rejected (negative, absurd) reads as 0, so
		// the sum would understate the context: the last good measurement
		// stands. Each kept count is within [0, stream.maxTokens], so the
		// sum of four cannot overflow.
		if !ev.UsageRejected() {
			m.occupancy = ev.Usage.Occupancy()
			m.measured = true
		}
	}
	o.Crossed = m.Over()
	return o
}

// NewSession forgets the occupancy of the previous session; the window
// learned from the model is kept.
func (m *Monitor) NewSession() {
	m.occupancy, m.measured, m.sawAssistant = 0, false, false
}

// Over reports whether the last measured occupancy is at or above the threshold.
func (m *Monitor) Over() bool {
	if !m.measured || m.threshold <= 0 {
		return false
	}
	w, _ := m.Window()
	return float64(m.occupancy) >= m.threshold*float64(w)
}

// Occupancy is the last measured occupancy in tokens (0 when unknown).
func (m *Monitor) Occupancy() int64 {
	if !m.measured {
		return 0
	}
	return m.occupancy
}

// Window is the context window in tokens and where that number came from.
func (m *Monitor) Window() (int64, string) {
	switch {
	case m.configLimit > 0:
		return m.configLimit, sourceConfig
	case m.resultWindow > 0:
		return m.resultWindow, sourceResult
	case strings.HasSuffix(m.initModel, "[1m]"):
		return 1_000_000, sourceModel
	}
	return defaultWindow, sourceAssume
}

// ExtractCheckpoint returns the checkpoint in an agent's reply: code fence
// lines (```xml, ```markdown, ```) removed, then what lies between the
// first <checkpoint> tag and the next </checkpoint>, or the whole reply
// when there are none. An agent asked for a block does not always comply;
// a summary without tags still carries the work forward. (Plain string
// code, not regular expressions: compiled when the package loads, they
// cost every malarun's start for a reply few runs ever have.)
func ExtractCheckpoint(reply string) string {
	text := withoutFences(reply)
	const open, end = "<checkpoint>", "</checkpoint>"
	if i := strings.Index(text, open); i >= 0 {
		if j := strings.Index(text[i+len(open):], end); j >= 0 {
			return strings.TrimSpace(text[i+len(open) : i+len(open)+j])
		}
	}
	return strings.TrimSpace(text)
}

// withoutFences drops the lines of text that open or close a code fence:
// blanks, three backticks, a language name of letters, digits, '_' or
// '-', blanks, and the line's newline with it.
func withoutFences(text string) string {
	if !strings.Contains(text, "```") {
		return text
	}
	var b strings.Builder
	for line := range strings.SplitAfterSeq(text, "\n") {
		if !isFence(strings.TrimSuffix(line, "\n")) {
			b.WriteString(line)
		}
	}
	return b.String()
}

func isFence(line string) bool {
	rest, ok := strings.CutPrefix(strings.TrimLeft(line, " \t"), "```")
	if !ok {
		return false
	}
	rest = strings.TrimLeftFunc(rest, func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
	})
	return strings.TrimRight(rest, " \t") == ""
}
