package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/malarun/malarun/internal/testing/testchild"
	"github.com/malarun/malarun/internal/timeline"
	"github.com/malarun/malarun/internal/ui"
)

// Without a terminal: no status line, no event lines, no control
// characters at all; the result text alone on stdout; JSON logs.
func TestNoTerminalNoEscapes(t *testing.T) {
	t.Parallel()
	for name, sc := range map[string]func(*testing.T) scenario{"success": scenarioSuccess, "hang resumed": scenarioHangResumed} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := sc(t).proc(t, "issue-plain")
			if code := p.run(); code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
			}
			if got := p.stdout.String(); got != "All done.\n" {
				t.Errorf("stdout = %q, want the result text only", got)
			}
			stderr := p.stderr.String()
			if i := strings.IndexFunc(stderr, func(r rune) bool { return r < 0x20 && r != '\n' || r == 0x7f }); i >= 0 {
				t.Errorf("control character %q in stderr at %d:\n%s", stderr[i], i, stderr)
			}
			for line := range strings.Lines(stderr) {
				if !json.Valid([]byte(line)) {
					t.Errorf("stderr line is not a JSON log: %q", line)
				}
			}
			if !strings.Contains(stderr, `"message":"run succeeded"`) {
				t.Errorf("stderr lacks the info logs:\n%s", stderr)
			}
			// With no event lines, the warning of a hang stays, naming the
			// event that also reports it (a terminal leaves it out:
			// TestAHangIsPrintedOnceOnATerminal).
			hang := regexp.MustCompile(`"level":"warn".*"also_event":"hang_detected".*"message":"hang detected: no output within the limit"`)
			if got, want := len(hang.FindAllString(stderr, -1)), map[string]int{"success": 0, "hang resumed": 1}[name]; got != want {
				t.Errorf("%d warnings of a hang, want %d:\n%s", got, want, stderr)
			}
		})
	}
}

// --quiet: only errors.
func TestQuiet(t *testing.T) {
	t.Parallel()
	p := scenarioFailure(t).proc(t, "issue-quiet", "--quiet")
	if code := p.run(); code != 3 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
	for line := range strings.Lines(p.stderr.String()) {
		if !strings.Contains(line, `"level":"error"`) && !strings.HasPrefix(line, "malarun: retries exhausted") {
			t.Errorf("with --quiet, stderr has %q", line)
		}
	}
}

func readEvents(t *testing.T, s string) []timeline.Entry {
	t.Helper()
	var events []timeline.Entry
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		var e timeline.Entry
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("events line %q: %v", sc.Text(), err)
		}
		events = append(events, e)
	}
	return events
}

func TestEventsFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "events.jsonl")
	p := scenarioHangResumed(t).proc(t, "issue-events", "--events", path)
	if code := p.run(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("events file mode %v, want 0600", st.Mode().Perm())
	}
	var kinds []string
	for _, e := range readEvents(t, string(b)) {
		kinds = append(kinds, e.Event)
		if e.Issue != "issue-events" || e.Time.IsZero() {
			t.Errorf("event %+v", e)
		}
	}
	want := []string{"run_started", "attempt_started", "tool_started", "hang_detected", "kill_sent", "tree_gone",
		"attempt_ended", "retry_decided", "attempt_started", "attempt_ended", "retry_decided", "finished"}
	if !slices.Equal(kinds, want) {
		t.Errorf("events\n%q\nwant\n%q", kinds, want)
	}
	last := readEvents(t, string(b))[len(kinds)-1]
	if last.Outcome != "success" || last.ExitCode == nil || *last.ExitCode != 0 {
		t.Errorf("finished: %+v", last)
	}
}

// --events - writes the lines to stderr, among the logs.
func TestEventsToStderr(t *testing.T) {
	t.Parallel()
	p := scenarioSuccess(t).proc(t, "issue-events", "--events", "-", "--log-level", "error")
	if code := p.run(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
	events := readEvents(t, p.stderr.String())
	if len(events) == 0 || events[0].Event != "run_started" || events[len(events)-1].Event != "finished" {
		t.Errorf("stderr:\n%s", p.stderr.String())
	}
}

// workflowCommands is what a GitHub Actions runner would run from a
// stream: lines that start with "::" once trimmed, and the legacy
// "##[command]" anywhere in a line, except between ::stop-commands::TOKEN
// and ::TOKEN::. Every name counts (the runner only runs those it knows:
// this is stricter).
func workflowCommands(out string) []string {
	var cmds []string
	stop := ""
	for line := range strings.Lines(out) {
		line = strings.TrimRight(line, "\r\n")
		name, data, ok := "", "", false
		if s := strings.TrimLeftFunc(line, func(r rune) bool { return r == ' ' || r == '\t' || r == '\u00a0' }); strings.HasPrefix(s, "::") {
			if end := strings.Index(s[2:], "::"); end >= 0 {
				info := s[2 : 2+end]
				name, _, _ = strings.Cut(info, " ")
				data, ok = s[2+end+2:], true
			}
		}
		if i := strings.Index(line, "##["); !ok && i >= 0 {
			if end := strings.Index(line[i:], "]"); end >= 0 {
				name, _, _ = strings.Cut(line[i+3:i+end], " ")
				ok = true
			}
		}
		switch {
		case !ok:
		case stop != "":
			if strings.EqualFold(name, stop) {
				stop = ""
			}
		case name == "stop-commands":
			stop = data
		default:
			cmds = append(cmds, line)
		}
	}
	return cmds
}

const injection = "Done.\n::set-output name=x::y\n::error::boom\n  ::warning::indented\nsee ##[error]legacy"

// injectingResult is a transcript whose result text tries to run workflow
// commands; isError makes it an error result, which the reason quotes.
func injectingResult(t *testing.T, isError bool) string {
	res, _ := json.Marshal(map[string]any{"type": "result", "subtype": "success", "is_error": isError, "result": injection,
		"session_id": testchild.SessionID, "total_cost_usd": 0.01})
	return writeTranscript(t, testchild.InitLine, testchild.TextLine, string(res))
}

func githubEnv(t *testing.T, summary string) []string {
	return []string{"GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY=" + summary}
}

func TestGitHubActionsSuccess(t *testing.T) {
	t.Parallel()
	summary := filepath.Join(t.TempDir(), "summary.md")
	p := newProc(t, "issue-gh", testchild.Replay, append(githubEnv(t, summary), testchild.EnvTranscript+"="+injectingResult(t, false)))
	if code := p.run(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
	stdout, stderr := p.stdout.String(), p.stderr.String()
	// The result is all there, but inert.
	if !strings.Contains(stdout, injection) || !strings.HasPrefix(stdout, "::stop-commands::") {
		t.Errorf("stdout:\n%s", stdout)
	}
	if cmds := workflowCommands(stdout); len(cmds) != 0 {
		t.Errorf("stdout would run workflow commands %q:\n%s", cmds, stdout)
	}
	if cmds := workflowCommands(stderr); !slices.Equal(cmds, []string{"::group::issue-gh: attempt 1, session " + sessionOf(t, p), "::endgroup::"}) {
		t.Errorf("stderr runs %q:\n%s", cmds, stderr)
	}
	b, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### ✅ malarun `issue-gh` succeeded (exit 0)", "| attempts | 1 (1 session, 0 context restarts) |",
		"| cost | $0.0100 |", "| transcripts | `" + p.stateDir, "| 1 | `"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("summary lacks %q:\n%s", want, b)
		}
	}
}

// sessionOf is the short session of the run's first attempt, from its record.
func sessionOf(t *testing.T, p *proc) string {
	b, err := os.ReadFile(filepath.Join(p.stateDir, p.issue, "record.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Sessions []string `json:"sessions"`
	}
	json.Unmarshal(b, &rec)
	if len(rec.Sessions) == 0 {
		t.Fatalf("no session in the record: %s", b)
	}
	return ui.ShortSession(rec.Sessions[0])
}

func TestGitHubActionsFailure(t *testing.T) {
	t.Parallel()
	t.Run("error result quoting the model", func(t *testing.T) {
		t.Parallel()
		summary := filepath.Join(t.TempDir(), "summary.md")
		p := newProc(t, "issue-gh", testchild.Replay, append(githubEnv(t, summary), testchild.EnvTranscript+"="+injectingResult(t, true)), "--json")
		if code := p.run(); code != 1 {
			t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
		}
		stdout, stderr := p.stdout.String(), p.stderr.String()
		cmds := workflowCommands(stderr)
		if len(cmds) != 3 || cmds[0] != "::group::issue-gh: attempt 1, session "+sessionOf(t, p) || cmds[1] != "::endgroup::" ||
			!strings.HasPrefix(cmds[2], "::error title=malarun%3A issue-gh failed (exit 1)::claude finished with an error") ||
			!strings.Contains(cmds[2], "::set-output name=x::y ::error::boom") {
			t.Errorf("stderr runs %q:\n%s", cmds, stderr)
		}
		if !strings.Contains(stderr, "\nmalarun: claude finished with an error: error result: Done. ::set-output name=x::y ::error::boom") {
			t.Errorf("the error line is not printed whole:\n%s", stderr)
		}
		if cmds := workflowCommands(stdout); len(cmds) != 0 {
			t.Errorf("the JSON report would run %q:\n%s", cmds, stdout)
		}
		r := checkReport(t, stdout)
		if !strings.Contains(r.Reason, "##[error]legacy") || r.Outcome != "error_result" {
			t.Errorf("report reason %q, outcome %q", r.Reason, r.Outcome)
		}
		if b, _ := json.MarshalIndent(r, "", "  "); stdout != strings.ReplaceAll(string(b)+"\n", "##[", `##\u005b`) {
			t.Errorf("stdout is not the indented report, defused:\n%s\nwant\n%s", stdout, b)
		}
		b, _ := os.ReadFile(summary)
		if !strings.Contains(string(b), "### ❌ malarun `issue-gh` failed: error_result (exit 1)") || !strings.Contains(string(b), "```text\n") {
			t.Errorf("summary:\n%s", b)
		}
	})
	t.Run("hang", func(t *testing.T) {
		t.Parallel()
		summary := filepath.Join(t.TempDir(), "summary.md")
		sc := scenarioFailure(t)
		p := newProc(t, "issue-gh", sc.behaviour, append(githubEnv(t, summary), sc.env...), sc.args...)
		if code := p.run(); code != 3 {
			t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
		}
		cmds := workflowCommands(p.stderr.String())
		if len(cmds) != 3 || cmds[2] != "::error title=malarun%3A issue-gh failed (exit 3)::retries exhausted: 1 attempts, the most max_attempts allows; last: no output for 1s while waiting for the API's reply (idle_timeout); the process tree was killed" {
			t.Errorf("stderr runs %q", cmds)
		}
		if p.stdout.Len() != 0 {
			t.Errorf("stdout: %q", p.stdout.String())
		}
	})
}
