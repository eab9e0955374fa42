package fleet

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/replay"
	"github.com/malarun/malarun/internal/statefile"
	"github.com/malarun/malarun/internal/stream"
)

// tailBytes is how much of a running attempt's transcript is read to tell
// what claude is doing: its last messages. A tool call begun before that
// window is not seen (the phase then says what came after it).
const tailBytes = 1 << 20

// latestAttempt is the number of the run folder's latest transcript
// (attempt-N.jsonl): the attempt that runs now. The record's count of
// attempts does not say it (a reclaim or a refused resume skips numbers);
// the supervisor numbers a new attempt after the latest transcript.
// 0: none yet.
func latestAttempt(runDir string) int {
	ns, err := replay.AttemptNumbers(runDir)
	if err != nil || len(ns) == 0 {
		return 0
	}
	return ns[len(ns)-1]
}

// readRunning tells what the running attempt of is is doing: the attempt
// machine (the code that watches it live) fed the transcript's last lines,
// and when claude last wrote (the transcript's modification time).
func readRunning(runDir string, is *Issue, now time.Time) {
	f, err := statefile.Open(filepath.Join(runDir, fmt.Sprintf("attempt-%d.jsonl", is.Running)))
	if err != nil {
		if isNotExist(err) || errors.Is(err, io.EOF) {
			starting(is)
		}
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return
	}
	is.LastLine = st.ModTime()
	r := bufio.NewReader(f)
	if st.Size() > tailBytes {
		// One byte before the window: what is dropped through the first
		// newline is the cut line, or only that newline when the window
		// begins at a line's start.
		if _, err := f.Seek(st.Size()-tailBytes-1, io.SeekStart); err != nil {
			return
		}
		r.Reset(f)
		if _, err := r.ReadBytes('\n'); err != nil {
			return
		}
	}
	m := attempt.New(attempt.Limits{}, now)
	dec := stream.NewDecoder(io.LimitReader(r, tailBytes))
	lines := 0
	for {
		ev, err := dec.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return
			}
			break
		}
		lines++
		m.Step(attempt.Input{Kind: attempt.Line, Event: ev}, now)
	}
	if lines == 0 {
		starting(is)
		return
	}
	d, _, _ := m.Doing()
	is.Phase, is.Doing = cut(d.Phase.String(), wordMax), cut(d.Label(), doingMax)
}

// starting says claude has printed nothing yet (its start takes seconds).
func starting(is *Issue) {
	d := attempt.Doing{Phase: attempt.PhaseStarting}
	is.Phase, is.Doing = d.Phase.String(), d.Label()
}
