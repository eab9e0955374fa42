package deploy_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The laptop recipe's case arms are the exit-code contract: 75 is the one
// code run again after retry_at, the retry-now codes are run again at
// once, 2 (a configuration error: no record) stops the issue with a note
// for malarun summary, every other code stops the issue (its behaviour is
// tested in e2e/fleet_test.go against the fake CLI).
func TestXargsRecipeFollowsTheContract(t *testing.T) {
	b, err := os.ReadFile("xargs/malarun-fleet.sh")
	if err != nil {
		t.Fatal(err)
	}
	arm := regexp.MustCompile(`(?m)^\t\t([0-9][0-9 |]*)\)$`)
	var arms [][]int
	for _, m := range arm.FindAllStringSubmatch(string(b), -1) {
		var codes []int
		for _, f := range strings.Split(m[1], "|") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				t.Fatalf("arm %q: %v", m[1], err)
			}
			codes = append(codes, n)
		}
		arms = append(arms, codes)
	}
	var now, later []int
	never := map[int]bool{}
	for _, c := range deploy.contract {
		switch c.Retry {
		case retryNow:
			now = append(now, c.Code)
		case retryAfterRetryAt:
			later = append(later, c.Code)
		default:
			never[c.Code] = true
		}
	}
	slices.Sort(now)
	if len(arms) != 4 || !slices.Equal(arms[0], []int{0}) || !slices.Equal(arms[1], later) || !slices.Equal(arms[2], now) ||
		!slices.Equal(arms[3], []int{2}) || !never[2] {
		t.Errorf("the recipe's arms are %v; the contract: 0, after retry_at %v, now %v, then 2 (never retried: noted)", arms, later, now)
	}
}

// The recipe with prompt files named as a careless or hostile hand would:
// every valid issue runs once, every file gets one line, and a name that
// is not an issue id runs nothing (xargs once stopped at a quote: the
// issues after it never ran and got no line), and is noted for malarun
// summary (malarun not-run, with the runs' own arguments), after the notes
// of the folder are cleared. malarun is a stub that notes its issue and
// succeeds, and notes what not-run was asked.
func TestXargsRecipeSurvivesOddNames(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	names := []string{"a1.md", "b2.md", "c'3.md", `d"4.md`, `e\5.md`, "f 6.md", "-g7.md", "h\n8.md", "i9.md", "j.k_10.md"}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("Fix it.\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ran, notes := filepath.Join(t.TempDir(), "ran"), t.TempDir()
	stub := filepath.Join(t.TempDir(), "malarun")
	// Each not-run call in a file of its own (the recipe's workers run at
	// once), its arguments NUL-ended; the clear is made first.
	script := "#!/bin/sh\nif [ \"$1\" = not-run ]; then printf '%s\\0' \"$@\" > " + notes + "/$$; exit 0; fi\n" +
		"echo \"$1\" >> " + ran + "\necho '{}'\n"
	if err := os.WriteFile(stub, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "xargs/malarun-fleet.sh", dir, "3", "--", "--state-dir", "/state")
	cmd.Env = append(os.Environ(), "MALARUN="+stub, "MALARUN_FLEET_OUT="+out)
	stdout, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1 (some files are not issues)\n%s", err, stdout)
	}
	lines := strings.Split(strings.TrimSuffix(string(stdout), "\n"), "\n")
	slices.Sort(lines)
	want := []string{
		"-g7.md: not an issue id (letters, digits, . _ -; not starting with -): not run",
		"a1: succeeded (run 1)", "b2: succeeded (run 1)",
		"c?3.md: not an issue id (letters, digits, . _ -; not starting with -): not run",
		"d?4.md: not an issue id (letters, digits, . _ -; not starting with -): not run",
		"e?5.md: not an issue id (letters, digits, . _ -; not starting with -): not run",
		"f?6.md: not an issue id (letters, digits, . _ -; not starting with -): not run",
		"h?8.md: not an issue id (letters, digits, . _ -; not starting with -): not run",
		"i9: succeeded (run 1)", "j.k_10: succeeded (run 1)",
	}
	if !slices.Equal(lines, want) {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	b, _ := os.ReadFile(ran)
	issues := strings.Fields(string(b))
	slices.Sort(issues)
	if !slices.Equal(issues, []string{"a1", "b2", "i9", "j.k_10"}) {
		t.Errorf("malarun ran for %q, want each valid issue once", issues)
	}
	files, err := os.ReadDir(notes)
	if err != nil {
		t.Fatal(err)
	}
	var noted []string
	cleared := 0
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(notes, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		args := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
		if slices.Equal(args, []string{"not-run", "--clear", dir, "--state-dir", "/state"}) {
			cleared++
			continue
		}
		if len(args) != 7 || args[1] != "--prompt" || args[3] != "--why" || !strings.HasPrefix(args[4], "not an issue id") ||
			args[5] != "--state-dir" || args[6] != "/state" {
			t.Errorf("not-run called with %q", args)
			continue
		}
		noted = append(noted, filepath.Base(args[2]))
	}
	if cleared != 1 {
		t.Errorf("the folder's notes were cleared %d times, want once, with the runs' arguments", cleared)
	}
	slices.Sort(noted)
	if want := []string{"-g7.md", "c'3.md", `d"4.md`, `e\5.md`, "f 6.md", "h\n8.md"}; !slices.Equal(noted, want) {
		t.Errorf("noted %q, want every file that is not an issue id, its name as it is", noted)
	}
}
