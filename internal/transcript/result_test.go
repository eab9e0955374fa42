package transcript

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/malarun/malarun/internal/stream"
)

// resultLine writes a transcript whose second line is a result of at least
// size bytes of JSON (escapes among them), decodes it as the supervisor
// does, and returns the line's place, the text the decoder kept and the
// whole text.
func resultLine(t *testing.T, size int) (ref stream.LineRef, kept, whole string) {
	t.Helper()
	const period = `a result's text, caf\u00e9 and \"quotes\" `
	line := `{"type":"result","subtype":"success","result":"` + strings.Repeat(period, size/len(period)+1) + `"}`
	var v struct{ Result string }
	if err := json.Unmarshal([]byte(line), &v); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "attempt-1.jsonl")
	if err := os.WriteFile(path, []byte(`{"type":"system"}`+"\n"+line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := stream.NewDecoder(f)
	for {
		ev, err := d.Next()
		if err == io.EOF {
			t.Fatal("no result line")
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == "result" {
			return stream.LineRef{Path: path, Offset: ev.Offset, Bytes: ev.Bytes}, ev.Result, v.Result
		}
	}
}

// The whole text of a result longer than the decoder keeps is copied from
// the file, and Close closes it.
func TestReadResultCopiesFromTheFile(t *testing.T) {
	ref, kept, whole := resultLine(t, stream.MaxResultBytes*5/4)
	if len(kept) >= len(whole) {
		t.Fatalf("the decoder kept all %d bytes: the test needs a longer text", len(whole))
	}
	r, err := ReadResult(ref, kept)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if _, err := r.WriteTo(&b); err != nil || b.String() != whole {
		t.Errorf("copied %d bytes (%v), want %d", b.Len(), err, len(whole))
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.f.Close(); err == nil {
		t.Error("the transcript was still open after Close")
	}
}

// A transcript that is gone, or a link or a FIFO in its place, is refused
// before anything is copied (and a FIFO without a writer never blocks).
func TestReadResultRefusesWhatIsNoTranscript(t *testing.T) {
	for _, c := range []struct {
		name  string
		plant func(path string) error
	}{
		{"removed", os.Remove},
		{"a link", func(path string) error {
			target := path + ".target"
			if err := os.Rename(path, target); err != nil {
				return err
			}
			return os.Symlink(target, path)
		}},
		{"a FIFO", func(path string) error {
			if err := os.Remove(path); err != nil {
				return err
			}
			return syscall.Mkfifo(path, 0o600)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ref, kept, _ := resultLine(t, 64)
			if err := c.plant(ref.Path); err != nil {
				t.Fatal(err)
			}
			if r, err := ReadResult(ref, kept); err == nil {
				r.Close()
				t.Fatal("ReadResult accepted it")
			}
		})
	}
}
