package e2e_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/supervisor"
)

// currentCLIVersion is the CLI version the suite runs against when nothing
// says otherwise: the last of the Makefile's CLAUDE_CODE_VERSIONS, kept in
// step by TestCurrentCLIVersionIsTheMakefiles.
const currentCLIVersion = "2.1.332"

// cliChoice is which real CLI the suite runs against.
type cliChoice struct {
	bin string // as given: a path, or a bare name looked up in PATH
	// version is what the binary must report, so that a stale install
	// or a MALARUN_CLAUDE_BIN that contradicts MALARUN_CLAUDE_VERSION fails
	// at once instead of testing the wrong CLI; "" when nothing is expected
	// (MALARUN_CLAUDE_BIN alone, or a channel such as "latest").
	version string
}

// chooseCLI picks the CLI: MALARUN_CLAUDE_BIN, else the version
// MALARUN_CLAUDE_VERSION (default currentCLIVersion) as `make e2e-deps`
// installs it under root.
func chooseCLI(root string, getenv func(string) string) cliChoice {
	v := getenv("MALARUN_CLAUDE_VERSION")
	want := v
	if _, err := parseVersion(v); err != nil {
		want = "" // a channel such as "latest" names a directory, not a version
	}
	if bin := getenv("MALARUN_CLAUDE_BIN"); bin != "" {
		return cliChoice{bin: bin, version: want}
	}
	if v == "" {
		v, want = currentCLIVersion, currentCLIVersion
	}
	return cliChoice{bin: installedCLI(root, v), version: want}
}

// installedCLI is where `make e2e-deps` puts version v of the CLI.
func installedCLI(root, v string) string {
	return filepath.Join(root, ".cache", "claude-code", v, "node_modules", ".bin", "claude")
}

// resolveBin makes bin absolute: a bare name is looked up in PATH, a
// relative path is taken from the working directory (the e2e package's).
func resolveBin(bin string) (string, error) {
	if !strings.Contains(bin, "/") {
		return exec.LookPath(bin)
	}
	return filepath.Abs(bin)
}

// cliVersion runs `claude --version` once, in a throwaway HOME, and returns
// the version it prints ("2.1.330 (Claude Code)" gives "2.1.330").
func cliVersion(bin, home string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %v", bin, err)
	}
	v, _, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	if _, err := parseVersion(v); err != nil {
		return "", fmt.Errorf("%s --version printed %q: %v", bin, out, err)
	}
	return v, nil
}

// parseVersion reads "MAJOR.MINOR.PATCH", ignoring a pre-release or build
// suffix ("2.2.0-beta.1" is 2.2.0: close enough for a feature gate).
func parseVersion(s string) ([3]int, error) {
	var v [3]int
	core, _, _ := strings.Cut(s, "+")
	core, _, _ = strings.Cut(core, "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return v, fmt.Errorf("version %q is not MAJOR.MINOR.PATCH", s)
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || strings.Trim(p, "0123456789") != "" {
			return v, fmt.Errorf("version %q is not MAJOR.MINOR.PATCH", s)
		}
		v[i] = n
	}
	return v, nil
}

// versionAtLeast reports whether version have is min or newer.
func versionAtLeast(have, min string) (bool, error) {
	h, err := parseVersion(have)
	if err != nil {
		return false, err
	}
	m, err := parseVersion(min)
	if err != nil {
		return false, err
	}
	for i := range h {
		if h[i] != m[i] {
			return h[i] > m[i], nil
		}
	}
	return true, nil
}

// requireCLI skips a test that needs behaviour first seen in CLI version
// min when the suite runs an older one (make test also runs the oldest
// supported version). That is a version gate, not a missing dependency, so
// it skips in CI too, and says so.
func requireCLI(t *testing.T, min string) {
	t.Helper()
	if e2e.claude == "" {
		t.Skip("real claude CLI missing (make e2e-deps)")
	}
	ok, err := versionAtLeast(e2e.claudeVersion, min)
	if err != nil {
		t.Fatalf("requireCLI(%q): %v", min, err)
	}
	if !ok {
		t.Skipf("SKIPPED (version gate): needs claude >= %s, running %s", min, e2e.claudeVersion)
	}
}

// onceAcrossCLIs is for a test that does not use the real CLI: make test
// runs the suite once per pinned CLI, and such a test would only repeat
// itself, so it runs in the suite for the current CLI (or with no version
// named) and says it skips in the others.
func onceAcrossCLIs(t *testing.T) {
	t.Helper()
	if v := os.Getenv("MALARUN_CLAUDE_VERSION"); v != "" && v != currentCLIVersion {
		t.Skipf("SKIPPED for claude %s: this test does not use the real CLI; it runs in the suite for %s (currentCLIVersion)", v, currentCLIVersion)
	}
}

func TestVersionAtLeast(t *testing.T) {
	onceAcrossCLIs(t)
	for _, c := range []struct {
		have, min string
		want      bool
	}{
		{"2.1.330", "2.1.330", true},
		{"2.1.197", "2.1.330", false},
		{"2.1.330", "2.1.197", true},
		{"2.1.40", "2.1.330", false}, // numeric, not string, order
		{"2.2.0", "2.1.330", true},
		{"3.0.0", "2.99.99", true},
		{"1.99.99", "2.0.0", false},
		{"2.2.0-beta.1", "2.2.0", true},
		{"2.1.330+build.7", "2.1.331", false},
	} {
		got, err := versionAtLeast(c.have, c.min)
		if err != nil || got != c.want {
			t.Errorf("versionAtLeast(%q, %q) = %v, %v; want %v", c.have, c.min, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "latest", "2.1", "2.1.x", "2.1.330.1", "v2.1.330", "2.-1.0", "2.+1.0"} {
		if _, err := versionAtLeast(bad, "2.1.330"); err == nil {
			t.Errorf("versionAtLeast(%q, ...) accepted a bad version", bad)
		}
	}
}

func TestChooseCLI(t *testing.T) {
	onceAcrossCLIs(t)
	root := "/repo"
	for _, c := range []struct {
		name string
		env  map[string]string
		want cliChoice
	}{
		{"default: the current pinned version", nil,
			cliChoice{installedCLI(root, currentCLIVersion), currentCLIVersion}},
		{"a pinned version", map[string]string{"MALARUN_CLAUDE_VERSION": "2.1.197"},
			cliChoice{"/repo/.cache/claude-code/2.1.197/node_modules/.bin/claude", "2.1.197"}},
		{"a channel: no version to check", map[string]string{"MALARUN_CLAUDE_VERSION": "latest"},
			cliChoice{"/repo/.cache/claude-code/latest/node_modules/.bin/claude", ""}},
		{"a binary", map[string]string{"MALARUN_CLAUDE_BIN": "/opt/claude"},
			cliChoice{"/opt/claude", ""}},
		{"a binary that must be a version", map[string]string{"MALARUN_CLAUDE_BIN": "/opt/claude", "MALARUN_CLAUDE_VERSION": "2.1.197"},
			cliChoice{"/opt/claude", "2.1.197"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := chooseCLI(root, func(k string) string { return c.env[k] })
			if got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// The suite's default CLI is the Makefile's current one, the last of
// CLAUDE_CODE_VERSIONS, and every pinned version is a real version with the
// oldest first.
func TestCurrentCLIVersionIsTheMakefiles(t *testing.T) {
	onceAcrossCLIs(t)
	versions := makefileVersions(t)
	if len(versions) < 2 {
		t.Fatalf("CLAUDE_CODE_VERSIONS %v: want the oldest supported and the current version", versions)
	}
	for i, v := range versions {
		if _, err := parseVersion(v); err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			if newer, _ := versionAtLeast(v, versions[i-1]); !newer || v == versions[i-1] {
				t.Errorf("CLAUDE_CODE_VERSIONS %v: want oldest first, each newer than the one before", versions)
			}
		}
	}
	if last := versions[len(versions)-1]; last != currentCLIVersion {
		t.Errorf("the Makefile's current CLI is %s, currentCLIVersion is %s: change them together", last, currentCLIVersion)
	}
	// malarun warns outside the range it is tested on: the same two versions.
	if versions[0] != supervisor.OldestSupportedCLI || versions[len(versions)-1] != supervisor.NewestTestedCLI {
		t.Errorf("the Makefile tests %v, malarun warns outside %s to %s: change them together",
			versions, supervisor.OldestSupportedCLI, supervisor.NewestTestedCLI)
	}
}

// makefileVersions reads the `CLAUDE_CODE_VERSIONS := ...` line.
func makefileVersions(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":=")
		if ok && strings.TrimSpace(name) == "CLAUDE_CODE_VERSIONS" {
			return strings.Fields(value)
		}
	}
	t.Fatalf("no CLAUDE_CODE_VERSIONS := line in the Makefile (%v)", sc.Err())
	return nil
}
