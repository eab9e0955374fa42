package claudesettings

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/malarun/malarun/internal/endpoint"
)

// A settings file of the CLI's that sets the address (or a variable that
// bears on it) is found wherever the CLI reads one: the user's
// (or CLAUDE_CONFIG_DIR's), the project's in the folder or one above; one
// that is not JSON, or not a regular file, is named too (what it sets is
// unknown).
func TestFindsTheAddressInClaudeSettings(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	sub := filepath.Join(work, "pkg", "x")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "ANTHROPIC_BASE_URL=http://127.0.0.1:1"}
	address := func(env []string) string {
		file, _ := Find(env, sub, endpoint.AddressVars())
		return file
	}
	if f := address(env); f != "" {
		t.Fatalf("no settings: %q", f)
	}
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Settings that say nothing of the address change nothing.
	write(filepath.Join(home, ".claude", "settings.json"), `{"env":{"FOO":"1"},"hooks":{}}`)
	if f := address(env); f != "" {
		t.Errorf("unrelated settings stopped the look: %q", f)
	}
	for _, c := range []struct{ file, text string }{
		{filepath.Join(home, ".claude", "settings.json"), `{"env":{"ANTHROPIC_BASE_URL":"http://gateway:8080"}}`},
		{filepath.Join(work, ".claude", "settings.json"), `{"env":{"HTTPS_PROXY":"http://proxy:3128"}}`},
		{filepath.Join(sub, ".claude", "settings.local.json"), `{"env":{"CLAUDE_CODE_USE_BEDROCK":"1"}}`},
		{filepath.Join(work, ".claude", "settings.local.json"), `{not json`},
	} {
		write(c.file, c.text)
		if f := address(env); !strings.Contains(f, c.file) {
			t.Errorf("%s %s: %q", c.file, c.text, f)
		}
		os.Remove(c.file)
	}
	// CLAUDE_CONFIG_DIR moves the user's settings.
	cfgDir := t.TempDir()
	write(filepath.Join(cfgDir, "settings.json"), `{"env":{"ANTHROPIC_BASE_URL":"http://gateway:8080"}}`)
	if f := address(append(env, "CLAUDE_CONFIG_DIR="+cfgDir)); f == "" {
		t.Errorf("CLAUDE_CONFIG_DIR's settings ignored")
	}
	// A FIFO in the settings' place neither blocks nor is trusted.
	fifo := filepath.Join(work, ".claude", "settings.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if f := address(env); !strings.Contains(f, "not a regular file") {
		t.Errorf("a FIFO: %q", f)
	}
}
