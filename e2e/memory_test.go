package e2e_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/malarun/malarun/internal/testing/testchild"
	"github.com/malarun/malarun/internal/ui"
)

// malarun's own peak RSS (VmHWM, which it logs at the end of a run) stays
// under 64 MB while the CLI prints a 100 MB line. The fake child (this test
// binary) needs no real CLI: the test runs once, in the suite for the
// current CLI (onceAcrossCLIs).
func TestPeakRSSWithHundredMegabyteLine(t *testing.T) {
	onceAcrossCLIs(t)
	t.Parallel()
	dir := t.TempDir()
	prompt := filepath.Join(dir, "task.md")
	os.WriteFile(prompt, []byte("big"), 0o600)
	cmd := exec.Command(e2e.malarun, "issue-rss", "--prompt", prompt, "--claude-bin", os.Args[0],
		"--state-dir", filepath.Join(dir, "state"), "--log-format", "json", "--max-attempts", "1")
	cmd.Env = testchild.Env(testchild.BigLine, fmt.Sprintf("%s=%d", testchild.EnvSize, 100<<20))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("malarun: %v\n%s", err, stderr.String())
	}
	if stdout.String() != "All done.\n" {
		t.Errorf("stdout %q", stdout.String())
	}
	var kb int64
	for _, line := range bytes.Split(stderr.Bytes(), []byte("\n")) {
		var rec struct {
			Message string `json:"message"`
			PeakRSS int64  `json:"peak_rss_kb"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Message == "run succeeded" {
			kb = rec.PeakRSS
		}
	}
	if kb == 0 {
		t.Fatalf("no peak_rss_kb in the log:\n%s", stderr.String())
	}
	t.Logf("malarun peak RSS with a 100 MB line: %.1f MB", float64(kb)/1024)
	if kb > 64*1024 {
		t.Errorf("peak RSS %d kB, over 64 MB", kb)
	}
}

// A result of over 100 MB, full of escapes, reaches stdout and the --json
// report whole and byte-exact: it is copied from the transcript as it is
// written, so malarun's peak RSS (logged once the copy is done) stays
// under the same 64 MB. Neither side holds the text on stdout: the child
// writes it through a buffer and the test hashes it as it arrives.
func TestPeakRSSWithHundredMegabyteResult(t *testing.T) {
	onceAcrossCLIs(t)
	t.Parallel()
	const size = 100 << 20
	want := sha256.New()
	if err := testchild.BigResultText(want, size); err != nil {
		t.Fatal(err)
	}
	var n countingWriter
	testchild.BigResultText(&n, size)
	textBytes := int64(n)
	wantText := want.Sum(nil)
	want.Write([]byte("\n"))
	wantStdout := want.Sum(nil)

	run := func(t *testing.T, stdout io.Writer, args ...string) {
		dir := t.TempDir()
		prompt := filepath.Join(dir, "task.md")
		os.WriteFile(prompt, []byte("big"), 0o600)
		cmd := exec.Command(e2e.malarun, append([]string{"issue-bigresult", "--prompt", prompt, "--claude-bin", os.Args[0],
			"--state-dir", filepath.Join(dir, "state"), "--log-format", "json", "--max-attempts", "1"}, args...)...)
		cmd.Env = testchild.Env(testchild.BigResult, fmt.Sprintf("%s=%d", testchild.EnvSize, size))
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("malarun: %v\n%s", err, stderr.String())
		}
		var kb, copied int64
		for _, line := range bytes.Split(stderr.Bytes(), []byte("\n")) {
			var rec struct {
				Level   string `json:"level"`
				Message string `json:"message"`
				PeakRSS int64  `json:"peak_rss_kb"`
				Bytes   int64  `json:"bytes"`
			}
			if json.Unmarshal(line, &rec) == nil {
				if rec.Level == "error" || rec.Level == "warn" {
					t.Errorf("log: %s", line)
				}
				if rec.Message == "result copied from the transcript" {
					kb, copied = rec.PeakRSS, rec.Bytes
				}
			}
		}
		if kb == 0 || copied != textBytes {
			t.Fatalf("no copy of %d bytes logged with its peak_rss_kb:\n%s", textBytes, stderr.String())
		}
		t.Logf("malarun peak RSS with a %.1f MB result: %.1f MB", float64(textBytes)/(1<<20), float64(kb)/1024)
		if kb > 64*1024 {
			t.Errorf("peak RSS %d kB, over 64 MB", kb)
		}
	}

	t.Run("stdout", func(t *testing.T) {
		got := sha256.New()
		run(t, got)
		if !bytes.Equal(got.Sum(nil), wantStdout) {
			t.Errorf("stdout is not the result text and a newline")
		}
	})
	t.Run("json", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "report.json")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		run(t, f, "--json")
		f.Close()
		f, err = os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var r ui.Report
		dec := json.NewDecoder(f)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		if r.Outcome != "success" || r.ResultTruncated || int64(len(r.Result)) != textBytes {
			t.Errorf("report: outcome %s, result of %d bytes (truncated %v), want %d", r.Outcome, len(r.Result), r.ResultTruncated, textBytes)
		}
		if got := sha256.Sum256([]byte(r.Result)); !bytes.Equal(got[:], wantText) {
			t.Errorf("the report's result is not the text")
		}
	})
}

type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}
