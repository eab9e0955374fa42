package platform_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A build for a kernel malarun does not support says so once, and says
// nothing else: not a screen of undefined names from internal/proc.
func TestBuildForAnUnsupportedKernelFailsWithOneClearError(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED in -short: cross-compiles malarun for two other kernels")
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	for _, goos := range []string{"windows", "freebsd"} {
		t.Run(goos, func(t *testing.T) {
			cmd := exec.Command(goBin, "build", "-o", os.DevNull, "github.com/malarun/malarun/cmd/malarun")
			cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0")
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("GOOS=%s: the build succeeded", goos)
			}
			var errs []string
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "go: downloading") {
					errs = append(errs, l)
				}
			}
			if len(errs) != 1 || !strings.Contains(errs[0], "malarun_builds_only_for_GOOS_linux_or_darwin") {
				t.Errorf("GOOS=%s: want one error naming the supported kernels, got:\n%s", goos, out)
			}
		})
	}
}
