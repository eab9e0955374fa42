package replay

import (
	"bufio"
	"encoding/json"
	"io"
	"slices"

	"github.com/malarun/malarun/internal/ui"
	"github.com/malarun/malarun/internal/usd"
)

// jsonRenderer writes the story as one JSON object (docs/show.schema.json):
// {"version", "header", "items": [...], "summary"}, an item per line, as the
// story is told, so a reader of a pipe sees items as they come.
type jsonRenderer struct {
	w      *bufio.Writer
	items  int
	follow bool // flush each item: a follower reads them as they come
}

// NewJSON writes the story to w as JSON. What a terminal would act on is
// written as \u escapes (ui.InertJSON): the same values to a program.
func NewJSON(w io.Writer) Renderer { return &jsonRenderer{w: bufio.NewWriter(w)} }

func (j *jsonRenderer) Begin(h Header) error {
	j.follow = h.Following
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	j.w.WriteString(`{"version":`)
	j.w.Write(json.RawMessage(itoa(version)))
	j.w.WriteString(`,"header":`)
	j.w.Write(ui.InertJSON(b))
	j.w.WriteString(",\n\"items\":[")
	return j.w.Flush()
}

func (j *jsonRenderer) Item(it *Item) error {
	b, err := json.Marshal(roundedCosts(it))
	if err != nil {
		return err
	}
	if j.items > 0 {
		j.w.WriteByte(',')
	}
	j.items++
	j.w.WriteByte('\n')
	j.w.Write(ui.InertJSON(b))
	if j.follow {
		return j.w.Flush()
	}
	return nil // bufio writes a long story in chunks; End flushes and reports
}

func (j *jsonRenderer) End(s Summary) error {
	if s.Attempts == nil {
		s.Attempts = []Attempt{}
	}
	s.CostUSD = usd.Round(s.CostUSD)
	s.Attempts = slices.Clone(s.Attempts)
	for i := range s.Attempts {
		s.Attempts[i].CostUSD = usd.Round(s.Attempts[i].CostUSD)
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	j.w.WriteString("\n],\n\"summary\":")
	j.w.Write(ui.InertJSON(b))
	j.w.WriteString("}\n")
	return j.w.Flush()
}

// roundedCosts is it with its costs as malarun prints them (internal/usd):
// a copy when one changes, so the walk's sums stay exact.
func roundedCosts(it *Item) *Item {
	info := it.Info
	if info != nil && usd.Round(info.CostUSD) != info.CostUSD {
		a := *info
		a.CostUSD = usd.Round(a.CostUSD)
		info = &a
	}
	if info == it.Info && usd.Round(it.CostUSD) == it.CostUSD && usd.Round(it.RunCostUSD) == it.RunCostUSD {
		return it
	}
	printed := *it
	printed.CostUSD, printed.RunCostUSD, printed.Info = usd.Round(it.CostUSD), usd.Round(it.RunCostUSD), info
	return &printed
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
