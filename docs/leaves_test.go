package docs

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The rule design.md's "Packages" section states: the run's decisions
// (internal/run, internal/attempt), the record's types (internal/record)
// and the events (internal/event) do no I/O, and neither does any package
// they depend on. It holds of imports, not only of code: a package that
// opens files, processes or sockets never enters their dependencies, so
// their tests need no disk, no process and no network, and a change that
// would bring one in fails here.

const module = "github.com/malarun/malarun/"

// pureRoots are the packages the rule is about.
func pureRoots() []string {
	return []string{module + "internal/run", module + "internal/attempt", module + "internal/record", module + "internal/event"}
}

// forbiddenDeps open files, processes or sockets, or wait on the kernel:
// none may be anywhere in the dependencies of a pure root (the standard
// library's and malarun's own).
func forbiddenDeps() []string {
	return []string{
		"os/exec", "os/signal", "net", "net/http", "crypto/tls", "golang.org/x/sys/unix",
		module + "internal/proc", module + "internal/journal", module + "internal/statefile",
		module + "internal/transcript", module + "internal/netprobe", module + "internal/claudesettings",
		module + "internal/limitstore", module + "internal/timelinefile", module + "internal/session",
		module + "internal/notrun", module + "internal/supervisor", module + "internal/telemetry",
	}
}

// forbiddenImports are what no package of malarun's below a pure root
// imports itself: the standard library's door to files and processes (fmt
// and time import os too, so os can only be checked here), and a random
// source (the driver draws: run.Draws, journal.NewRunID).
func forbiddenImports() []string {
	return []string{"os", "syscall", "io/ioutil", "crypto/rand", "math/rand", "math/rand/v2"}
}

// leafProblems lists what breaks the rule for the packages roots, as
// `go list -deps` sees them for goos.
func leafProblems(t *testing.T, root, goos string, roots []string) []string {
	t.Helper()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	args := append([]string{"list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}"}, roots...)
	cmd := exec.Command(goBin, args...)
	cmd.Dir = root
	cmd.Env = append(cmd.Environ(), "GOOS="+goos, "GOARCH=amd64")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps for %s: %v", goos, err)
	}
	var problems []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, " ")
		if slices.Contains(forbiddenDeps(), pkg) {
			problems = append(problems, goos+": "+pkg+" is a dependency")
		}
		if !strings.HasPrefix(pkg, module) {
			continue
		}
		for _, imp := range strings.Fields(imports) {
			if slices.Contains(forbiddenImports(), imp) {
				problems = append(problems, goos+": "+pkg+" imports "+imp)
			}
		}
	}
	return problems
}

func TestPurePackagesDependOnNoIO(t *testing.T) {
	root := moduleRoot(t)
	for _, goos := range []string{"linux", "darwin"} {
		if problems := leafProblems(t, root, goos, pureRoots()); len(problems) > 0 {
			t.Errorf("internal/run, internal/attempt, internal/record and internal/event must depend on no package that does I/O (docs/design.md, Packages):\n%s",
				strings.Join(problems, "\n"))
		}
	}
}

// The check finds what it looks for: the journal, which keeps the record's
// file, breaks both rules.
func TestLeafCheckCatchesIO(t *testing.T) {
	problems := strings.Join(leafProblems(t, moduleRoot(t), "linux", []string{module + "internal/journal"}), "\n")
	for _, want := range []string{"internal/statefile is a dependency", "golang.org/x/sys/unix is a dependency", "internal/journal imports os"} {
		if !strings.Contains(problems, want) {
			t.Errorf("the check of internal/journal does not say %q; it says:\n%s", want, problems)
		}
	}
}
