package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A reader that goes away (malarun status | head -1) ends each command
// that writes to stdout quietly: no error line, exit 0 (issue 34).
func TestClosedPipeEndsQuietly(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	for i := range 3 {
		if err := os.MkdirAll(filepath.Join(state, "issue-"+string(rune('a'+i))), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"status", "--state-dir", state}, {"man"}, {"exit-codes"}, {"exit-codes", "--json"},
		{"completion", "bash"}, {"version"}} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close() // the reader is gone before anything is written
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), envAsMalarun+"=1", "HOME="+t.TempDir())
		var stderr strings.Builder
		cmd.Stdout, cmd.Stderr = w, &stderr
		err = cmd.Run()
		w.Close()
		if err != nil || stderr.String() != "" {
			t.Errorf("%v: %v, stderr %q", args, err, stderr.String())
		}
	}
}
