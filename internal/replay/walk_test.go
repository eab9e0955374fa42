package replay

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/timeline"
)

const transcripts = "../../testdata/transcripts/"

// recorder is a Renderer that keeps what it is told.
type recorder struct {
	header Header
	items  []Item
	sum    Summary
	ended  bool
	// onItem, when set, is called after each item (a follow test's handshake).
	onItem func(Item)
}

func (r *recorder) Begin(h Header) error { r.header = h; return nil }
func (r *recorder) Item(it *Item) error {
	r.items = append(r.items, *it)
	if r.onItem != nil {
		r.onItem(*it)
	}
	return nil
}
func (r *recorder) End(s Summary) error { r.sum, r.ended = s, true; return nil }

func (r *recorder) kinds() string {
	var ks []string
	for _, it := range r.items {
		ks = append(ks, fmt.Sprintf("%d:%s", it.Attempt, it.Kind))
	}
	return strings.Join(ks, " ")
}

// runFolder is a run folder written by hand: transcripts copied from
// testdata, and a timeline as malarun writes it.
type runFolder struct {
	t   *testing.T
	dir string
	t0  time.Time
	tl  *os.File
}

func newRunFolder(t *testing.T) *runFolder {
	dir := filepath.Join(t.TempDir(), "runs", "20261122T120401Z-3f9a1c")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, timeline.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	rf := &runFolder{t: t, dir: dir, t0: time.Date(2026, 11, 22, 12, 4, 1, 0, time.UTC), tl: f}
	rf.write("prompt.md", "Fix the bug.\nIt is in main.go.\n")
	return rf
}

func (rf *runFolder) write(name, text string) {
	if err := os.WriteFile(filepath.Join(rf.dir, name), []byte(text), 0o600); err != nil {
		rf.t.Fatal(err)
	}
}

func (rf *runFolder) copyTranscript(n int, from string) {
	b, err := os.ReadFile(transcripts + from)
	if err != nil {
		rf.t.Fatal(err)
	}
	rf.write(fmt.Sprintf("attempt-%d.jsonl", n), string(b))
}

// entry appends a timeline entry at t0 plus sec seconds.
func (rf *runFolder) entry(sec float64, e timeline.Entry) {
	e.Time, e.Issue = rf.t0.Add(time.Duration(sec*float64(time.Second))), "issue-1"
	b, _ := json.Marshal(e)
	if _, err := rf.tl.Write(append(b, '\n')); err != nil {
		rf.t.Fatal(err)
	}
}

// lineTimes appends a line entry for each whole message of attempt n's
// transcript (stream_event lines get none, as in malarun), one second apart
// from sec; it returns the time after the last.
func (rf *runFolder) lineTimes(n int, sec float64) float64 {
	f, err := os.Open(filepath.Join(rf.dir, fmt.Sprintf("attempt-%d.jsonl", n)))
	if err != nil {
		rf.t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var off int64
	for sc.Scan() {
		var l struct{ Type string }
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Type != "stream_event" {
			o := off
			rf.entry(sec, timeline.Entry{Event: timeline.EventLine, Attempt: n, Offset: &o})
			sec++
		}
		off += int64(len(sc.Bytes())) + 1
	}
	return sec
}

func code(n int) *int { return &n }

// hangThenResume writes a run whose first attempt hung after init and
// whose second resumed the session and ran a tool to success.
func hangThenResume(t *testing.T) *runFolder {
	rf := newRunFolder(t)
	rf.copyTranscript(1, "hang-after-init.jsonl")
	rf.copyTranscript(2, "tool-use-success.jsonl")
	rf.write("attempt-2.prompt.md", "Continue on issue issue-1.\n")
	rf.entry(0, timeline.Entry{Event: "run_started", RunDir: rf.dir})
	rf.entry(0, timeline.Entry{Event: "attempt_started", Attempt: 1, Session: "s1", Pid: 100, Purpose: "work"})
	rf.lineTimes(1, 1)
	rf.entry(301, timeline.Entry{Event: "hang_detected", Attempt: 1, LimitMS: 300000, Reason: "no output for 5m0s"})
	rf.entry(301, timeline.Entry{Event: "kill_sent", Attempt: 1, Pid: 100, Reason: "hang", GraceMS: 10000})
	rf.entry(302, timeline.Entry{Event: "tree_gone", Attempt: 1, Termed: 2, TookMS: 900})
	rf.entry(302, timeline.Entry{Event: "attempt_ended", Attempt: 1, Outcome: "hang", Reason: "no output for 5m0s (idle_timeout)", ExitCode: code(-1)})
	rf.entry(302, timeline.Entry{Event: "retry_decided", Attempt: 1, Action: "resume", BackoffMS: 5000})
	rf.entry(307, timeline.Entry{Event: "attempt_started", Attempt: 2, Session: "s1", Pid: 200, Resume: true, Purpose: "work"})
	end := rf.lineTimes(2, 308)
	rf.entry(309, timeline.Entry{Event: "tool_started", Attempt: 2, Tool: "Bash"})
	rf.entry(end, timeline.Entry{Event: "attempt_ended", Attempt: 2, Outcome: "success", ExitCode: code(0)})
	rf.entry(end, timeline.Entry{Event: "retry_decided", Attempt: 2, Action: "done"})
	cost := 0.02
	rf.entry(end, timeline.Entry{Event: "finished", Outcome: "success", ExitCode: code(0), CostUSD: &cost})
	return rf
}

func TestTellMergesDecisionsAndLinesInTimeOrder(t *testing.T) {
	rf := hangThenResume(t)
	var r recorder
	sum, err := Tell(Source{Issue: "issue-1", RunDir: rf.dir, Status: "succeeded"}, &r)
	if err != nil {
		t.Fatal(err)
	}
	want := "0:run_started 1:attempt_started 1:prompt 1:hang_detected 1:kill_sent 1:tree_gone 1:attempt_ended 1:retry_decided " +
		"2:attempt_started 2:prompt 2:tool_call 2:tool_result 2:text 2:result 2:attempt_ended 2:retry_decided 0:finished"
	if got := r.kinds(); got != want {
		t.Fatalf("story:\n got %s\nwant %s", got, want)
	}
	if !r.header.Timed || r.header.RunID != "20261122T120401Z-3f9a1c" || !r.ended {
		t.Errorf("header %+v, ended %v", r.header, r.ended)
	}
	byKind := map[event.Kind]Item{}
	for i, it := range r.items {
		if it.Seq != i+1 {
			t.Errorf("item %d has seq %d", i+1, it.Seq)
		}
		if it.Time.IsZero() {
			t.Errorf("%s has no time", it.Kind)
		}
		byKind[it.Kind] = it
	}
	call, res := byKind[KindToolCall], byKind[KindToolResult]
	if call.Tool != "Bash" || call.Summary != "echo hello-from-tool — harness step" || call.Line != 2 {
		t.Errorf("tool call %+v", call)
	}
	// The call's line is read at 309 s, its result's at 310 s.
	if res.Tool != "Bash" || res.TookMS != 1000 || res.Head != "hello-from-tool" || res.Bytes != 15 || res.IsError {
		t.Errorf("tool result %+v", res)
	}
	if h := byKind[event.HangDetected]; h.SilenceMS != 300000 || !h.Time.Equal(rf.t0.Add(301*time.Second)) {
		t.Errorf("hang %+v", h)
	}
	if p := r.items[9]; p.Path != "attempt-2.prompt.md" || p.Text != "Continue on issue issue-1." {
		t.Errorf("second prompt %+v", p)
	}
	if len(sum.Attempts) != 2 {
		t.Fatalf("attempts %+v", sum.Attempts)
	}
	a1, a2 := sum.Attempts[0], sum.Attempts[1]
	if a1.Began != BeganNew || a1.Outcome != "hang" || a1.DurationMS != 302000 || a1.Lines != 1 || a1.CLIVersion != "2.1.197" {
		t.Errorf("attempt 1 %+v", a1)
	}
	if a2.Began != BeganResume || a2.Outcome != "success" || a2.ToolCalls != 1 || a2.ToolResults != 1 || a2.Results != 1 || a2.Prompt != "attempt-2.prompt.md" {
		t.Errorf("attempt 2 %+v", a2)
	}
	if sum.Outcome != "success" || *sum.ExitCode != 0 || sum.ToolCalls != 1 || sum.Results != 1 || sum.Items != len(r.items) {
		t.Errorf("summary %+v", sum)
	}
}

func TestTellOneAttempt(t *testing.T) {
	rf := hangThenResume(t)
	var r recorder
	if _, err := Tell(Source{Issue: "issue-1", RunDir: rf.dir, Attempt: 2}, &r); err != nil {
		t.Fatal(err)
	}
	want := "2:attempt_started 2:prompt 2:tool_call 2:tool_result 2:text 2:result 2:attempt_ended 2:retry_decided"
	if got := r.kinds(); got != want {
		t.Errorf("story:\n got %s\nwant %s", got, want)
	}
}

// A run folder without a timeline (recorded before malarun kept one) is
// told from its transcripts alone, without times, and says so.
func TestTellWithoutTimeline(t *testing.T) {
	rf := hangThenResume(t)
	os.Remove(filepath.Join(rf.dir, timeline.FileName))
	var r recorder
	sum, err := Tell(Source{Issue: "issue-1", RunDir: rf.dir}, &r)
	if err != nil {
		t.Fatal(err)
	}
	want := "1:attempt_started 1:prompt 1:attempt_ended 2:attempt_started 2:prompt 2:tool_call 2:tool_result 2:text 2:result 2:attempt_ended"
	if got := r.kinds(); got != want || r.header.Timed {
		t.Errorf("story (timed %v):\n got %s\nwant %s", r.header.Timed, got, want)
	}
	for _, it := range r.items {
		if !it.Time.IsZero() {
			t.Errorf("%s has a time", it.Kind)
		}
	}
	if sum.Attempts[0].Began != BeganNew || sum.Attempts[1].Began != BeganUnknown || sum.Attempts[1].Outcome != "result success" {
		t.Errorf("attempts %+v", sum.Attempts)
	}
	if _, err := Tell(Source{Issue: "issue-1", RunDir: rf.dir, Follow: func() (string, error) { return "", nil }}, &recorder{}); err == nil {
		t.Error("a run without a timeline was followed")
	}
}

// What a tidied or damaged run folder lacks is said, and the rest told.
func TestTellDamagedRunFolder(t *testing.T) {
	rf := hangThenResume(t)
	os.Remove(filepath.Join(rf.dir, "attempt-2.jsonl"))
	rf.tl.WriteString("not json\n" + `{"time":"2026-11-22T12:04:01Z","event":"line","issue":"i","attempt":0,"offset":5}` + "\n")
	rf.copyTranscript(3, "text-success.jsonl") // in no timeline entry
	var r recorder
	sum, err := Tell(Source{Issue: "issue-1", RunDir: rf.dir}, &r)
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, it := range r.items {
		if it.Kind == KindNote {
			notes = append(notes, it.Text)
		}
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "transcript of attempt 2 is gone") || !strings.Contains(notes[1], "attempt 3 is not in the timeline") {
		t.Errorf("notes %q", notes)
	}
	if sum.DamagedTimeline != 2 || len(sum.Attempts) != 3 || sum.Attempts[2].Results != 1 {
		t.Errorf("summary %+v", sum)
	}
}

// --follow: the story is told as the timeline grows, and ends when Follow
// says the run ended, with what was written before that.
func TestTellFollowsAGrowingRun(t *testing.T) {
	rf := newRunFolder(t)
	rf.copyTranscript(1, "tool-use-success.jsonl")
	rf.entry(0, timeline.Entry{Event: "run_started"})
	rf.entry(0, timeline.Entry{Event: "attempt_started", Attempt: 1, Session: "s1", Pid: 100})
	// Follow is called on Tell's goroutine: it hands the story so far to
	// the test, then grows the run.
	polls := make(chan string)
	steps := []func(){
		func() { rf.lineTimes(1, 1) },
		func() {
			rf.entry(9, timeline.Entry{Event: "attempt_ended", Attempt: 1, Outcome: "success", ExitCode: code(0)})
		},
	}
	var r recorder
	follow := func() (string, error) {
		polls <- r.kinds()
		if len(steps) == 0 {
			rf.entry(10, timeline.Entry{Event: "finished", Outcome: "success", ExitCode: code(0)})
			return "the run ended: succeeded", nil
		}
		steps[0]()
		steps = steps[1:]
		return "", nil
	}
	done := make(chan error)
	go func() {
		_, err := Tell(Source{Issue: "issue-1", RunDir: rf.dir, Follow: follow}, &r)
		done <- err
	}()
	var seen []string
	for range 3 {
		seen = append(seen, <-polls) // Tell caught up: it waits for more
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := []string{
		"0:run_started 1:attempt_started 1:prompt",
		"0:run_started 1:attempt_started 1:prompt 1:tool_call 1:tool_result 1:text 1:result",
		"0:run_started 1:attempt_started 1:prompt 1:tool_call 1:tool_result 1:text 1:result 1:attempt_ended",
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Errorf("after poll %d:\n got %s\nwant %s", i+1, seen[i], want[i])
		}
	}
	if got := r.kinds(); !strings.HasSuffix(got, "1:attempt_ended 0:finished") || r.sum.Stopped != "the run ended: succeeded" || !r.header.Following {
		t.Errorf("end: %s, stopped %q", got, r.sum.Stopped)
	}
}

// An attempt's requests never answered and its lost results (its
// attempt_ended entry) are told at its end, in each form.
func TestTellSaysWhatWasLost(t *testing.T) {
	rf := newRunFolder(t)
	rf.copyTranscript(1, "text-success.jsonl")
	rf.entry(0, timeline.Entry{Event: "attempt_started", Attempt: 1, Session: "s1", Pid: 100, Purpose: "work"})
	rf.entry(1, timeline.Entry{Event: "api_retry", Attempt: 1, Reason: "no response from the API within 3m0s (retry 1 of 1)",
		NoResponse: &timeline.NoResponse{Retries: 1, WaitedMS: 180000}})
	end := rf.lineTimes(1, 182)
	rf.entry(end, timeline.Entry{Event: "attempt_ended", Attempt: 1, Outcome: "success", ExitCode: code(0),
		NoResponse: &timeline.NoResponse{Retries: 1, WaitedMS: 180000, MS: 182000}, ResultsLost: 1})
	var r recorder
	sum, err := Tell(Source{Issue: "issue-1", RunDir: rf.dir}, &r)
	if err != nil {
		t.Fatal(err)
	}
	a := sum.Attempts[0]
	if a.NoResponse == nil || a.NoResponse.MS != 182000 || a.ResultsLost != 1 {
		t.Fatalf("attempt %+v", a)
	}
	if got, want := lostWords(&a), "1 request never answered (3m2s lost) · 1 result line lost"; got != want {
		t.Errorf("words %q, want %q", got, want)
	}
	for format, renderer := range map[string]func(io.Writer) Renderer{
		"text":     func(w io.Writer) Renderer { return NewText(w, TextOptions{}) },
		"markdown": NewMarkdown, "html": NewHTML,
	} {
		var b strings.Builder
		if _, err := Tell(Source{Issue: "issue-1", RunDir: rf.dir}, renderer(&b)); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "1 request never answered") || !strings.Contains(b.String(), "no response from the API within 3m0s") {
			t.Errorf("%s form lacks what was lost:\n%s", format, b.String())
		}
	}
}
