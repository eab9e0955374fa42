package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/malarun/malarun/internal/testing/testchild"
)

// A malarun stopped (Ctrl-Z, SIGSTOP, a paused container) for longer than
// idle_timeout while claude keeps writing: on SIGCONT the lines written
// meanwhile are read before the late timer acts, and the healthy tree is
// not killed (issue 31). The pause is measured in the fake claude's own
// lines (it writes one every 5 ms at most), not by sleeping.
func TestPausedMalarunKillsNoHealthyTree(t *testing.T) {
	t.Parallel()
	p := newProc(t, "issue-paused", testchild.Partial, []string{testchild.EnvLines + "=1200", testchild.EnvPace + "=5ms"},
		"--idle-timeout", "2s", "--max-attempts", "1", "--log-format", "json")
	p.start(nil, nil)
	p.waitTranscript(1, `"subtype":"init"`)
	lines := func() int {
		files, _ := filepath.Glob(filepath.Join(p.stateDir, p.issue, "runs", "*", "attempt-1.jsonl"))
		if len(files) != 1 {
			return 0
		}
		b, _ := os.ReadFile(files[0])
		return bytes.Count(b, []byte("\n"))
	}
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	from := lines()
	// 600 lines at 5 ms or more each: at least 3 s, past idle_timeout.
	grown := testchild.WaitUntil(exitLimit, nil, func() bool { return lines() >= from+600 })
	if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if !grown {
		t.Fatalf("claude wrote %d lines in %v while malarun was stopped", lines()-from, exitLimit)
	}
	if code := p.wait(); code != 0 {
		t.Errorf("exit %d after a pause; stderr:\n%s", code, p.stderr.String())
	}
	if strings.Contains(p.stderr.String(), "hang") {
		t.Errorf("the pause was taken for a hang:\n%s", p.stderr.String())
	}
}
