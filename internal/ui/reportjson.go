package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// resultSlot is where the result goes in the indented report marshalled
// with an empty result: the top-level key (indented once; keys of nested
// objects are indented more) and its empty string. A raw quote in
// encoding/json's output is never inside a string, so it cannot match
// anything else.
const resultSlot = "\n  \"result\": \"\""

// WriteReport writes r as json.MarshalIndent(r, "", "  ") and a newline
// would, but with the result's text streamed from text, so that a result
// of any size costs no memory: the report is marshalled with an empty
// result and the text, escaped as it goes (jsonString), is spliced into
// that slot. A nil text streams r.Result. With defuse (GitHub Actions, see
// github.go) every "##[" is written "##\u005b", which JSON decodes back to
// "##[", in the streamed text as in the rest.
//
// An error from text.WriteTo after it began leaves a report cut short
// (docs/design.md §D16).
func WriteReport(w io.Writer, r Report, text io.WriterTo, defuse bool) error {
	if text == nil {
		text = strings.NewReader(r.Result)
	}
	r.Result = ""
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	i := bytes.Index(b, []byte(resultSlot))
	if i < 0 {
		return errors.New("the report has no result field") // Report lost its json tag
	}
	split := i + len(resultSlot) - 1 // between the string's quotes
	head, tail := string(b[:split]), string(b[split:])+"\n"
	if defuse {
		// Quotes end both parts, so no "##[" straddles a seam.
		head = strings.ReplaceAll(head, "##[", `##\u005b`)
		tail = strings.ReplaceAll(tail, "##[", `##\u005b`)
	}
	if _, err := io.WriteString(w, head); err != nil {
		return err
	}
	s := newJSONString(w, defuse)
	if _, err := text.WriteTo(s); err != nil {
		return err
	}
	if err := s.Close(); err != nil {
		return err
	}
	_, err = io.WriteString(w, tail)
	return err
}
