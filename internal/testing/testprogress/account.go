package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"
)

// fileLine starts a message a test logged: "    file_test.go:12: ".
func fileLine() *regexp.Regexp { return regexp.MustCompile(`^\s*[\w.-]+\.go:\d+: ?`) }

// skipReason is what a skipped test's last message said, on one line:
// the t.Skip text without its decoration (a frame of '!', SKIPPED or
// SKIPPING before it), at most 200 characters.
func skipReason(output []string) string {
	at := fileLine()
	var msg []string
	for _, l := range output {
		switch {
		case at.MatchString(l):
			msg = []string{at.ReplaceAllString(l, "")}
		case msg != nil && !strings.HasPrefix(l, "--- ") && !strings.HasPrefix(l, "=== "):
			msg = append(msg, l) // a message of more than one line
		}
	}
	var words []string
	for _, l := range msg {
		if l = strings.TrimSpace(strings.Trim(strings.TrimSpace(l), "!")); l != "" {
			words = append(words, l)
		}
	}
	reason := strings.Join(words, " ")
	for _, prefix := range []string{"SKIPPING", "SKIPPED"} {
		if rest, ok := strings.CutPrefix(reason, prefix); ok {
			reason = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), ":"))
		}
	}
	if reason == "" {
		return "no reason given"
	}
	if r := []rune(reason); len(r) > 200 {
		reason = string(r[:200]) + "..."
	}
	return reason
}

// tally is one go test run's account, a line of the tally file.
type tally struct {
	Label   string        `json:"label"`
	Passed  int           `json:"passed"`
	Failed  int           `json:"failed"`
	Skips   []skip        `json:"skips"`
	Elapsed time.Duration `json:"elapsed_ns"`
	Failing []string      `json:"failing_packages,omitempty"`
}

func (p *progress) tally(label string, now time.Time) tally {
	return tally{Label: label, Passed: p.passed, Failed: p.failed, Skips: p.skips, Elapsed: now.Sub(p.started), Failing: p.failedPkgs}
}

// line is the one-line account of runs: how many tests passed, failed and
// were skipped, then each skip named, grouped by its reason (the oldest
// CLI's version gates name the same reason for many tests).
func line(runs []tally) string {
	var passed, failed int
	var elapsed time.Duration
	var skips []skip
	var failing []string
	for _, r := range runs {
		passed, failed, elapsed = passed+r.Passed, failed+r.Failed, elapsed+r.Elapsed
		skips = append(skips, r.Skips...) // a reason says its CLI where it matters
		failing = append(failing, r.Failing...)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d passed, %d failed, %d skipped", passed, failed, len(skips))
	if len(failing) > 0 {
		fmt.Fprintf(&b, " (failing: %s)", strings.Join(shortAll(failing), ", "))
	}
	// Each reason once, its tests in the order they skipped; a test that
	// skipped in more than one run, once, with how many times.
	var reasons []string
	byReason := map[string][]skip{}
	times := map[skip]int{}
	for _, s := range skips {
		if _, ok := byReason[s.Reason]; !ok {
			reasons = append(reasons, s.Reason)
		}
		if times[s]++; times[s] == 1 {
			byReason[s.Reason] = append(byReason[s.Reason], s)
		}
	}
	for i, r := range reasons {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		var names []string
		for _, s := range byReason[r] {
			name := shortPkg(s.Package) + "." + s.Test
			if n := times[s]; n > 1 {
				name += fmt.Sprintf(" (x%d)", n)
			}
			names = append(names, name)
		}
		fmt.Fprintf(&b, "%s (%s)", strings.Join(names, ", "), r)
	}
	fmt.Fprintf(&b, "; %s in all", elapsed.Truncate(time.Second))
	return b.String()
}

func shortAll(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = shortPkg(p)
	}
	return out
}

// appendTally adds a run's account to the tally file.
func appendTally(path string, t tally) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	b, err := json.Marshal(t)
	if err == nil {
		_, err = f.Write(append(b, '\n'))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// readTally reads the runs of a tally file.
func readTally(r io.Reader) ([]tally, error) {
	var runs []tally
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var t tally
		if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
			return nil, fmt.Errorf("tally line %d: %w", len(runs)+1, err)
		}
		runs = append(runs, t)
	}
	return runs, sc.Err()
}
