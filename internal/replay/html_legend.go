package replay

import (
	"html/template"
	"strings"
)

// legendEntry says what one kind of shape on the time line means; class
// is the shape's own (show.css colours the swatch as the shape). Its words
// are malarun's own, written as HTML.
type legendEntry struct {
	class string
	words template.HTML
}

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

// legendView is a line of the legend: a swatch the colour of the shapes
// it names, and its words.
type legendView struct {
	Swatch string
	Words  template.HTML
}

// legend is what the time line shows: each kind of shape drawn (only
// those).
func (p *picture) legend() []legendView {
	drawn := map[string]bool{"lane": true}
	for _, s := range p.shapes() {
		drawn[s.class] = true
	}
	var out []legendView
	for _, e := range legendEntries() {
		if drawn[e.class] {
			out = append(out, legendView{"sw-" + strings.ReplaceAll(e.class, " ", "-"), e.words})
		}
	}
	return out
}
