package fleet

import (
	"encoding/json"
	"io"
)

// WriteJSON writes the summary as JSON (docs/summary.schema.json). Text
// from records is written as JSON escapes it; a caller writing to a
// terminal wraps w so that nothing in it can drive the terminal
// (ui.InertJSONWriter).
func WriteJSON(w io.Writer, s *Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	out := *s
	// Empty lists are [] (a reader need not test for null).
	for _, l := range []*[]Row{&out.Waiting, &out.Running, &out.Slowest, &out.Costliest, &out.Rows} {
		if *l == nil {
			*l = []Row{}
		}
	}
	if out.Ended == nil {
		out.Ended = []Group{}
	}
	if out.Damaged == nil {
		out.Damaged = []Damaged{}
	}
	if out.Skipped == nil {
		out.Skipped = []string{}
	}
	if out.ByStatus == nil {
		out.ByStatus = []Count{}
	}
	return enc.Encode(out)
}
