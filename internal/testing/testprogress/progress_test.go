package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 27, 22, 0, 0, 0, time.UTC)

const e2ePkg = "github.com/malarun/malarun/e2e"
const uiPkg = "github.com/malarun/malarun/internal/ui"

// feed folds events, each a second after the one before, and returns the
// lines printed.
func feed(p *progress, events ...event) []string {
	var out []string
	for i, e := range events {
		e.Time = t0.Add(time.Duration(i) * time.Second)
		out = append(out, p.event(e, e.Time)...)
	}
	return out
}

func out(pkg, test, text string) event {
	return event{Action: "output", Package: pkg, Test: test, Output: text + "\n"}
}

func TestProgressLines(t *testing.T) {
	p := newProgress(regexp.MustCompile(`/e2e$`), time.Minute, t0)
	lines := feed(p,
		event{Action: "start", Package: e2ePkg},
		out(e2ePkg, "", "e2e: against claude 2.1.197 (/x/claude)"),
		event{Action: "run", Package: e2ePkg, Test: "TestA"},
		event{Action: "run", Package: e2ePkg, Test: "TestB"},
		event{Action: "run", Package: e2ePkg, Test: "TestC"},
		event{Action: "pause", Package: e2ePkg, Test: "TestC"},
		event{Action: "run", Package: uiPkg, Test: "TestUnit"},
		out(e2ePkg, "TestA", "=== RUN   TestA"),
		event{Action: "pass", Package: e2ePkg, Test: "TestA", Elapsed: 9.25},
		out(e2ePkg, "TestB", "    cliversion_test.go:136: SKIPPED (version gate): needs claude >= 2.1.330, running 2.1.197"),
		out(e2ePkg, "TestB", "--- SKIP: TestB (0.00s)"),
		event{Action: "skip", Package: e2ePkg, Test: "TestB"},
		event{Action: "pass", Package: uiPkg, Test: "TestUnit", Elapsed: 0.1},
		out(uiPkg, "", "PASS"),
		out(uiPkg, "", "ok  \tgithub.com/malarun/malarun/internal/ui\t0.2s"),
		event{Action: "pass", Package: uiPkg, Elapsed: 0.2},
		event{Action: "cont", Package: e2ePkg, Test: "TestC"},
		out(e2ePkg, "TestC", "=== CONT  TestC"),
		out(e2ePkg, "TestC", "    try_test.go:56: try does not show \"x\""),
		out(e2ePkg, "TestC", "--- FAIL: TestC (3.00s)"),
		event{Action: "fail", Package: e2ePkg, Test: "TestC", Elapsed: 3},
		out(e2ePkg, "", "FAIL"),
		out(e2ePkg, "", "FAIL\tgithub.com/malarun/malarun/e2e\t12.0s"),
		event{Action: "fail", Package: e2ePkg, Elapsed: 12},
	)
	want := []string{
		"e2e: against claude 2.1.197 (/x/claude)",
		"    PASS TestA (9.2s) · e2e: 1 done, 1 running, 1 waiting",
		"    SKIP TestB: (version gate): needs claude >= 2.1.330, running 2.1.197",
		"ok  \tgithub.com/malarun/malarun/internal/ui\t0.2s\t(1 passed, 0 failed, 0 skipped)",
		"    try_test.go:56: try does not show \"x\"",
		"--- FAIL: TestC (3.00s)",
		"    FAIL TestC (3.0s) · e2e: 3 done, 0 running, 0 waiting",
		"FAIL\tgithub.com/malarun/malarun/e2e\t12.0s\t(1 passed, 1 failed, 1 skipped)",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	got := line([]tally{p.tally("", t0.Add(time.Minute))})
	if want := "2 passed, 1 failed, 1 skipped (failing: e2e): e2e.TestB ((version gate): needs claude >= 2.1.330, running 2.1.197); 1m0s in all"; got != want {
		t.Errorf("account:\n%s\nwant:\n%s", got, want)
	}
}

// Nothing printed for `every`: a line names what runs, the longest first;
// a printed line starts the silence again. In fake time: the caller's clock.
func TestTickNamesWhatStillRuns(t *testing.T) {
	p := newProgress(regexp.MustCompile(`/e2e$`), 50*time.Second, t0)
	p.event(event{Action: "start", Package: e2ePkg, Time: t0}, t0)
	p.event(event{Action: "run", Package: e2ePkg, Test: "TestShort", Time: t0.Add(30 * time.Second)}, t0.Add(30*time.Second))
	p.event(event{Action: "run", Package: e2ePkg, Test: "TestLong", Time: t0}, t0)
	p.event(event{Action: "run", Package: e2ePkg, Test: "TestLong/sub", Time: t0}, t0)
	p.event(event{Action: "run", Package: e2ePkg, Test: "TestWaiting", Time: t0}, t0)
	p.event(event{Action: "pause", Package: e2ePkg, Test: "TestWaiting", Time: t0}, t0)
	p.event(event{Action: "start", Package: uiPkg, Time: t0}, t0)
	if got := p.tick(t0.Add(49 * time.Second)); got != nil {
		t.Errorf("a line before 50 s of silence: %q", got)
	}
	got := p.tick(t0.Add(50 * time.Second))
	want := "    ... 50s in, still running: e2e: TestLong (50s), TestShort (20s); internal/ui: building or starting (50s)"
	if len(got) != 1 || got[0] != want {
		t.Errorf("tick: %q\nwant %q", got, want)
	}
	if got := p.tick(t0.Add(60 * time.Second)); got != nil {
		t.Errorf("a second line 10 s after the first: %q", got)
	}
	p.event(event{Action: "pass", Package: e2ePkg, Test: "TestShort", Elapsed: 70}, t0.Add(100*time.Second))
	if got := p.tick(t0.Add(140 * time.Second)); got != nil {
		t.Errorf("a line 40 s after a printed one: %q", got)
	}
}

func TestSkipReason(t *testing.T) {
	bar := strings.Repeat("!", 78)
	for _, c := range []struct {
		output []string
		want   string
	}{
		{[]string{"=== RUN   TestX", "    x_test.go:12: make is not installed", "--- SKIP: TestX (0.00s)"}, "make is not installed"},
		{[]string{"    cliversion_test.go:152: SKIPPED for claude 2.1.197: this test does not use the real CLI"}, "for claude 2.1.197: this test does not use the real CLI"},
		{[]string{"    phases_long_test.go:22: !!! SKIPPING: a long test at malarun's defaults: MALARUN_E2E_LONG=1 !!!"}, "a long test at malarun's defaults: MALARUN_E2E_LONG=1"},
		{[]string{"    twohosts_test.go:117: ", "        " + bar, "        SKIPPING the two-hosts test: unshare failed", "        " + bar, "--- SKIP: TestTwo (0.01s)"}, "the two-hosts test: unshare failed"},
		{[]string{"    a_test.go:3: first", "    a_test.go:9: the last message"}, "the last message"},
		{[]string{"--- SKIP: TestY (0.00s)"}, "no reason given"},
		{[]string{"    a_test.go:3: " + strings.Repeat("é", 300)}, strings.Repeat("é", 200) + "..."},
	} {
		if got := skipReason(c.output); got != c.want {
			t.Errorf("skipReason(%q) = %q, want %q", c.output, got, c.want)
		}
	}
}

// The account of several runs: the skips of one reason named together.
func TestLineGroupsSkipsByReason(t *testing.T) {
	gate := "for claude 2.1.197: this test does not use the real CLI"
	runs := []tally{
		{Label: "claude 2.1.332", Passed: 900, Skips: []skip{{uiPkg, "TestBrowser", "no chromium on PATH"}}, Elapsed: 5 * time.Minute},
		{Label: "claude 2.1.197", Passed: 80, Skips: []skip{{e2ePkg, "TestA", gate}, {e2ePkg, "TestB", gate}}, Elapsed: 2 * time.Minute},
	}
	want := "980 passed, 0 failed, 3 skipped: internal/ui.TestBrowser (no chromium on PATH); e2e.TestA, e2e.TestB (" + gate + "); 7m0s in all"
	if got := line(runs); got != want {
		t.Errorf("line:\n%s\nwant:\n%s", got, want)
	}
}

// The exit status is go test's; lines that are not events pass as they
// came; the tally file gets the run.
func TestRunKeepsTheExitStatus(t *testing.T) {
	tally := filepath.Join(t.TempDir(), "tally")
	script := `printf '%s\n' 'not an event' '{"Action":"run","Package":"p","Test":"TestX"}' '{"Action":"pass","Package":"p","Test":"TestX","Elapsed":1}' '{"Action":"fail","Package":"p","Elapsed":1}'; exit 3`
	var stdout, stderr bytes.Buffer
	code := run([]string{"-label", "unit", "-tally", tally, "--", "sh", "-c", script}, &stdout, &stderr)
	if code != 3 || !strings.Contains(stdout.String(), "not an event\n") || !strings.Contains(stdout.String(), "== unit: 1 passed, 0 failed, 0 skipped (failing: p)") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	if code := run([]string{"-account", tally}, &stdout, &stderr); code != 0 || !strings.HasPrefix(stdout.String(), "tests: 1 passed, 0 failed, 0 skipped (failing: p); ") {
		t.Errorf("account: exit %d, %q", code, stdout.String())
	}
	if code := run([]string{"--", "sh", "-c", "kill -TERM $$"}, &stdout, &stderr); code != 128+15 {
		t.Errorf("a go test killed by SIGTERM: exit %d, want 143", code)
	}
	if _, err := os.Stat(tally); err != nil {
		t.Fatal(err)
	}
}
