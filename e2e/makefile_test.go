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

// make deps (scripts/deps.sh) names each missing dependency with the
// target that needs it (qemu and etcd only two targets of their own), the
// commands that install them, and exits 0: it reports (issue 49: it ended
// in make's "Error 1").
func TestDepsNamesTheTargetOfEachMissingPackage(t *testing.T) {
	onceAcrossCLIs(t)
	_, here, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(here))
	cmd := exec.Command("/bin/sh", filepath.Join(root, "scripts", "deps.sh"), "9.9.8=/nonexistent/claude", "9.9.9="+os.Args[0])
	cmd.Env = []string{"PATH=" + t.TempDir()} // nothing is found
	out, err := cmd.CombinedOutput()
	s := string(out)
	if err != nil {
		t.Fatalf("deps: %v, want exit 0\n%s", err, s)
	}
	for _, want := range []string{
		"claude 9.9.8           MISSING   make test (the end-to-end tests run against each pinned CLI)",
		"claude 9.9.9           here      make test, make try, make demo, make demo-fleet",
		"chromium               MISSING   make test (the tests that open the HTML pages)",
		"groff                  MISSING   make test (the manual page's tests)",
		"qemu-aarch64-static    MISSING   make test-arm64-qemu only",
		"etcd                   MISSING   make cluster-test only",
		"make e2e-deps", "apt-get install -y --no-install-recommends chromium groff-base qemu-user-static etcd-server",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("deps does not say %q:\n%s", want, s)
		}
	}
}

// make test fetches the modules first, runs every go test as go test -json
// through testprogress (a line per end-to-end test, a line when nothing
// was printed for a while), and ends with the one-line account (issue 49).
func TestMakeTestShowsProgressAndEndsWithTheAccount(t *testing.T) {
	onceAcrossCLIs(t)
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	_, here, _, _ := runtime.Caller(0)
	out, err := exec.Command("make", "-n", "--no-print-directory", "-C", filepath.Dir(filepath.Dir(here)), "test").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n test: %v\n%s", err, out)
	}
	var lines []string
	for l := range strings.SplitSeq(strings.ReplaceAll(string(out), "\\\n", ""), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "echo ") {
			lines = append(lines, l)
		}
	}
	download, tests := -1, 0
	for i, l := range lines {
		if l == "go mod download" {
			download = i
		}
		if strings.Contains(l, "go test ") {
			tests++
			if download < 0 || download > i || !strings.Contains(l, "bin/testprogress -label") || !strings.Contains(l, "go test -json") {
				t.Errorf("go test not through testprogress, or before go mod download: %s", l)
			}
		}
	}
	if tests != 3 || !strings.HasSuffix(lines[len(lines)-1], "bin/testprogress -account bin/test-tally.jsonl") {
		t.Errorf("%d go test runs (want 3), last line %q", tests, lines[len(lines)-1])
	}
}
