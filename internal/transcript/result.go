package transcript

import (
	"os"

	"github.com/malarun/malarun/internal/statefile"
	"github.com/malarun/malarun/internal/stream"
)

// Result is the whole result string of one line of a transcript, read
// again from the file (docs/design.md §D16): WriteTo copies it, Close
// closes the file.
type Result struct {
	*stream.ResultText
	f *os.File
}

// ReadResult opens the transcript at ref (statefile: no link, FIFO or
// device) and checks that the line there is still the one the decoder saw,
// whose result it kept (stream.NewResultText). A transcript that was
// removed, cut short or changed is an error: the caller has only kept then.
func ReadResult(ref stream.LineRef, kept string) (*Result, error) {
	f, err := statefile.Open(ref.Path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	t, err := stream.NewResultText(f, st.Size(), ref, kept)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Result{ResultText: t, f: f}, nil
}

// Close closes the transcript.
func (r *Result) Close() error { return r.f.Close() }
