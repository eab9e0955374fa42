package fleet

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/timeline"
)

// BenchmarkSummary1000 sums up a state directory of 1,000 issues (issue
// 41: under a second on 2 cores), each run's timeline as a busy run
// leaves it: 400 line entries (one per line of the CLI) around its
// decisions, 70 KB. One op is the whole summary: the scan, the sums, the
// text form.
func BenchmarkSummary1000(b *testing.B) {
	dir := b.TempDir()
	for i := range 1000 {
		is := nightIssues()[i%3] // successes, one rescued
		is.id = fmt.Sprintf("issue-%04d", i)
		var entries []timeline.Entry
		for k := range 40 {
			entries = append(entries, ev("tool_started", is.started.Add(time.Duration(k)*time.Second), func(e *timeline.Entry) {
				e.Tool, e.ToolInput = "Bash", `{"command":"go test ./...","description":"run the tests"}`
			}))
		}
		is.timeline = append(entries, is.timeline...)
		runDir := writeIssue(b, dir, is)
		addLineEntries(b, filepath.Join(runDir, timeline.FileName), is.id, 360)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		sc, err := Scan(dir, Options{ValidID: validID, Now: nightNow})
		if err != nil || len(sc.Issues) != 1000 {
			b.Fatalf("%d issues, %v", len(sc.Issues), err)
		}
		s := Summarize(dir, sc, time.Time{}, nightNow)
		if err := WriteText(io.Discard, &s); err != nil {
			b.Fatal(err)
		}
	}
}

// addLineEntries appends n line entries to a timeline, as the supervisor
// writes one per line of the CLI.
func addLineEntries(b *testing.B, path, issue string, n int) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	for k := range n {
		fmt.Fprintf(f, `{"time":"2026-11-26T22:%02d:%02d.123456789Z","event":"line","issue":%q,"attempt":1,"offset":%d}`+"\n", k/60%60, k%60, issue, k*900)
	}
}
