package main

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// event is one line of go test -json (cmd/test2json), the fields this
// tool reads. Build events (Go 1.24) name their package in ImportPath.
type event struct {
	Time       time.Time
	Action     string
	Package    string
	ImportPath string
	Test       string
	Elapsed    float64
	Output     string
}

// Bounds on what is kept of a test's output while it runs: its last lines,
// enough to show a failure and to read a skip's reason.
const (
	keepLines     = 200
	keepLineBytes = 1000
)

// skip is a skipped test and why, as its t.Skip said.
type skip struct {
	Package string `json:"package"`
	Test    string `json:"test"`
	Reason  string `json:"reason"`
}

// test is a test that runs.
type test struct {
	started time.Time
	paused  bool     // a parallel test waiting for its turn (-parallel)
	output  []string // its own lines, the last keepLines
}

// pkg is a package whose tests run.
type pkg struct {
	started                 time.Time
	tests                   map[string]*test // running, by name
	done                    int              // top-level tests ended
	passed, failed, skipped int
	output                  []string // the package's own lines (not a test's), the last keepLines
}

// progress folds go test -json events into the lines a person reads: a
// package's verdict as it ends, a line per top-level test of the packages
// named by each as it ends, a failed test's output, a package's own
// messages (the end-to-end suite names its CLI), and, when nothing was
// printed for a while, what is still running. It keeps the account the
// closing line gives. Pure: the caller feeds it events and the time, and
// prints what it returns.
type progress struct {
	each    *regexp.Regexp // packages whose every top-level test gets a line
	every   time.Duration  // the longest silence before a "still running" line
	started time.Time
	printed time.Time // when a line was last returned
	pkgs    map[string]*pkg
	order   []string // packages in the order they started

	passed, failed int
	skips          []skip
	failedPkgs     []string
}

func newProgress(each *regexp.Regexp, every time.Duration, now time.Time) *progress {
	return &progress{each: each, every: every, started: now, printed: now, pkgs: map[string]*pkg{}}
}

// event folds e in and returns the lines to print.
func (p *progress) event(e event, now time.Time) []string {
	out := p.fold(e)
	if len(out) > 0 {
		p.printed = now
	}
	return out
}

func (p *progress) pkg(name string, at time.Time) *pkg {
	k, ok := p.pkgs[name]
	if !ok {
		k = &pkg{started: at, tests: map[string]*test{}}
		p.pkgs[name] = k
		p.order = append(p.order, name)
	}
	return k
}

func (p *progress) fold(e event) []string {
	switch e.Action {
	case "build-output":
		return []string{strings.TrimRight(e.Output, "\n")}
	case "build-fail", "start", "bench":
		if e.Package != "" {
			p.pkg(e.Package, e.Time)
		}
		return nil
	}
	if e.Package == "" {
		return nil
	}
	k := p.pkg(e.Package, e.Time)
	if e.Test == "" {
		return p.packageEvent(e, k)
	}
	t, ok := k.tests[e.Test]
	switch e.Action {
	case "run":
		k.tests[e.Test] = &test{started: e.Time}
	case "pause", "cont":
		if ok {
			t.paused = e.Action == "pause"
			if !t.paused {
				t.started = e.Time // its time runs from its turn
			}
		}
	case "output":
		if ok {
			t.output = keep(t.output, e.Output)
		}
	case "pass", "fail", "skip":
		delete(k.tests, e.Test)
		return p.testEnded(e, k, t)
	}
	return nil
}

// keep appends a line of output, keeping the last keepLines, each cut to
// keepLineBytes.
func keep(lines []string, line string) []string {
	line = strings.TrimRight(line, "\n")
	if len(line) > keepLineBytes {
		line = line[:keepLineBytes] + "..."
	}
	if len(lines) >= keepLines {
		lines = slices.Delete(lines, 0, len(lines)-keepLines+1)
	}
	return append(lines, line)
}

func (p *progress) testEnded(e event, k *pkg, t *test) []string {
	top := !strings.Contains(e.Test, "/")
	if top {
		k.done++
	}
	var lines []string
	if t == nil {
		t = &test{}
	}
	switch e.Action {
	case "pass":
		p.passed++
		k.passed++
	case "fail":
		p.failed++
		k.failed++
		for _, l := range t.output {
			if !strings.HasPrefix(l, "=== ") {
				lines = append(lines, l)
			}
		}
	case "skip":
		s := skip{Package: e.Package, Test: e.Test, Reason: skipReason(t.output)}
		p.skips = append(p.skips, s)
		k.skipped++
		if top && p.each.MatchString(e.Package) {
			return []string{fmt.Sprintf("    SKIP %s: %s", e.Test, s.Reason)}
		}
	}
	if top && p.each.MatchString(e.Package) {
		verdict := map[string]string{"pass": "PASS", "fail": "FAIL"}[e.Action]
		running, waiting := topRunning(k)
		lines = append(lines, fmt.Sprintf("    %s %s (%s) · %s: %d done, %d running, %d waiting", verdict, e.Test,
			seconds(e.Elapsed), shortPkg(e.Package), k.done, running, waiting))
	}
	return lines
}

// topRunning counts the package's top-level tests that run, and those
// paused until a parallel slot is free.
func topRunning(k *pkg) (running, waiting int) {
	for name, t := range k.tests {
		switch {
		case strings.Contains(name, "/"):
		case t.paused:
			waiting++
		default:
			running++
		}
	}
	return running, waiting
}

// packageEvent is an event of the package itself: its own output, and its
// end, as go test prints it, with its counts.
func (p *progress) packageEvent(e event, k *pkg) []string {
	switch e.Action {
	case "output":
		line := strings.TrimRight(e.Output, "\n")
		if ownLine(line) {
			return []string{line}
		}
		k.output = keep(k.output, line)
	case "pass", "fail", "skip":
		delete(p.pkgs, e.Package)
		p.order = slices.DeleteFunc(p.order, func(s string) bool { return s == e.Package })
		counts := counts(k.passed, k.failed, k.skipped)
		switch {
		case e.Action == "fail":
			p.failedPkgs = append(p.failedPkgs, e.Package)
			var lines []string
			for _, l := range k.output { // FAIL pkg [build failed], a panic outside a test, ...
				if !strings.HasPrefix(l, "FAIL\t") && l != "FAIL" {
					lines = append(lines, l)
				}
			}
			return append(lines, fmt.Sprintf("FAIL\t%s\t%s\t(%s)", e.Package, seconds(e.Elapsed), counts))
		case k.passed+k.failed+k.skipped == 0:
			return []string{fmt.Sprintf("?   \t%s\t[no tests]", e.Package)}
		}
		return []string{fmt.Sprintf("ok  \t%s\t%s\t(%s)", e.Package, seconds(e.Elapsed), counts)}
	}
	return nil
}

// ownLine reports whether a package's line of output is its own message
// (the end-to-end suite naming its CLI, a banner), not go test's frame.
func ownLine(line string) bool {
	switch {
	case line == "", line == "PASS", line == "FAIL", strings.HasPrefix(line, "ok  \t"), strings.HasPrefix(line, "FAIL\t"),
		strings.HasPrefix(line, "?   \t"), strings.HasPrefix(line, "=== "), strings.HasPrefix(line, "--- "),
		strings.HasPrefix(line, "testing: warning: no tests to run"), strings.HasPrefix(line, "coverage: "),
		strings.HasPrefix(line, "panic: "), strings.HasPrefix(line, "goroutine "), strings.HasPrefix(line, "\t"):
		return false
	}
	return !strings.HasPrefix(line, "exit status ")
}

// tick returns the "still running" line when nothing was printed for
// p.every: the top-level tests that run, the longest first.
func (p *progress) tick(now time.Time) []string {
	if now.Sub(p.printed) < p.every || len(p.pkgs) == 0 {
		return nil
	}
	p.printed = now
	var parts []string
	for _, name := range p.order {
		k := p.pkgs[name]
		type running struct {
			name string
			age  time.Duration
		}
		var rs []running
		for tn, t := range k.tests {
			if !strings.Contains(tn, "/") && !t.paused {
				rs = append(rs, running{tn, now.Sub(t.started)})
			}
		}
		slices.SortFunc(rs, func(a, b running) int { return cmp.Compare(b.age, a.age) })
		var names []string
		for i, r := range rs {
			if i == 3 {
				names = append(names, fmt.Sprintf("%d more", len(rs)-3))
				break
			}
			names = append(names, fmt.Sprintf("%s (%s)", r.name, r.age.Truncate(time.Second)))
		}
		if len(names) == 0 {
			names = []string{fmt.Sprintf("building or starting (%s)", now.Sub(k.started).Truncate(time.Second))}
		}
		parts = append(parts, shortPkg(name)+": "+strings.Join(names, ", "))
	}
	return []string{fmt.Sprintf("    ... %s in, still running: %s", now.Sub(p.started).Truncate(time.Second), strings.Join(parts, "; "))}
}

// shortPkg is a package path without the module's prefix.
func shortPkg(path string) string {
	if _, rest, ok := strings.Cut(path, "github.com/malarun/malarun/"); ok {
		return rest
	}
	return path
}

func seconds(s float64) string { return fmt.Sprintf("%.1fs", s) }

func counts(passed, failed, skipped int) string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", passed, failed, skipped)
}
