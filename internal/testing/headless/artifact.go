package headless

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ArtifactDir is where tests leave what a person should look at (a
// page's screenshot): $MALARUN_TEST_ARTIFACTS, else malarun-test-artifacts
// in the temporary folder. It is made when missing; CI keeps it.
func ArtifactDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("MALARUN_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "malarun-test-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// SaveScreenshot writes a PNG of the page, width pixels wide and as tall
// as the page (at most 12,000) or, if less, height, to the test's
// artifacts as <test>-<name>.png, and logs where.
func SaveScreenshot(ctx context.Context, t testing.TB, p *Page, width, height int, name string) string {
	t.Helper()
	// The page's height at this width: set the width first, then measure.
	if err := p.b.Call(ctx, p.session, "Emulation.setDeviceMetricsOverride",
		map[string]any{"width": width, "height": 800, "deviceScaleFactor": 1, "mobile": false}, nil); err != nil {
		t.Fatal(err)
	}
	var whole int
	if err := p.Eval(ctx, `Math.ceil(document.documentElement.scrollHeight)`, &whole); err != nil {
		t.Fatal(err)
	}
	if height <= 0 || height > whole {
		height = whole
	}
	png, err := p.Screenshot(ctx, width, min(max(height, 200), 12000))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	file := filepath.Join(ArtifactDir(t), strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())+"-"+name+".png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", file)
	return file
}
