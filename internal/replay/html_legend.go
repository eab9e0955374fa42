package replay

import (
	"fmt"
	"io"
	"strings"
)

// legendEntry says what one kind of shape on the time line means; class
// is the shape's own (show.css colours the swatch as the shape).
type legendEntry struct{ class, words string }

// legendEntries are every kind of shape, in the order the legend lists them.
func legendEntries() []legendEntry {
	return []legendEntry{
		{"lane", "an attempt: its claude process, from start to end"},
		{"bar", "a tool call, as long as it ran"},
		{"bar err", "a tool call that failed"},
		{"bar task", "a background task"},
		{"silence", "a hang: claude silent from its last output until malarun stopped it"},
		{"wait", "a wait: the backoff before the next attempt, or a usage limit"},
		{"mark", "malarun's step (checkpoint, context restart) or claude retrying the API"},
		{"mark bad", "the process tree stopped, or an error result"},
		{"mark good", "a result: success"},
	}
}

// legend lists what the time line shows: each kind of shape drawn (only
// those), with a swatch the colour of the shape.
func (p *picture) legend(w io.Writer) {
	drawn := map[string]bool{"lane": true}
	for _, s := range p.shapes() {
		drawn[s.class] = true
	}
	io.WriteString(w, `<ul class="legend" aria-label="what the time line shows">`)
	for _, e := range legendEntries() {
		if drawn[e.class] {
			fmt.Fprintf(w, `<li><span class="sw %s"></span>%s</li>`, "sw-"+strings.ReplaceAll(e.class, " ", "-"), e.words)
		}
	}
	io.WriteString(w, "</ul>\n")
}
