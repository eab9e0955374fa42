package main

import (
	"fmt"
	"io"
	"time"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/transcript"

	"github.com/malarun/malarun/internal/supervisor"
	"github.com/malarun/malarun/internal/ui"
)

// resultSource is where the result text on stdout and in the --json
// report comes from. The supervisor keeps at most stream.MaxResultBytes of
// it; a longer text is copied from the attempt's transcript as it is
// written, so that no answer is cut and no size costs memory
// (docs/design.md §D16).
type resultSource struct {
	// text streams the whole text; nil when rep.Result is all of it.
	text *transcript.Result
	// truncated: the text was longer than the supervisor kept and the
	// transcript could not be read again, so only the kept part is
	// written. The report says so (result_truncated), and so does stderr.
	truncated bool
	copied    int64 // bytes copied from the transcript
}

// openResult finds the text of a successful run's result. A transcript
// that cannot be read again (removed, cut short, changed) leaves the kept
// part: said in the error log and on stderr, never only in a log.
func (o *runOutput) openResult(rep event.Report) *resultSource {
	if !rep.ResultCut {
		return &resultSource{}
	}
	t, err := transcript.ReadResult(rep.ResultLine, rep.Result)
	if err != nil {
		o.log.Error().Err(err).Str("transcript", rep.ResultLine.Path).Int("kept_bytes", len(rep.Result)).
			Msg("the result text is cut: its transcript could not be read again")
		fmt.Fprintf(o.d.stderr, "malarun: the result is cut to its first %d bytes: the rest could not be read again from its transcript: %v\n",
			len(rep.Result), err)
		return &resultSource{truncated: true}
	}
	return &resultSource{text: t}
}

// writerTo is what the writers take: the transcript's copy, or the kept text.
func (s *resultSource) writerTo(kept string) io.WriterTo {
	if s.text == nil {
		return stringWriterTo(kept)
	}
	return s
}

// WriteTo copies the text from the transcript, counting it.
func (s *resultSource) WriteTo(w io.Writer) (int64, error) {
	n, err := s.text.WriteTo(w)
	s.copied += n
	return n, err
}

// closeResult releases the transcript and, after a copy, logs its size and
// malarun's peak memory: the copy must not raise it (e2e/memory_test.go
// reads it here, after the whole text went out).
func (o *runOutput) closeResult(s *resultSource, started time.Time) {
	if s.text == nil {
		return
	}
	s.text.Close()
	o.log.Info().Int64("bytes", s.copied).Stringer("took", time.Since(started).Round(time.Millisecond)).
		Int64("peak_rss_kb", supervisor.PeakRSSKB()).Msg("result copied from the transcript")
}

// stringWriterTo is a text held in memory, as the writers take it.
type stringWriterTo string

func (s stringWriterTo) WriteTo(w io.Writer) (int64, error) {
	n, err := io.WriteString(w, string(s))
	return int64(n), err
}

// writeText writes the result text and a newline on stdout through a
// chain of writers, the text's source at the top and stdout at the bottom:
// each layer wraps the one below it, and they are closed top down, so a
// layer that holds bytes back hands them on before the layers below
// close. Under GitHub Actions (stdout not a file) the bottom layer is a
// stop-commands section, whose header and footer are malarun's own; a
// layer that rewrites the model's text goes above it.
func (o *runOutput) writeText(text io.WriterTo) error {
	c := &writerChain{w: o.d.stdout}
	if o.d.actions != nil && !isRegularFile(o.d.stdout) {
		// The runner reads stdout: the model's text must not run workflow commands.
		s, err := ui.StartStopSection(c.w)
		if err != nil {
			return err
		}
		c.push(s, s.Close)
	}
	if isTerminal(o.d.stdout) {
		// A person reads it there: the model's text must not drive the
		// terminal. A file or a pipe gets it byte for byte.
		iw := ui.NewInertWriter(c.w)
		c.push(iw, iw.Close)
	}
	_, err := text.WriteTo(c)
	if err == nil {
		_, err = io.WriteString(c, "\n")
	}
	if cerr := c.close(); err == nil {
		err = cerr
	}
	return err
}

// writerChain is a writer with the layers pushed on top of it.
type writerChain struct {
	w       io.Writer // the top layer
	closers []func() error
}

// push puts w on top; close, if not nil, ends it.
func (c *writerChain) push(w io.Writer, close func() error) {
	c.w = w
	if close != nil {
		c.closers = append(c.closers, close)
	}
}

func (c *writerChain) Write(p []byte) (int, error) { return c.w.Write(p) }

// close closes the layers from the top down; the first error is returned.
func (c *writerChain) close() error {
	var first error
	for i := len(c.closers) - 1; i >= 0; i-- {
		if err := c.closers[i](); err != nil && first == nil {
			first = err
		}
	}
	return first
}
