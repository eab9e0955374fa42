package main

import (
	"crypto/rand"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/malarun/malarun/internal/testing/fakeapi"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// overheadReal compares the real CLI run bare with the same run under
// malarun, against internal/testing/fakeapi in this process: rounds of three runs
// in random order: the bare CLI, malarun running it, and malarun running it
// through the wrapper that reports the CPU of the CLI's tree (which is what
// lets malarun's own CPU be told from its children's).
func (h *harness) overheadReal(o options, rep *report) error {
	if o.claude == "" {
		rep.skipReal("no real CLI given (-claude); run `make e2e-deps`")
		return nil
	}
	claude, err := filepath.Abs(o.claude)
	if err != nil {
		return err
	}
	const reply = "Hello from the fake API."
	api := fakeapi.New(fakeapi.WithResponder(func(*fakeapi.Request) (fakeapi.Step, bool) { return fakeapi.Text(reply), true }))
	defer api.Close()
	home := filepath.Join(h.tmp, "real-home")
	work := filepath.Join(h.tmp, "real-work")
	for _, d := range []string{home, work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"ANTHROPIC_BASE_URL=" + api.URL(),
		"ANTHROPIC_API_KEY=sk-ant-bench-dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
	}
	extra := []string{"--allowedTools", "Bash"}

	bare := func(n int) (*runResult, error) {
		dir := filepath.Join(h.tmp, "runs", fmt.Sprintf("bare-%d", n))
		os.MkdirAll(dir, 0o700)
		stdin, err := os.Open(h.prompt)
		if err != nil {
			return nil, err
		}
		defer stdin.Close()
		stdout, stderr, err := outputFiles(dir, "stdout.jsonl")
		if err != nil {
			return nil, err
		}
		defer stdout.Close()
		defer stderr.Close()
		// The flags malarun passes, so both do the same work.
		args := append([]string{"-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages", "--session-id", uuid()}, extra...)
		cmd := exec.Command(claude, args...)
		cmd.Dir, cmd.Env = work, env
		cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
		t0 := testchild.Monotonic()
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		var info unix.Siginfo
		for unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
		}
		r := &runResult{exitNs: testchild.Monotonic()}
		r.wallNs = r.exitNs - t0
		cmd.Wait()
		r.code = cmd.ProcessState.ExitCode()
		out := readString(filepath.Join(dir, "stdout.jsonl"))
		if r.code != 0 || !strings.Contains(out, `"result":"`+reply+`"`) {
			return nil, fmt.Errorf("bare CLI run %d: exit %d\n%s\n%s", n, r.code, tail([]byte(out), 2000), readString(filepath.Join(dir, "stderr")))
		}
		return r, nil
	}
	viaMalarun := func(n int, wrapped bool) (*runResult, error) {
		spec := runSpec{
			issue: fmt.Sprintf("real-%d", n), claudeBin: claude, cwd: work, extra: extra,
			flags: []string{"--max-attempts", "1"}, baseEnv: env,
		}
		if wrapped {
			spec.issue += "-wrapped"
			spec.claudeBin = h.self
			spec.env = append(spec.env, envWrap+"="+claude)
		}
		r, err := h.start(spec)
		if err != nil {
			return nil, err
		}
		if r.code != 0 || r.stdout != reply+"\n" {
			return nil, fmt.Errorf("malarun run %d (wrapped %v): %s", n, wrapped, r.describe())
		}
		if wrapped && (r.child == nil || r.child.Leftover > 0) {
			return nil, fmt.Errorf("malarun run %d: the wrapper reported %+v", n, r.child)
		}
		return r, nil
	}

	// Warm-up, not counted: the CLI's first start reads a lot from disk.
	if _, err := bare(-1); err != nil {
		return err
	}
	if _, err := viaMalarun(-1, false); err != nil {
		return err
	}
	if _, err := viaMalarun(-2, true); err != nil {
		return err
	}
	rng := mrand.New(mrand.NewPCG(uint64(time.Now().UnixNano()), 7))
	var bareW, malW, ownPrecise, ownTicksDirect, ownTicksWrapped, lat []float64
	for round := range o.rounds {
		for _, k := range rng.Perm(3) {
			switch k {
			case 0:
				r, err := bare(round)
				if err != nil {
					return err
				}
				bareW = append(bareW, float64(r.wallNs)/ms)
			case 1:
				r, err := viaMalarun(round, false)
				if err != nil {
					return err
				}
				malW = append(malW, float64(r.wallNs)/ms)
				ownTicksDirect = append(ownTicksDirect, float64(r.ownTicks)/ms)
			case 2:
				r, err := viaMalarun(round, true)
				if err != nil {
					return err
				}
				c, _ := r.ownCPU()
				l, _ := r.addedLatency()
				ownPrecise = append(ownPrecise, float64(c)/ms)
				ownTicksWrapped = append(ownTicksWrapped, float64(r.ownTicks)/ms)
				lat = append(lat, float64(l)/ms)
			}
		}
	}
	ratio, rlo, rhi := ratioCI(malW, bareW)
	diff, dlo, dhi := diffCI(malW, bareW)
	rep.raw["overhead_real"] = map[string]any{
		"bare_wall_ms": bareW, "malarun_wall_ms": malW, "own_cpu_ms": ownPrecise,
		"own_cpu_ticks_direct_ms": ownTicksDirect, "own_cpu_ticks_wrapped_ms": ownTicksWrapped, "added_latency_ms": lat,
		"ratio": []float64{ratio, rlo, rhi}, "diff_ms": []float64{diff, dlo, dhi},
	}
	rep.overheadReal(o.rounds, summarize(bareW), summarize(malW), ratio, rlo, rhi, diff, dlo, dhi,
		summarize(ownPrecise), summarize(ownTicksDirect), summarize(ownTicksWrapped), summarize(lat))
	return nil
}

// uuid is a random version 4 UUID, for the bare CLI's --session-id.
func uuid() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
