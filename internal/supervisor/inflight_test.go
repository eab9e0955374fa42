package supervisor

import (
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/run"
	"github.com/malarun/malarun/internal/stream"
)

// savesCounted passes saves on to the journal, keeping what each saved.
type savesCounted struct {
	RecordWriter
	saved []record.Record
	bytes []int
}

func (s *savesCounted) Save(r record.Record) error      { return s.keep(r, s.RecordWriter.Save) }
func (s *savesCounted) SaveQuick(r record.Record) error { return s.keep(r, s.RecordWriter.SaveQuick) }

func (s *savesCounted) keep(r record.Record, save func(record.Record) error) error {
	b, err := record.Encode(r)
	if err != nil {
		return err
	}
	s.saved, s.bytes = append(s.saved, r), append(s.bytes, len(b))
	return save(r)
}

// A CLI that opens thousands of tool calls costs a bounded record and a
// number of saves logarithmic in them (issue 47: each line saved the
// whole list): the record names the first record.MaxInFlight calls, in
// call order, and counts the rest; a count that changes alone is saved at
// powers of two, so every record saved during the flood is within a
// factor of two of the calls then open; the next save is exact.
func TestOpenToolCallsCostBoundedSaves(t *testing.T) {
	const n = 3000
	d, done := floodDriver(t)
	defer done()
	saves := &savesCounted{RecordWriter: d.r.rec.records}
	d.r.rec.records = saves
	lines := floodLines(t, n, false)
	for _, ev := range lines {
		d.onLine(ev)
	}
	// The named calls are saved as they open (one save each, the first
	// tool call's included); then the count of the rest and Bash's count
	// of side effects at their powers of two.
	if most := record.MaxInFlight + 2*bits.Len(uint(n)); len(saves.saved) > most {
		t.Errorf("%d open calls made %d saves, want at most %d", n, len(saves.saved), most)
	}
	for i, r := range saves.saved {
		if saves.bytes[i] > 8<<10 {
			t.Errorf("save %d is %d bytes: the record grows with the calls open", i, saves.bytes[i])
		}
		if len(r.Running) > record.MaxInFlight || r.RunningMore > 0 && len(r.Running) != record.MaxInFlight {
			t.Fatalf("save %d names %d calls and counts %d more", i, len(r.Running), r.RunningMore)
		}
		if r.Running != nil && r.Running[0].Input != `{"command":"sleep 600 # call 0"}` {
			t.Fatalf("save %d names %q first, not the oldest call", i, r.Running[0].Input)
		}
	}
	last := saves.saved[len(saves.saved)-1]
	if last.RunningMore < (n-record.MaxInFlight)/2 || last.SideEffects["Bash"] < n/2 {
		t.Errorf("the last save during the flood counts %d more calls and %d Bash calls, want within a factor of two of %d and %d",
			last.RunningMore, last.SideEffects["Bash"], n-record.MaxInFlight, n)
	}
	if err := d.r.rec.save(); err != nil {
		t.Fatal(err)
	}
	r, ok, err := d.r.rec.journal.Load()
	if !ok || err != nil || len(r.Running) != record.MaxInFlight || r.RunningMore != n-record.MaxInFlight || r.SideEffects["Bash"] != n ||
		r.Running[record.MaxInFlight-1].Input != fmt.Sprintf(`{"command":"sleep 600 # call %d"}`, record.MaxInFlight-1) {
		t.Errorf("the next save reads back as %d calls named, %d more, Bash ×%d (%v %v)", len(r.Running), r.RunningMore, r.SideEffects["Bash"], ok, err)
	}
}

func TestWorthASave(t *testing.T) {
	var at []int
	for n := range 70 {
		if worthASave(n) {
			at = append(at, n)
		}
	}
	if fmt.Sprint(at) != "[0 1 2 4 8 16 32 64]" {
		t.Errorf("counts saved at %v", at)
	}
}

// A resume prompt names as many calls and tasks as a record does, the
// first ones, and says about how many more there were: after this
// malarun's own attempt (all of them known) and after a reclaim (the
// record's count).
func TestResumePromptNamesTheFirstCallsInFlight(t *testing.T) {
	calls := func(n int) []stream.ToolUse {
		out := make([]stream.ToolUse, n)
		for i := range out {
			out[i] = stream.ToolUse{Name: "Bash", Input: fmt.Sprintf("call %d", i)}
		}
		return out
	}
	var tasks []stream.Task
	for i := range record.MaxInFlight + 5 {
		tasks = append(tasks, stream.Task{ID: fmt.Sprint("task-", i)})
	}
	for _, c := range []struct {
		name string
		data run.PromptData
		more string
	}{
		{"this malarun's attempt", run.PromptData{Interrupted: calls(20_000), Tasks: tasks}, "and about 19968 more"},
		{"a reclaimed record", run.PromptData{Interrupted: calls(record.MaxInFlight), InterruptedMore: 500, Tasks: tasks[:record.MaxInFlight], TasksMore: 5}, "and about 500 more"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &runFolder{issue: DefaultConfig().IssueID, dir: t.TempDir()}
			a := run.Attempt{N: 2, Prompt: run.Prompt{Template: run.ResumeTemplate, Data: c.data}}
			if err := f.writePrompt(a); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(f.dir, "attempt-2.prompt.md"))
			if err != nil {
				t.Fatal(err)
			}
			text := string(b)
			last := fmt.Sprintf("call %d\n", record.MaxInFlight-1)
			if !strings.Contains(text, "- Bash: call 0\n") || !strings.Contains(text, last) || strings.Contains(text, fmt.Sprintf("call %d\n", record.MaxInFlight)) ||
				!strings.Contains(text, c.more) || !strings.Contains(text, "and about 5 more") || strings.Contains(text, fmt.Sprint("task-", record.MaxInFlight)) {
				t.Errorf("the prompt:\n%s", text)
			}
		})
	}
}
