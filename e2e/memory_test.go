package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/malarun/malarun/internal/testchild"
)

// malarun's own peak RSS (VmHWM, which it logs at the end of a run) stays
// under 64 MB while the CLI prints a 100 MB line. The fake child (this test
// binary) needs no real CLI, so this test never skips.
func TestPeakRSSWithHundredMegabyteLine(t *testing.T) {
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
