package deploy_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// exitCode is one row of `malarun exit-codes --json`.
type exitCode struct {
	Code           int    `json:"code"`
	Outcome        string `json:"outcome"`
	Meaning        string `json:"meaning"`
	Retry          string `json:"retry"`
	NextInvocation string `json:"next_invocation"`
}

// The contract's retry values.
const (
	retryNow          = "now"
	retryAfterRetryAt = "after_retry_at"
	retryNever        = "never"
)

// suite is what TestMain prepared: malarun built from this repository, and
// what it says about itself.
type suite struct {
	malarun  string
	contract []exitCode
	// keys are the configuration keys of `malarun --help`, with their
	// documented defaults.
	keys map[string]string
}

// the suite, set once by TestMain before any test runs and never changed.
var deploy suite

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "malarun-deploy-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s, err := setup(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "deploy:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	deploy = s
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// setup builds malarun from the repository this module sits in, so the
// contract the recipes are checked against has one source: the exit code
// table behind `malarun --help`.
func setup(dir string) (suite, error) {
	s := suite{malarun: filepath.Join(dir, "malarun")}
	build := exec.Command("go", "build", "-o", s.malarun, "./cmd/malarun")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		return s, fmt.Errorf("build malarun: %v\n%s", err, out)
	}
	out, err := exec.Command(s.malarun, "exit-codes", "--json").Output()
	if err != nil {
		return s, fmt.Errorf("malarun exit-codes --json: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	var doc struct {
		Version int        `json:"version"`
		Codes   []exitCode `json:"codes"`
	}
	if err := dec.Decode(&doc); err != nil || doc.Version != 1 || len(doc.Codes) == 0 {
		return s, fmt.Errorf("malarun exit-codes --json: version %d, %d codes, %v\n%s", doc.Version, len(doc.Codes), err, out)
	}
	s.contract = doc.Codes
	help, err := exec.Command(s.malarun, "--help").Output()
	if err != nil {
		return s, fmt.Errorf("malarun --help: %v", err)
	}
	if s.keys, err = helpKeys(string(help)); err != nil {
		return s, err
	}
	return s, nil
}

// helpKeys reads the KEY and DEFAULT columns of --help's configuration
// table (KEY TYPE DEFAULT; a long default goes on under its column).
func helpKeys(help string) (map[string]string, error) {
	_, table, ok := strings.Cut(help, "\n  KEY ")
	if !ok {
		return nil, fmt.Errorf("malarun --help has no configuration table")
	}
	keys := map[string]string{}
	last := ""
	for _, line := range strings.Split(table, "\n")[1:] {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && !strings.HasPrefix(line, "   "):
			last = f[0]
			keys[last] = strings.Join(f[2:], " ")
			continue
		case len(f) > 0 && last != "" && strings.HasPrefix(line, "   "):
			keys[last] += " " + strings.Join(f, " ")
			continue
		}
		break
	}
	if len(keys) < 10 {
		return nil, fmt.Errorf("malarun --help lists %d configuration keys", len(keys))
	}
	return keys, nil
}

// envKey is the configuration key of a MALARUN_* variable.
func envKey(name string) string {
	return strings.ToLower(strings.TrimPrefix(name, "MALARUN_"))
}

// validateConfig has malarun itself read a configuration, from a file (yaml)
// and the environment (MALARUN_* variables): `malarun status` loads every
// key and refuses unknown keys and bad values, as a run does.
func validateConfig(t *testing.T, yaml string, env map[string]string) {
	t.Helper()
	if err := configError(t.TempDir(), yaml, env); err != nil {
		t.Errorf("malarun refuses the configuration: %v", err)
	}
}

func configError(dir, yaml string, env map[string]string) error {
	file := filepath.Join(dir, "malarun.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		return err
	}
	cmd := exec.Command(deploy.malarun, "status", "--json", "--config", file, "--state-dir", filepath.Join(dir, "state"))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v\n%s", err, out)
	}
	return nil
}

// TestConfigErrorCatches: malarun's own loader refuses what a recipe could
// get wrong.
func TestConfigErrorCatches(t *testing.T) {
	tests := []struct {
		name, yaml string
		env        map[string]string
		want       string
	}{
		{"unknown key", "idle_timeot: 3m", nil, `unknown key "idle_timeot"`},
		{"bare number", "shutdown_grace: 15", nil, "needs a unit"},
		{"bad env value", "", map[string]string{"MALARUN_SESSION_TIMEOUT": "50"}, "needs a unit"},
	}
	for _, tt := range tests {
		err := configError(t.TempDir(), tt.yaml, tt.env)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error saying %q", tt.name, err, tt.want)
		}
	}
	if err := configError(t.TempDir(), "shutdown_grace: 15s\nstate_dir: /state", nil); err != nil {
		t.Errorf("a good configuration: %v", err)
	}
}
