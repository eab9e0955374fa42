// Package ctxpressure measures how full the conversation's context window
// is and turns an agent's checkpoint reply into the text that seeds the
// next session. Occupancy comes from the usage of the last top-level
// assistant message (input + cache creation + cache read + output tokens),
// never from a result line's usage, which is cumulative over the session
// (docs/design.md §F5). It does no I/O.
package ctxpressure

import (
	"regexp"
	"strings"

	"github.com/malarun/malarun/internal/stream"
)

// DefaultWindow is the context window assumed when nothing tells otherwise.
const DefaultWindow = 200_000

// Window sources, for the log.
const (
	SourceConfig = "config context_limit"
	SourceResult = "result modelUsage.contextWindow"
	SourceModel  = "init model name"
	SourceAssume = "default"
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
		// Within [1, stream.MaxContextWindow]: Over multiplies it by the
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
		// stands. Each kept count is within [0, stream.MaxTokens], so the
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
		return m.configLimit, SourceConfig
	case m.resultWindow > 0:
		return m.resultWindow, SourceResult
	case strings.HasSuffix(m.initModel, "[1m]"):
		return 1_000_000, SourceModel
	}
	return DefaultWindow, SourceAssume
}

var (
	fenceRe      = regexp.MustCompile("(?m)^[ \t]*```[A-Za-z0-9_-]*[ \t]*$\n?")
	checkpointRe = regexp.MustCompile(`(?s)<checkpoint>(.*?)</checkpoint>`)
)

// ExtractCheckpoint returns the checkpoint in an agent's reply: code fence
// lines (```xml, ```markdown, ```) removed, then what lies between
// <checkpoint> tags, or the whole reply when there are none. An agent
// asked for a block does not always comply; a summary without tags still
// carries the work forward.
func ExtractCheckpoint(reply string) string {
	text := fenceRe.ReplaceAllString(reply, "")
	if m := checkpointRe.FindStringSubmatch(text); m != nil {
		return strings.TrimSpace(m[1])
	}
	return strings.TrimSpace(text)
}
