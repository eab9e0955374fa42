// Package timelinefile appends to a run folder's timeline.jsonl, the one
// file of the timeline malarun writes (docs/design.md §D20): a Writer that
// never stops a run. What a line holds, and reading one back from any
// reader, is internal/timeline's, which opens no file.
package timelinefile

import (
	"encoding/json"
	"os"

	"github.com/malarun/malarun/internal/statefile"
	"github.com/malarun/malarun/internal/timeline"
)

// Writer appends entries to a run folder's timeline. It never stops a run:
// the first error is kept (Err) and later entries are dropped, as for
// malarun's other outputs (docs/design.md §D15).
type Writer struct {
	path string
	f    *os.File
	err  error
}

// NewWriter appends to path, which is opened at the first entry.
func NewWriter(path string) *Writer { return &Writer{path: path} }

// Append writes e as one JSON line in one write, so that a reader following
// the file (malarun show --follow) sees whole lines.
func (w *Writer) Append(e timeline.Entry) {
	if w == nil || w.err != nil {
		return
	}
	if w.f == nil {
		// O_NONBLOCK and O_NOFOLLOW: a FIFO planted in a run folder must not
		// hold the open (one without a reader fails with ENXIO), nor a link
		// lead the appends elsewhere (issue 32); then only a regular file.
		f, err := statefile.OpenFile(w.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			w.err = err
			return
		}
		w.f = f
	}
	b, err := json.Marshal(e)
	if err == nil {
		_, err = w.f.Write(append(b, '\n'))
	}
	w.err = err
}

// Reopen closes the file, so that the next entry opens the path again: the
// run folder was made again after it was removed.
func (w *Writer) Reopen() {
	if w == nil || w.f == nil {
		return
	}
	w.f.Close()
	w.f = nil
}

// Close closes the file; entries appended later open it again.
func (w *Writer) Close() error {
	if w == nil || w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}

// Err is the first error, after which entries were dropped.
func (w *Writer) Err() error {
	if w == nil {
		return nil
	}
	return w.err
}
