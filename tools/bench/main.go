// Command bench is malarun's benchmark harness (`make bench`, through
// scripts/bench.sh). It runs the built malarun binary against the fake
// claude CLI of internal/testing/testchild (this same binary, re-executed with
// MALARUN_FAKE_CHILD naming a behaviour) and against the real CLI talking
// to internal/testing/fakeapi, measures what malarun adds, and prints the results
// as Markdown tables.
//
// It is a module of its own (tools/bench/go.mod, with a replace of the
// malarun module by ../..), so that `go build`, `go vet`, `go test` and
// `go install` of ./... in malarun leave it out. From the repository root:
//
//	go build -o /tmp/malarun ./cmd/malarun
//	(cd tools/bench && go build -o /tmp/malarun-bench .)
//	/tmp/malarun-bench -malarun /tmp/malarun -claude .cache/claude-code/node_modules/.bin/claude
//
// Every figure is measured in the run that prints it; goals are compared
// with what was measured, never assumed.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/testing/testchild"
)

// options are the harness flags.
type options struct {
	malarun     string
	claude      string
	decoder     string
	transcripts string
	jsonOut     string
	only        string
	tmpfs       string

	runs       int           // overhead runs with the fake child
	rounds     int           // rounds of bare CLI / malarun / malarun+wrapper
	hangs      int           // detection: hangs
	phaseHangs int           // phases: hangs per phase, and recoveries
	idleTO     time.Duration // detection: idle_timeout
	kills      int           // kill latency: trees of each kind
	grace      time.Duration // kill latency: kill_grace for the trees that ignore SIGTERM
	idle       time.Duration // idle cost: the silent window measured
	rssRuns    int           // peak RSS: runs of each scenario
	bigLine    int           // peak RSS: bytes of the big line
	longLines  int           // peak RSS: lines of the long transcript
	scale      int           // scale: malaruns at once
	scaleLines int           // scale: lines each child prints
	scalePace  time.Duration // scale: pause between lines
}

func main() {
	testchild.MaybeRun() // the fake claude, when malarun or the kill benchmark runs this binary as one
	if cli := os.Getenv(envWrap); cli != "" {
		os.Exit(wrap(cli))
	}
	if len(os.Args) > 1 && os.Args[1] == "kill" {
		fs := flag.NewFlagSet("kill", flag.ExitOnError)
		n := fs.Int("n", 30, "trees of each kind")
		grace := fs.Duration("grace", 200*time.Millisecond, "kill grace")
		fs.Parse(os.Args[2:])
		if err := runKillBench(*n, *grace); err != nil {
			fmt.Fprintln(os.Stderr, "bench kill:", err)
			os.Exit(1)
		}
		return
	}
	var o options
	flag.StringVar(&o.malarun, "malarun", "", "the malarun binary to measure (required)")
	flag.StringVar(&o.claude, "claude", "", "the real claude CLI; empty skips the comparison with it")
	flag.StringVar(&o.decoder, "decoder", "", "output of the stream decoder's go test -bench run, to tabulate")
	flag.StringVar(&o.transcripts, "transcripts", "testdata/transcripts", "the recorded transcripts")
	flag.StringVar(&o.jsonOut, "json", "", "also write every raw sample to this file")
	flag.StringVar(&o.only, "only", "", "comma-separated scenarios to run (overhead,real,detect,phases,kill,idle,rss,scale,telemetry); empty: all")
	flag.StringVar(&o.tmpfs, "tmpfs", "/dev/shm", "a tmpfs to repeat the overhead runs on, to tell the disk's share; empty: skip")
	flag.IntVar(&o.runs, "runs", 50, "overhead: malarun runs with the fake child")
	flag.IntVar(&o.rounds, "rounds", 30, "overhead: rounds of bare CLI, malarun, malarun with the CPU-reporting wrapper, in random order")
	flag.IntVar(&o.hangs, "hangs", 100, "detection: hangs")
	flag.IntVar(&o.phaseHangs, "phase-hangs", 20, "phases: hangs per phase (and resumed hangs for the recovery latency)")
	flag.DurationVar(&o.idleTO, "idle-timeout", 200*time.Millisecond, "detection: malarun's idle_timeout")
	flag.IntVar(&o.kills, "kills", 30, "kill latency: trees of each kind")
	flag.DurationVar(&o.grace, "grace", 200*time.Millisecond, "kill latency: kill_grace")
	flag.DurationVar(&o.idle, "idle", 60*time.Second, "idle cost: the silence measured")
	flag.IntVar(&o.rssRuns, "rss-runs", 2, "peak RSS: runs of each scenario")
	flag.IntVar(&o.bigLine, "big-line", 100<<20, "peak RSS: bytes of the big line")
	flag.IntVar(&o.longLines, "long-lines", 200000, "peak RSS: lines of the long transcript with partial messages")
	flag.IntVar(&o.scale, "scale", 50, "scale: malaruns at once")
	flag.IntVar(&o.scaleLines, "scale-lines", 400, "scale: lines each fake child prints")
	flag.DurationVar(&o.scalePace, "scale-pace", 5*time.Millisecond, "scale: pause between a fake child's lines")
	flag.Parse()
	if o.malarun == "" {
		fmt.Fprintln(os.Stderr, "bench: -malarun is required")
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func (o options) want(s string) bool {
	if o.only == "" {
		return true
	}
	for _, x := range strings.Split(o.only, ",") {
		if strings.TrimSpace(x) == s {
			return true
		}
	}
	return false
}

func run(o options) error {
	started := time.Now()
	h, cleanup, err := newHarness(o)
	if err != nil {
		return err
	}
	defer cleanup()
	rep := &report{raw: map[string]any{}}

	// The idle scenario only waits; it runs alongside the others, which
	// cannot change how often an idle malarun wakes up.
	type idleResult struct {
		apply func(*report)
		err   error
	}
	var idleDone chan idleResult
	if o.want("idle") {
		idleDone = make(chan idleResult, 1)
		go func() {
			apply, err := h.idleCost(o)
			idleDone <- idleResult{apply, err}
		}()
	}
	steps := []struct {
		name string
		f    func(options, *report) error
	}{
		{"overhead", h.overheadFake},
		{"detect", h.detection},
		{"phases", h.phases},
		{"kill", h.killLatency},
		{"rss", h.peakRSS},
		{"scale", h.scaleRuns},
		{"real", h.overheadReal},
		{"telemetry", h.telemetryCost},
	}
	for _, s := range steps {
		if !o.want(s.name) {
			continue
		}
		t := time.Now()
		fmt.Fprintf(os.Stderr, "bench: %s...\n", s.name)
		if err := s.f(o, rep); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		fmt.Fprintf(os.Stderr, "bench: %s done in %v\n", s.name, time.Since(t).Round(time.Second))
	}
	if idleDone != nil {
		fmt.Fprintln(os.Stderr, "bench: waiting for the idle scenario...")
		res := <-idleDone
		if res.err != nil {
			return fmt.Errorf("idle: %w", res.err)
		}
		res.apply(rep)
	}
	if o.decoder != "" {
		if err := rep.decoder(o.decoder); err != nil {
			return fmt.Errorf("decoder results: %w", err)
		}
	}
	rep.print(os.Stdout, time.Since(started))
	if o.jsonOut != "" {
		b, err := json.MarshalIndent(rep.raw, "", " ")
		if err != nil {
			return err
		}
		return os.WriteFile(o.jsonOut, b, 0o644)
	}
	return nil
}

func newHarness(o options) (*harness, func(), error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	tmp, err := os.MkdirTemp("", "malarun-bench-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	h := &harness{
		malarun: o.malarun,
		self:    self,
		tmp:     tmp,
		state:   filepath.Join(tmp, "state"),
		prompt:  filepath.Join(tmp, "task.md"),
		baseEnv: benchEnv(tmp),
	}
	if err := os.WriteFile(h.prompt, []byte("Fix the failing test in internal/api, then run go test ./...\n"), 0o600); err != nil {
		cleanup()
		return nil, nil, err
	}
	return h, cleanup, nil
}

// benchEnv is malarun's environment with a fake child: this process's,
// without anything that would configure malarun or point it elsewhere.
func benchEnv(tmp string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "MALARUN_") || strings.HasPrefix(kv, "XDG_") || strings.HasPrefix(kv, "HOME=") {
			continue
		}
		env = append(env, kv)
	}
	home := filepath.Join(tmp, "home")
	os.MkdirAll(home, 0o700)
	return append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
}

// killLatency runs the kill benchmark in a process of its own (proc makes
// its caller a child subreaper, which the harness should not be).
func (h *harness) killLatency(o options, rep *report) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.self, "kill", "-n", fmt.Sprint(o.kills), "-grace", o.grace.String())
	cmd.Env = withoutBenchEnv(os.Environ())
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return err
	}
	var res killResult
	if err := json.Unmarshal(out, &res); err != nil {
		return err
	}
	rep.raw["kill"] = res
	rep.kill(res)
	return nil
}
