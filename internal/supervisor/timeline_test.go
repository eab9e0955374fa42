package supervisor_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/malarun/malarun/internal/event"

	"github.com/malarun/malarun/internal/testing/testchild"
	"github.com/malarun/malarun/internal/timeline"
)

// The run folder's timeline holds every decision the observer saw, in the
// same order and with the same times, and a receive time for each whole
// message of each attempt, at the offset where its line begins.
func TestTimelineRecordsDecisionsAndLineTimes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := retrying(t, testchild.ResumeAware, testchild.EnvLines+"=2",
			testchild.EnvTranscript+"="+transcriptFile(t, testchild.InitLine, testchild.ToolLine))
		h.cfg.ToolTimeout = 300 * time.Millisecond
		var observed []string
		h.observer = func(e event.Event) {
			if e.Kind != event.Progress {
				observed = append(observed, e.Time.UTC().Format(time.RFC3339Nano)+" "+string(e.Kind))
			}
		}
		rep, err, _ := h.run()
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(rep.RunDir, timeline.FileName)
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("timeline: %v, %v", fi, err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var decisions []string
		lines := map[int][]int64{} // attempt → offsets
		rd := timeline.NewReader(f)
		for {
			e, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.Issue != "issue-1" {
				t.Errorf("entry of issue %q", e.Issue)
			}
			if e.Event == timeline.EventLine {
				lines[e.Attempt] = append(lines[e.Attempt], *e.Offset)
				continue
			}
			decisions = append(decisions, e.Time.Format(time.RFC3339Nano)+" "+e.Event)
		}
		if rd.Damaged != 0 {
			t.Errorf("%d damaged lines", rd.Damaged)
		}
		if got, want := strings.Join(decisions, "\n"), strings.Join(observed, "\n"); got != want {
			t.Errorf("timeline decisions:\n%s\nobserved:\n%s", got, want)
		}
		// Each attempt's whole messages, and only those, have a time.
		for n := 1; n <= 2; n++ {
			want := messageOffsets(t, filepath.Join(rep.RunDir, fmt.Sprintf("attempt-%d.jsonl", n)))
			if got := lines[n]; len(want) == 0 || !slices.Equal(got, want) {
				t.Errorf("attempt %d: line times at %v, want the messages' offsets %v", n, got, want)
			}
		}
	})
}

// messageOffsets are where the transcript's lines begin, stream_event lines left out.
func messageOffsets(t *testing.T, path string) []int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	var off int64
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var l struct{ Type string }
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Type != "stream_event" && len(bytes.TrimSpace(sc.Bytes())) > 0 {
			offs = append(offs, off)
		}
		off += int64(len(sc.Bytes())) + 1
	}
	return offs
}
