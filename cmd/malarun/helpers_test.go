package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/malarun/malarun/internal/event"

	"github.com/malarun/malarun/internal/supervisor"
)

const testSecret = "sk-test-secret-do-not-log"

// cli runs the command line in-process with a fake supervisor.
type cli struct {
	t        *testing.T
	env      map[string]string
	stdin    io.Reader
	signals  chan os.Signal
	testdata string // absolute: each test runs in its own empty directory
	home     string
	// What the fake supervisor returns; a nil report is one with the
	// result "result text".
	runErr error
	report *event.Report
	// setProcs stands in for runtime.GOMAXPROCS (nil: none, as in a test
	// binary's own process).
	setProcs func(int) int
}

// execution is what one run of the command did.
type execution struct {
	code           int
	stdout, stderr string
	calls          int
	cfg            supervisor.Config
	sdeps          supervisor.Deps
}

// newCLI isolates the test: an empty working directory (no ./malarun.yaml),
// an empty HOME (no user config), no XDG variables.
func newCLI(t *testing.T) *cli {
	t.Helper()
	td, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	t.Chdir(t.TempDir())
	return &cli{
		t:        t,
		env:      map[string]string{"HOME": home, "ANTHROPIC_API_KEY": testSecret, "PATH": "/usr/bin:/bin"},
		stdin:    strings.NewReader(""),
		signals:  make(chan os.Signal, 2),
		testdata: td,
		home:     home,
	}
}

func (c *cli) run(args ...string) execution {
	c.t.Helper()
	return c.runWith(nil, args...)
}

// runWith is run with during called inside the fake supervisor, with what
// the supervisor was given.
func (c *cli) runWith(during func(context.Context, supervisor.Config, supervisor.Deps), args ...string) execution {
	c.t.Helper()
	var o execution
	var stdout, stderr bytes.Buffer
	d := &deps{
		stdin:    c.stdin,
		stdout:   &stdout,
		stderr:   &stderr,
		getenv:   func(k string) string { return c.env[k] },
		environ:  c.environ,
		signals:  c.signals,
		setProcs: c.setProcs,
		runSupervisor: func(ctx context.Context, cfg supervisor.Config, sd supervisor.Deps) (event.Report, error) {
			o.calls++
			o.cfg, o.sdeps = cfg, sd
			sd.Log.Info().Msg("fake run")
			if during != nil {
				during(ctx, cfg, sd)
			}
			if c.report != nil {
				return *c.report, c.runErr
			}
			return event.Report{RunDir: "/state/run", Result: "result text"}, c.runErr
		},
	}
	o.code = execute(context.Background(), args, d)
	o.stdout, o.stderr = stdout.String(), stderr.String()
	return o
}

func (c *cli) environ() []string {
	var env []string
	for k, v := range c.env {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env
}

// file writes content to name in a fresh temp dir and returns its path.
func (c *cli) file(name, content string) string {
	c.t.Helper()
	p := filepath.Join(c.t.TempDir(), name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		c.t.Fatal(err)
	}
	return p
}

func (c *cli) prompt() string { return c.file("task.md", "do the task\n") }

// wantRun fails unless the run reached the supervisor and exited 0.
func (o execution) wantRun(t *testing.T) supervisor.Config {
	t.Helper()
	if o.code != 0 || o.calls != 1 {
		t.Fatalf("code %d, %d supervisor calls, want 0 and 1; stderr:\n%s", o.code, o.calls, o.stderr)
	}
	return o.cfg
}

// wantUsage fails unless the command exited 2 without starting a run and
// its message contains every want.
func (o execution) wantUsage(t *testing.T, want ...string) {
	t.Helper()
	if o.code != exitUsage || o.calls != 0 {
		t.Fatalf("code %d, %d supervisor calls, want 2 and 0; stderr:\n%s", o.code, o.calls, o.stderr)
	}
	if !strings.HasPrefix(o.stderr, "malarun: ") {
		t.Errorf("stderr does not start with \"malarun: \":\n%s", o.stderr)
	}
	for _, w := range want {
		if !strings.Contains(o.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, o.stderr)
		}
	}
}
