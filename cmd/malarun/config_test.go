package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/supervisor"
)

// TestPrecedence: flag > env > file > default, for a duration, a bool and a
// string. Each layer sets a different value, so the winner is visible.
func TestPrecedence(t *testing.T) {
	type want struct {
		idle    time.Duration
		partial bool
		bin     string
	}
	layers := map[string][]string{
		"env":  {"MALARUN_IDLE_TIMEOUT=8m", "MALARUN_PARTIAL_MESSAGES=true", "MALARUN_CLAUDE_BIN=/from/env/claude"},
		"flag": {"--idle-timeout", "9m", "--partial-messages=false", "--claude-bin", "/from/flag/claude"},
	}
	tests := []struct {
		name             string
		file, env, flags bool
		want             want
	}{
		{"default", false, false, false, want{3 * time.Minute, true, "claude"}},
		{"file", true, false, false, want{7 * time.Minute, false, "/from/file/claude"}},
		{"env", false, true, false, want{8 * time.Minute, true, "/from/env/claude"}},
		{"flag", false, false, true, want{9 * time.Minute, false, "/from/flag/claude"}},
		{"env over file", true, true, false, want{8 * time.Minute, true, "/from/env/claude"}},
		{"flag over file", true, false, true, want{9 * time.Minute, false, "/from/flag/claude"}},
		{"flag over env", false, true, true, want{9 * time.Minute, false, "/from/flag/claude"}},
		{"flag over env over file", true, true, true, want{9 * time.Minute, false, "/from/flag/claude"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCLI(t)
			args := []string{"issue-1", "--prompt", c.prompt()}
			if tt.file {
				args = append(args, "--config", filepath.Join(c.testdata, "precedence.yaml"))
			}
			if tt.env {
				for _, kv := range layers["env"] {
					k, v, _ := strings.Cut(kv, "=")
					c.env[k] = v
				}
			}
			if tt.flags {
				args = append(args, layers["flag"]...)
			}
			cfg := c.run(args...).wantRun(t)
			got := want{cfg.IdleTimeout, cfg.PartialMessages, cfg.ClaudeBin}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestBoolFlagForms(t *testing.T) {
	for _, tt := range []struct {
		flag string
		want bool
	}{{"--partial-messages", true}, {"--partial-messages=false", false}, {"--partial-messages=0", false}, {"--partial-messages=true", true}} {
		t.Run(tt.flag, func(t *testing.T) {
			c := newCLI(t)
			c.env["MALARUN_PARTIAL_MESSAGES"] = strconv.FormatBool(!tt.want) // the flag wins
			if cfg := c.run("issue-1", "--prompt", c.prompt(), tt.flag).wantRun(t); cfg.PartialMessages != tt.want {
				t.Errorf("PartialMessages = %v, want %v", cfg.PartialMessages, tt.want)
			}
		})
	}
}

func TestConfigDiscovery(t *testing.T) {
	const (
		cwdFile  = "idle_timeout: 1m\n"
		xdgFile  = "idle_timeout: 2m\n"
		homeFile = "idle_timeout: 4m\n"
		flagFile = "idle_timeout: 5m\n"
	)
	tests := []struct {
		name                     string
		cwd, xdg, home, explicit bool
		relativeXDG              bool
		want                     time.Duration
	}{
		{"none", false, false, false, false, false, supervisor.DefaultIdleTimeout},
		{"./malarun.yaml", true, false, false, false, false, 1 * time.Minute},
		{"XDG_CONFIG_HOME", false, true, false, false, false, 2 * time.Minute},
		{"HOME/.config", false, false, true, false, false, 4 * time.Minute},
		{"XDG_CONFIG_HOME over HOME/.config", false, true, true, false, false, 2 * time.Minute},
		{"relative XDG_CONFIG_HOME is ignored", false, false, true, false, true, 4 * time.Minute},
		{"./malarun.yaml over XDG", true, true, true, false, false, 1 * time.Minute},
		{"--config over all", true, true, true, true, false, 5 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCLI(t)
			args := []string{"issue-1", "--prompt", c.prompt()}
			if tt.cwd {
				if err := os.WriteFile("malarun.yaml", []byte(cwdFile), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tt.xdg {
				p := c.file("malarun/config.yaml", xdgFile)
				c.env["XDG_CONFIG_HOME"] = filepath.Dir(filepath.Dir(p))
			}
			if tt.relativeXDG {
				c.env["XDG_CONFIG_HOME"] = "relative/dir"
			}
			if tt.home {
				dir := filepath.Join(c.home, ".config", "malarun")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(homeFile), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tt.explicit {
				args = append(args, "--config", c.file("explicit.yaml", flagFile))
			}
			if cfg := c.run(args...).wantRun(t); cfg.IdleTimeout != tt.want {
				t.Errorf("IdleTimeout = %v, want %v", cfg.IdleTimeout, tt.want)
			}
		})
	}
}

func TestConfigFileErrors(t *testing.T) {
	tests := []struct {
		name string
		file string // under testdata/
		want []string
	}{
		{"bare number", "bare-number.yaml", []string{"idle_timeout", `"300"`, "bare-number.yaml", "300 needs a unit, e.g. 300s or 5m"}},
		{"quoted bare number", "quoted-bare-number.yaml", []string{"kill_grace", `"10"`, "10 needs a unit"}},
		{"unknown key", "unknown-key.yaml", []string{`unknown key "idle_timout"`, "unknown-key.yaml", `did you mean "idle_timeout"?`}},
		{"bad values, all reported", "bad-values.yaml", []string{
			`log_format "xml"`, "must be one of auto, console, json",
			`partial_messages "maybe"`, "true or false",
			`tool_timeout "-1m"`, "must not be negative",
			"bad-values.yaml",
		}},
		{"mapping", "nested.yaml", []string{"idle_timeout", "single value", "nested.yaml"}},
		{"empty mapping", "empty-mapping.yaml", []string{"idle_timeout (file ", "empty-mapping.yaml): must be a single value, not a mapping"}},
		{"no value", "null.yaml", []string{"idle_timeout (file ", "null.yaml): has no value"}},
		{"list", "list.yaml", []string{"idle_timeout", "single value, not a list", "list.yaml"}},
		{"number for a path", "number-as-path.yaml", []string{"claude_bin", "42 must be a string", "number-as-path.yaml"}},
		{"invalid yaml", "invalid.yaml", []string{"config file", "invalid.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCLI(t)
			c.run("issue-1", "--prompt", c.prompt(), "--config", filepath.Join(c.testdata, tt.file)).wantUsage(t, tt.want...)
		})
	}
}

func TestUnknownKeyInDiscoveredFile(t *testing.T) {
	c := newCLI(t)
	if err := os.WriteFile("malarun.yaml", []byte("claude_bin: claude\ncolour: blue\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.run("issue-1", "--prompt", c.prompt()).wantUsage(t, `unknown key "colour"`, "malarun.yaml", "known keys: claude_bin")
}

func TestConfigFlagErrors(t *testing.T) {
	c := newCLI(t)
	missing := filepath.Join(c.home, "missing.yaml")
	c.run("issue-1", "--prompt", c.prompt(), "--config", missing).wantUsage(t, "config file "+missing+" (from --config) does not exist")
	c.run("issue-1", "--prompt", c.prompt(), "--config", c.home).wantUsage(t, "is a directory")
	c.run("issue-1", "--prompt", c.prompt(), "--config", "").wantUsage(t, "--config is empty")
}

// TestBadValues: every source's bad value names the key, the value, the
// source and what is allowed.
func TestBadValues(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want []string
	}{
		{"env bare number", map[string]string{"MALARUN_IDLE_TIMEOUT": "300"}, nil,
			[]string{`idle_timeout "300" (env MALARUN_IDLE_TIMEOUT): 300 needs a unit, e.g. 300s or 5m`}},
		{"env bare number, odd", map[string]string{"MALARUN_KILL_GRACE": "45"}, nil,
			[]string{"MALARUN_KILL_GRACE", "45 needs a unit, e.g. 45s"}},
		{"flag bare number", nil, []string{"--tool-timeout", "600"},
			[]string{`tool_timeout "600" (flag --tool-timeout): 600 needs a unit`}},
		{"env garbage duration", map[string]string{"MALARUN_SHUTDOWN_GRACE": "soon"}, nil,
			[]string{`shutdown_grace "soon" (env MALARUN_SHUTDOWN_GRACE)`, "not a duration", "e.g. 30s"}},
		{"env negative", map[string]string{"MALARUN_IDLE_TIMEOUT": "-5s"}, nil,
			[]string{"MALARUN_IDLE_TIMEOUT", "must not be negative"}},
		{"env zero", map[string]string{"MALARUN_IDLE_TIMEOUT": "0s"}, nil,
			[]string{"MALARUN_IDLE_TIMEOUT", "must be positive"}},
		{"env zero bare", map[string]string{"MALARUN_RESULT_EXIT_TIMEOUT": "0"}, nil,
			[]string{"MALARUN_RESULT_EXIT_TIMEOUT", "0 needs a unit"}},
		{"env inf", map[string]string{"MALARUN_IDLE_TIMEOUT": "inf"}, nil,
			[]string{"MALARUN_IDLE_TIMEOUT", "not a duration"}},
		{"env session timeout bare", map[string]string{"MALARUN_SESSION_TIMEOUT": "30"}, nil,
			[]string{"MALARUN_SESSION_TIMEOUT", "30 needs a unit"}},
		{"env bad bool", map[string]string{"MALARUN_PARTIAL_MESSAGES": "yes please"}, nil,
			[]string{`partial_messages "yes please" (env MALARUN_PARTIAL_MESSAGES): not a boolean; use true or false`}},
		{"env bad format", map[string]string{"MALARUN_LOG_FORMAT": "xml"}, nil,
			[]string{`log_format "xml" (env MALARUN_LOG_FORMAT): must be one of auto, console, json`}},
		{"flag bad level", nil, []string{"--log-level", "trace"},
			[]string{`log_level "trace" (flag --log-level): must be one of debug, info, warn, error`}},
		{"several at once", map[string]string{"MALARUN_IDLE_TIMEOUT": "300", "MALARUN_LOG_LEVEL": "loud"}, nil,
			[]string{"MALARUN_IDLE_TIMEOUT", "MALARUN_LOG_LEVEL"}},
		{"missing cwd", nil, []string{"--cwd", "/nonexistent/dir"}, []string{`cwd "/nonexistent/dir" (flag --cwd)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCLI(t)
			for k, v := range tt.env {
				c.env[k] = v
			}
			c.run(append([]string{"issue-1", "--prompt", c.prompt()}, tt.args...)...).wantUsage(t, tt.want...)
		})
	}
}

func TestSessionTimeoutZeroDisables(t *testing.T) {
	tests := []struct {
		name string
		env  string
		args []string
		want time.Duration
	}{
		{"file 0", "", []string{"--config", "session-zero.yaml"}, 0},
		{"env 0", "0", nil, 0},
		{"env 0s", "0s", nil, 0},
		{"flag 0", "", []string{"--session-timeout", "0"}, 0},
		{"env 2h", "2h", nil, 2 * time.Hour},
		{"flag 1h30m over env", "0", []string{"--session-timeout", "1h30m"}, 90 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCLI(t)
			c.env["MALARUN_SESSION_TIMEOUT"] = tt.env
			args := []string{"issue-1", "--prompt", c.prompt()}
			for _, a := range tt.args {
				if strings.HasSuffix(a, ".yaml") {
					a = filepath.Join(c.testdata, a)
				}
				args = append(args, a)
			}
			if cfg := c.run(args...).wantRun(t); cfg.SessionTimeout != tt.want {
				t.Errorf("SessionTimeout = %v, want %v", cfg.SessionTimeout, tt.want)
			}
		})
	}
}

func TestPaths(t *testing.T) {
	t.Run("XDG_STATE_HOME", func(t *testing.T) {
		c := newCLI(t)
		c.env["XDG_STATE_HOME"] = "/xdg/state"
		if cfg := c.run("issue-1", "--prompt", c.prompt()).wantRun(t); cfg.StateDir != "/xdg/state/malarun" {
			t.Errorf("StateDir = %q", cfg.StateDir)
		}
	})
	t.Run("relative XDG_STATE_HOME is ignored", func(t *testing.T) {
		c := newCLI(t)
		c.env["XDG_STATE_HOME"] = "xdg/state"
		if cfg := c.run("issue-1", "--prompt", c.prompt()).wantRun(t); cfg.StateDir != filepath.Join(c.home, ".local/state/malarun") {
			t.Errorf("StateDir = %q", cfg.StateDir)
		}
	})
	t.Run("no HOME, no XDG", func(t *testing.T) {
		c := newCLI(t)
		delete(c.env, "HOME")
		c.run("issue-1", "--prompt", c.prompt()).wantUsage(t, "state_dir is not set")
	})
	t.Run("relative paths become absolute", func(t *testing.T) {
		c := newCLI(t)
		if err := os.Mkdir("work", 0o755); err != nil {
			t.Fatal(err)
		}
		wd, _ := os.Getwd()
		cfg := c.run("issue-1", "--prompt", c.prompt(), "--state-dir", "state", "--cwd", "work").wantRun(t)
		if cfg.StateDir != filepath.Join(wd, "state") || cfg.Cwd != filepath.Join(wd, "work") {
			t.Errorf("StateDir %q, Cwd %q; want both under %s", cfg.StateDir, cfg.Cwd, wd)
		}
	})
	t.Run("cwd is a file", func(t *testing.T) {
		c := newCLI(t)
		p := c.prompt()
		c.env["MALARUN_CWD"] = p
		c.run("issue-1", "--prompt", p).wantUsage(t, "cwd", "MALARUN_CWD", "not a directory")
	})
}

// TestExampleConfig: configs/malarun.example.yaml loads through the real
// loader, yields exactly the defaults, and shows every key with its default.
func TestExampleConfig(t *testing.T) {
	example, err := filepath.Abs("../../configs/malarun.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := newCLI(t)
	p := c.prompt()
	withDefaults := c.run("issue-1", "--prompt", p).wantRun(t)
	withExample := c.run("issue-1", "--prompt", p, "--config", example).wantRun(t)
	assertConfig(t, withExample, withDefaults)

	f, err := os.Open(example)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, " ") {
			lines[k] = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, k := range configKeys() {
		v, ok := lines[k.name]
		if !ok {
			t.Errorf("%s is not in %s", k.name, example)
			continue
		}
		if v != k.yamlDefault() {
			t.Errorf("%s: %s in the example, want the default %s", example, v, k.yamlDefault())
		}
		delete(lines, k.name)
	}
	for k := range lines {
		t.Errorf("%s has key %s that is not in the key table", example, k)
	}
}

// TestKeyTable: names are unique, spellable as flags and env vars, and every
// default parses back to itself (the table's kinds match its fields).
func TestKeyTable(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range configKeys() {
		if seen[k.name] {
			t.Errorf("duplicate key %s", k.name)
		}
		seen[k.name] = true
		if k.name != strings.ToLower(k.name) || strings.ContainsAny(k.name, "-. ") {
			t.Errorf("key %q: use lower_snake_case", k.name)
		}
		if k.help == "" {
			t.Errorf("key %s has no help", k.name)
		}
		s := defaultSettings()
		raw := k.yamlDefault()
		if raw == `""` {
			raw = ""
		}
		if err := k.parse(&s, raw); err != nil {
			t.Errorf("key %s: its default %q does not parse: %v", k.name, raw, err)
		}
		if got := k.format(&s); got != k.yamlDefault() {
			t.Errorf("key %s: default round-trips to %q, want %q", k.name, got, k.yamlDefault())
		}
	}
}
