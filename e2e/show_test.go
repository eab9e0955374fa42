package e2e_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/replay"
	"github.com/malarun/malarun/internal/testing/fakeapi"
	"github.com/malarun/malarun/internal/testing/headless"
	"github.com/malarun/malarun/internal/testing/schemacheck"
)

// showRun is a run that did some work, stalled, was resumed, started a
// background task, waited for it and finished: what malarun show is for.
func showRun(t *testing.T) *env {
	e := newEnvAlone(t, // retryFlags' idle_timeout is 4 s
		fakeapi.Bash("echo step-one"),
		fakeapi.Stall(),
		fakeapi.ToolUse("Bash", map[string]any{
			"command":           "timeout 2 tail -f /dev/null; echo done >> bg.txt",
			"run_in_background": true,
			"description":       "Finish later",
		}),
		fakeapi.Text("Started in the background."),
		fakeapi.Text("Background work done. <script>document.title='pwned'</script>"),
	)
	e.run(retryFlags...).wantCode(t, 0)
	return e
}

// show runs malarun show on the test's issue.
func (e *env) show(args ...string) (string, string, int) {
	e.t.Helper()
	cmd := exec.Command(e2e.malarun, append([]string{"show", "issue-e2e"}, args...)...)
	cmd.Env = e.environ()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// transcriptCounts counts, with encoding/json, what the run folder's
// transcripts hold: tool calls, tool results and results, and attempts.
type transcriptCounts struct{ attempts, toolCalls, toolResults, results int }

func countTranscripts(t *testing.T, runDir string) transcriptCounts {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(runDir, "attempt-*.jsonl"))
	c := transcriptCounts{attempts: len(paths)}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var l struct {
				Type    string
				Message struct {
					Content json.RawMessage
				}
			}
			if json.Unmarshal(sc.Bytes(), &l) != nil {
				continue
			}
			var blocks []struct{ Type string }
			json.Unmarshal(l.Message.Content, &blocks)
			for _, b := range blocks {
				switch {
				case l.Type == "assistant" && b.Type == "tool_use":
					c.toolCalls++
				case l.Type == "user" && b.Type == "tool_result":
					c.toolResults++
				}
			}
			if l.Type == "result" {
				c.results++
			}
		}
		f.Close()
	}
	return c
}

// The run is shown as JSON (valid against its schema), text, Markdown and
// HTML: each with the hang and the resume between the first attempt's
// work and the second's, and the transcripts' counts.
func TestRealCLIShowTellsAStalledResumedRun(t *testing.T) {
	e := showRun(t)
	runDir := e.record().RunDir
	want := countTranscripts(t, runDir)
	if want.attempts != 2 || want.toolCalls < 2 || want.results < 1 {
		t.Fatalf("the run's transcripts: %+v, want 2 attempts, 2 tool calls and a result", want)
	}

	out, stderr, code := e.show("--format", "json")
	if code != 0 {
		t.Fatalf("show --format json: exit %d\n%s", code, stderr)
	}
	schema, err := schemacheck.Load(filepath.Join(e2e.root, "docs", "show.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	errs, err := schemacheck.Check(schema, []byte(out), "show")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, e := range errs {
		t.Errorf("schema: %s", e)
	}
	var story struct {
		Items   []replay.Item
		Summary replay.Summary
	}
	if err := json.Unmarshal([]byte(out), &story); err != nil {
		t.Fatal(err)
	}
	got := transcriptCounts{attempts: len(story.Summary.Attempts)}
	var kinds []string
	for _, it := range story.Items {
		switch it.Kind {
		case replay.KindToolCall:
			got.toolCalls++
		case replay.KindToolResult:
			got.toolResults++
		case replay.KindResult:
			got.results++
		}
		if replay.ByMalarun(it.Kind) && it.Kind != replay.KindPrompt || it.Kind == replay.KindToolCall {
			kinds = append(kinds, string(it.Kind))
		}
		if it.Time.IsZero() && it.Kind != replay.KindNote {
			t.Errorf("item %d (%s) has no time", it.Seq, it.Kind)
		}
	}
	if got != want {
		t.Errorf("show counts %+v, the transcripts %+v", got, want)
	}
	// The first attempt's tool call, then its hang, the kill and the
	// resume, then the second attempt's work.
	order := strings.Join(kinds, " ")
	if !strings.Contains(order, "attempt_started tool_call hang_detected kill_sent tree_gone attempt_ended retry_decided attempt_started tool_call") {
		t.Errorf("story order: %s", order)
	}
	a := story.Summary.Attempts
	if a[0].Outcome != "hang" || a[1].Began != replay.BeganResume || a[1].Outcome != "success" || story.Summary.Outcome != "success" {
		t.Errorf("attempts %+v, outcome %q", a, story.Summary.Outcome)
	}

	// The same story in the other formats: the hang between the first
	// tool call and the second attempt, and the transcripts' counts (each
	// form's own marks of an attempt, a tool call, its result and a result).
	for _, f := range []struct {
		format, hang, second              string
		attempt, call, toolResult, result *regexp.Regexp
	}{
		{"text", "hang", "attempt 2",
			regexp.MustCompile(`(?m)── attempt \d+ · `), regexp.MustCompile(`(?m)⏺ `), regexp.MustCompile(`(?m)  ↳ `), regexp.MustCompile(`(?m)^\S+  result `)},
		{"md", "hang", "ttempt 2",
			regexp.MustCompile(`(?m)^#### Attempt `), regexp.MustCompile("(?m)^- \\d\\d:\\d\\d:\\d\\d `"), regexp.MustCompile(`(?m)^  - \d\d:\d\d:\d\d (ok|\*\*error)`),
			regexp.MustCompile(`(?m)^- \d\d:\d\d:\d\d (result|\*\*error result)`)},
		{"html", "hang", "attempt 2",
			regexp.MustCompile(`class="item k-attempt_started"`), regexp.MustCompile(`class="item k-tool_call"`), regexp.MustCompile(`class="item k-tool_result"`),
			regexp.MustCompile(`class="item k-result"`)},
	} {
		out, stderr, code := e.show("--format", f.format)
		if code != 0 {
			t.Fatalf("show --format %s: exit %d\n%s", f.format, code, stderr)
		}
		first := strings.Index(out, "echo step-one")
		hang := strings.Index(strings.ToLower(out[max(first, 0):]), f.hang)
		second := strings.Index(out[max(first, 0):], f.second)
		if first < 0 || hang < 0 || second < 0 || hang > second {
			t.Errorf("--format %s: step-one at %d, hang at +%d, %q at +%d:\n%s", f.format, first, hang, f.second, second, out)
		}
		n := func(re *regexp.Regexp) int { return len(re.FindAllString(out, -1)) }
		if c := (transcriptCounts{n(f.attempt), n(f.call), n(f.toolResult), n(f.result)}); c != want {
			t.Errorf("--format %s counts %+v, the transcripts %+v", f.format, c, want)
		}
		if f.format == "html" {
			if strings.Contains(out, "<script>document.title") {
				t.Errorf("--format html: the model's <script> is not escaped")
			}
			openShowPage(t, out, want.attempts)
		}
	}
}

// openShowPage opens a show page in a real browser: no console error, no
// request but the file, a lane per attempt, the model's script not run, and
// a click on a bar shows its item. It leaves a screenshot in the tests'
// artifacts, and with MALARUN_SCREENSHOT=FILE a copy there (docs/show.md's
// picture is made so).
func openShowPage(t *testing.T, page string, attempts int) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "show.html")
	if err := os.WriteFile(file, []byte(page), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, p := headless.OpenFor(t, "file://"+file, time.Minute)
	var facts struct {
		Title string
		Lanes int
	}
	if err := p.Eval(ctx, `({title: document.title, lanes: document.querySelectorAll("svg g.lane-group").length})`, &facts); err != nil {
		t.Fatal(err)
	}
	if facts.Lanes != attempts || strings.Contains(facts.Title, "pwned") {
		t.Errorf("the page: %d lanes for %d attempts, title %q", facts.Lanes, attempts, facts.Title)
	}
	if errs := p.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
	if reqs := p.Requests(); len(reqs) != 1 || reqs[0] != "file://"+file {
		t.Errorf("requests %q, want the page's own file only", reqs)
	}
	// In the tests' artifacts (named in the log), for a person to look at.
	shot := headless.SaveScreenshot(ctx, t, p, 1200, 820, "show")
	if dst := os.Getenv("MALARUN_SCREENSHOT"); dst != "" {
		png, err := os.ReadFile(shot)
		if err == nil {
			err = os.WriteFile(dst, png, 0o644)
		}
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
	}
	var seq string
	if err := p.Eval(ctx, `document.querySelector("svg rect.bar[data-seq]").dataset.seq`, &seq); err != nil {
		t.Fatal(err)
	}
	if err := p.Click(ctx, `svg rect.bar[data-seq]`); err != nil {
		t.Fatal(err)
	}
	var selected string
	if err := p.Eval(ctx, `document.querySelector(".item.sel")?.id ?? ""`, &selected); err != nil || selected != "item-"+seq {
		t.Errorf("after a click on the bar of item %s, the story shows %q (%v)", seq, selected, err)
	}
}

// --follow shows a run while it goes on and ends when the run ends.
func TestRealCLIShowFollowsARunningAttempt(t *testing.T) {
	e := newEnvAlone(t, fakeapi.Bash("echo step-one"), fakeapi.Stall(), fakeapi.Text("Resumed and done."))
	started := time.Now()
	cmd, stdout, stderr := e.start(retryFlags...)
	e.waitStall(1) // the first attempt is running, its tool call done

	show := exec.Command(e2e.malarun, "show", "issue-e2e", "--follow", "--format", "json")
	show.Env = e.environ()
	pipe, err := show.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var showErr bytes.Buffer
	show.Stderr = &showErr
	if err := show.Start(); err != nil {
		t.Fatal(err)
	}
	// It shows the running attempt's tool call before the hang.
	lines := bufio.NewScanner(pipe)
	sawCall := false
	var all strings.Builder
	for lines.Scan() {
		all.WriteString(lines.Text() + "\n")
		if strings.Contains(lines.Text(), `"kind":"tool_call"`) {
			sawCall = true
			break
		}
	}
	if !sawCall {
		t.Fatalf("show --follow ended before the tool call:\n%s\n%s", all.String(), showErr.String())
	}
	e.wait(cmd, stdout, stderr, started).wantCode(t, 0)
	done := make(chan error, 1)
	go func() {
		for lines.Scan() { // the scanner holds what it read ahead
			all.WriteString(lines.Text() + "\n")
		}
		done <- show.Wait()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("show --follow: %v\n%s", err, showErr.String())
		}
	case <-time.After(30 * time.Second):
		show.Process.Kill()
		t.Fatalf("show --follow did not end after the run ended:\n%s", all.String())
	}
	var story struct {
		Items   []replay.Item
		Summary replay.Summary
	}
	if err := json.Unmarshal([]byte(all.String()), &story); err != nil {
		t.Fatalf("%v\n%s", err, all.String())
	}
	if len(story.Summary.Attempts) != 2 || story.Summary.Outcome != "success" || !strings.Contains(story.Summary.Stopped, "succeeded") {
		t.Errorf("summary %+v", story.Summary)
	}
	if last := story.Items[len(story.Items)-1]; last.Kind != event.RunFinished {
		t.Errorf("last item %+v, want finished", last)
	}
}
