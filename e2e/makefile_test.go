package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// `make test` ends with e2e-check: go test prints "ok" for an e2e package
// whose suite skipped (it shows the suite's banner only with -v), so the
// Makefile says itself which pinned CLIs are missing, and with CI=true fails.
func TestMakeSaysWhenTheCLIsAreMissing(t *testing.T) {
	onceAcrossCLIs(t)
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	_, here, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(here))
	cache := t.TempDir()
	installed := filepath.Join(cache, "9.9.8", "node_modules", ".bin", "claude")
	if err := os.MkdirAll(filepath.Dir(installed), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(installed, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	check := func(ci string, versions string) (string, error) {
		cmd := exec.Command("make", "-s", "--no-print-directory", "-C", root, "e2e-check",
			"CLAUDE_CODE_DIR="+cache, "CLAUDE_CODE_VERSIONS="+versions)
		cmd.Env = append(os.Environ(), "CI="+ci)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := check("", "9.9.8 9.9.9")
	if err != nil || !strings.Contains(out, "e2e: SKIPPED: claude 9.9.9 not installed") || strings.Contains(out, "9.9.8") ||
		!strings.Contains(out, "make e2e-deps") {
		t.Errorf("one CLI missing, not in CI: %v\n%s", err, out)
	}
	if out, err := check("true", "9.9.8 9.9.9"); err == nil || !strings.Contains(out, "CI=true, so this is a failure") {
		t.Errorf("one CLI missing in CI: %v, want a failure\n%s", err, out)
	}
	if out, err := check("true", "9.9.8"); err != nil || out != "" {
		t.Errorf("every CLI installed: %v, want silence\n%s", err, out)
	}
}
