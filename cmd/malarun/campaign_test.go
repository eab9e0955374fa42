package main

import (
	"bytes"
	"cmp"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/environ"
	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/limitstore"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// The campaign's length and seed: `go test ./cmd/malarun -run
// TestHostileCampaign -campaign 10m` for a long one, -campaign.seed to
// repeat one. Test flags are the one package-level state of these tests.
var (
	campaignLength = flag.Duration("campaign", 30*time.Second, "how long TestHostileCampaign mixes faults into runs")
	campaignSeed   = flag.Uint64("campaign.seed", 0, "TestHostileCampaign's seed (0: a new one, printed)")
)

// TestHostileCampaign runs malarun (this binary) against the fake claude
// again and again, each time with a scenario and a fault drawn at random:
// signals at any moment (one or two), stderr closed or never read, the
// --events reader gone, the lock file removed with a second malarun on the
// issue, a planted record or state file, malarun killed outright and the
// run reclaimed (with tool processes that cleared their environment and
// left the tree), malarun started with signals ignored.
// After each run it checks what must hold whatever happened: malarun
// exited by itself with a documented code, no process of the run is
// alive, the record is saved and says what the code says, and every
// transcript is whole JSON lines.
func TestHostileCampaign(t *testing.T) {
	if testing.Short() {
		t.Skip("!!! SKIPPING TestHostileCampaign under -short (make check): it runs for -campaign (30 s); make test runs it !!!")
	}
	seed := *campaignSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	rerun := fmt.Sprintf("rerun: go test ./cmd/malarun -run TestHostileCampaign -campaign %s -campaign.seed %d", *campaignLength, seed)
	t.Logf("campaign seed %d, for %s (%s)", seed, *campaignLength, rerun)
	rng := rand.New(rand.NewPCG(seed, seed>>1|1))
	tally := map[string]int{}
	until := time.Now().Add(*campaignLength)
	runs := 0
	for ; runs == 0 || time.Now().Before(until); runs++ {
		c := drawCase(rng)
		tally[c.fault]++
		tally[fmt.Sprintf("scenario %s", c.scenario)]++
		ok := t.Run(fmt.Sprintf("%03d-%s-%s", runs, c.scenario, c.fault), func(t *testing.T) {
			codes := c.play(t, rng)
			for _, code := range codes {
				tally["exit "+strconv.Itoa(code)]++
			}
		})
		if !ok {
			t.Fatalf("run %d failed; %s", runs, rerun)
		}
	}
	var lines []string
	for k, n := range tally {
		lines = append(lines, fmt.Sprintf("%s: %d", k, n))
	}
	sort.Strings(lines)
	t.Logf("%d runs, seed %d:\n%s", runs, seed, strings.Join(lines, "\n"))
}

// campaignCase is one run: what the fake claude does, and what goes wrong.
type campaignCase struct {
	scenario, fault string
	behaviour       string
	env, args       []string
}

// The scenarios: what claude does in a run, with the flags it needs.
func campaignScenarios(t *testing.T) map[string]func() (string, []string, []string) {
	transcript := func(lines ...string) string { return writeTranscript(t, lines...) }
	session := testchild.SessionID
	return map[string]func() (string, []string, []string){
		"success": func() (string, []string, []string) {
			return testchild.Replay, []string{testchild.EnvTranscript + "=TRANSCRIPTS/tool-use-success.jsonl"}, nil
		},
		"hang-resumed": func() (string, []string, []string) {
			return testchild.ResumeAware, []string{testchild.EnvLines + "=2", testchild.EnvTranscript + "=" + transcript(testchild.InitLine, testchild.ToolLine)},
				[]string{"--idle-timeout", "30s", "--tool-timeout", "1s", "--max-attempts", "3"}
		},
		"crash": func() (string, []string, []string) {
			return testchild.CrashMidLine, []string{testchild.EnvLines + "=2", testchild.EnvTranscript + "=" + transcript(testchild.InitLine, testchild.ToolLine)},
				[]string{"--max-attempts", "2"}
		},
		"error-result": func() (string, []string, []string) {
			return testchild.Replay, []string{testchild.EnvExit + "=1", testchild.EnvTranscript + "=" + transcript(testchild.InitLine,
				`{"type":"result","subtype":"success","is_error":true,"api_error_status":400,"terminal_reason":"api_error","result":"API Error: 400 \u001b]0;owned\u0007","session_id":"`+session+`"}`)}, nil
		},
		"absurd-numbers": func() (string, []string, []string) {
			return testchild.Replay, []string{testchild.EnvTranscript + "=" + transcript(testchild.InitLine,
				`{"type":"assistant","message":{"model":"m","content":[{"type":"text","text":"x"}],"usage":{"input_tokens":-5,"output_tokens":1e30,"cache_read_input_tokens":1e308}},"session_id":"`+session+`"}`,
				`{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","resetsAt":1795458741000,"rateLimitType":"five_hour"},"session_id":"`+session+`"}`,
				`{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":1e300,"error_status":529,"session_id":"`+session+`"}`,
				`{"type":"result","subtype":"success","is_error":false,"result":"done","total_cost_usd":1e308,"usage":{"input_tokens":-1},"session_id":"`+session+`"}`)}, nil
		},
		"hostile-text": func() (string, []string, []string) {
			return testchild.Replay, []string{testchild.EnvTranscript + "=" + transcript(testchild.InitLine,
				`{"type":"result","subtype":"success","is_error":false,"result":"done \u001b[2J\u001b]0;title\u0007 \u009b2J \u202eevil","session_id":"--dangerously-skip-permissions","total_cost_usd":0.1}`)}, nil
		},
		"usage-limit": func() (string, []string, []string) {
			return testchild.UsageLimited, []string{testchild.EnvResetsAt + "=" + strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)}, nil
		},
		// A limit whose reset comes within limit_wait: malarun waits, then
		// resumes the session, which succeeds.
		"usage-limit-wait": func() (string, []string, []string) {
			return testchild.UsageLimited, []string{testchild.EnvResetsAt + "=" + strconv.FormatInt(time.Now().Add(3*time.Second).Unix(), 10)},
				[]string{"--limit-wait", "1h"}
		},
		"term-ignoring-tree": func() (string, []string, []string) {
			return testchild.Grandchild, nil, []string{"--tool-timeout", "1s", "--kill-grace", "300ms", "--max-attempts", "1"}
		},
		"big-line": func() (string, []string, []string) {
			return testchild.BigLine, []string{fmt.Sprintf("%s=%d", testchild.EnvSize, 3<<20)}, nil
		},
	}
}

func campaignFaults() []string {
	return []string{"none", "signal", "two-signals", "stderr-closed", "stderr-stalled", "events-reader-gone",
		"lock-removed", "planted-record", "planted-file", "killed-and-reclaimed", "bare-escapee-reclaimed", "ignored-signals", "killed-in-limit-wait"}
}

func drawCase(rng *rand.Rand) campaignCase {
	names := []string{"success", "hang-resumed", "crash", "error-result", "absurd-numbers", "hostile-text", "usage-limit",
		"usage-limit-wait", "term-ignoring-tree", "big-line"}
	faults := campaignFaults()
	return campaignCase{scenario: names[rng.IntN(len(names))], fault: faults[rng.IntN(len(faults))]}
}

// play runs the case and checks the invariants after each malarun; it
// returns their exit codes.
func (c campaignCase) play(t *testing.T, rng *rand.Rand) []int {
	c.behaviour, c.env, c.args = campaignScenarios(t)[c.scenario]()
	p := newProc(t, "hostile", c.behaviour, append([]string(nil), c.env...), append(c.args, "--kill-grace", "500ms")...)
	// A moment within 0.6 s after malarun holds the issue (before that it
	// has started nothing, and TestSignalInEveryPhase covers the prompt
	// read): during or after the first attempt, a backoff or a stop, as it
	// falls.
	after := func(f func()) {
		delay := time.Duration(rng.Int64N(int64(600 * time.Millisecond)))
		go func() {
			testchild.WaitUntil(exitLimit, nil, func() bool { return holdsIssue(p) })
			time.AfterFunc(delay, f)
		}()
	}
	switch c.fault {
	case "none":
		return []int{c.finish(t, p, runToEnd(p))}
	case "signal", "two-signals":
		sigs := []syscall.Signal{syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGINT, syscall.SIGTERM}
		p.start(nil, nil)
		sig := sigs[rng.IntN(len(sigs))]
		after(func() { p.cmd.Process.Signal(sig) })
		if c.fault == "two-signals" {
			second := sigs[rng.IntN(len(sigs))]
			after(func() { p.cmd.Process.Signal(second) })
		}
		return []int{c.finish(t, p, p.wait())}
	case "stderr-closed", "stderr-stalled":
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		p.start(nil, w)
		w.Close()
		if c.fault == "stderr-closed" {
			n := rng.Int64N(4096) // drawn here: rng is the test goroutine's
			go func() {
				io.CopyN(io.Discard, r, n)
				r.Close()
			}()
		} else {
			defer r.Close() // never read
		}
		return []int{c.finish(t, p, p.wait())}
	case "events-reader-gone":
		fifo := filepath.Join(t.TempDir(), "events")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		p.cmd.Args = append(p.cmd.Args, "--events", fifo)
		p.start(nil, nil)
		keep := rng.IntN(4)
		go func() {
			f, err := os.Open(fifo)
			if err != nil {
				return
			}
			for i := 0; i < keep; i++ {
				readUntil(f, "\n")
			}
			f.Close()
		}()
		return []int{c.finish(t, p, p.wait())}
	case "lock-removed":
		p.start(nil, nil)
		second := p.again()
		done := make(chan error, 1)
		after(func() {
			os.Remove(filepath.Join(p.stateDir, p.issue, journal.LockFile))
			second.cmd.Stdout, second.cmd.Stderr = &second.stdout, &second.stderr
			done <- second.cmd.Run()
		})
		first := p.wait()
		code := exitCode(t, <-done) // both are done: their processes share a HOME
		if first == 7 {
			// The second one, on the same machine, must find the first alive
			// and leave; it must never take the issue from it.
			t.Errorf("the first malarun lost its issue to one that only looked; stderr:\n%s", p.stderr.String())
		}
		// The second may come after the first ended, and then runs the issue
		// itself; both at once is what must never happen.
		checkNotConcurrent(t, p, second)
		return []int{c.finish(t, p, first), c.finish(t, second, code)}
	case "planted-record":
		before := plantRecord(t, p, rng)
		code := runToEnd(p)
		if code != exitUsage {
			t.Fatalf("a planted record: exit %d, want 2; stderr:\n%s", code, p.stderr.String())
		}
		if after, _ := os.ReadFile(filepath.Join(p.stateDir, p.issue, journal.RecordFile)); !bytes.Equal(after, before) {
			t.Error("the planted record was changed")
		}
		assertNothingLeft(t, p)
		reset := p.again("--reset")
		return []int{code, c.finish(t, reset, runToEnd(reset))}
	case "planted-file":
		return plantFile(t, c, p, plantSites()[rng.IntN(len(plantSites()))], rng.IntN(3))
	case "bare-escapee-reclaimed":
		return bareEscapee(t, c, p, after)
	case "ignored-signals":
		return ignoredSignals(t, c, p, after, rng.IntN(2))
	case "killed-in-limit-wait":
		return killedInLimitWait(t, c, p)
	case "killed-and-reclaimed":
		p.start(nil, nil)
		after(func() { p.cmd.Process.Kill() })
		p.cmd.Wait() // killed or ended by itself
		next := p.again()
		return []int{c.finish(t, next, runToEnd(next))}
	}
	t.Fatalf("unknown fault %q", c.fault)
	return nil
}

// holdsIssue reports whether p's malarun has taken its issue (the record
// exists) or is no longer running.
func holdsIssue(p *proc) bool {
	if _, err := os.Stat(filepath.Join(p.stateDir, p.issue, journal.RecordFile)); err == nil {
		return true
	}
	return !alive(p)
}

func runToEnd(p *proc) int {
	p.start(nil, nil)
	return p.wait()
}

// finish checks what must hold after a malarun exited with code.
func (c campaignCase) finish(t *testing.T, p *proc, code int) int {
	t.Helper()
	documented := false
	for _, r := range exitCodes() {
		documented = documented || r.code == code
	}
	if !documented {
		t.Errorf("exit %d is not in the exit code table; stderr:\n%s", code, p.stderr.String())
	}
	assertNothingLeft(t, p)
	e, ok := journal.Read(p.stateDir, p.issue)
	if !ok || code == exitUsage || code == 7 {
		return code // nothing started, or the record is another's (checked where that matters)
	}
	if e.Err != nil {
		t.Fatalf("exit %d left a damaged record: %v", code, e.Err)
	}
	rec := e.Record
	want := map[int][]record.Status{0: {record.Succeeded}, 3: {record.Stopped}, 124: {record.Stopped}, 75: {record.Waiting},
		129: {record.Interrupted, record.Waiting}, 130: {record.Interrupted, record.Waiting},
		131: {record.Interrupted, record.Waiting}, 143: {record.Interrupted, record.Waiting}}[code]
	if want == nil {
		want = []record.Status{record.Failed}
	}
	if !containsStatus(want, rec.Status) || rec.ExitCode != code || len(rec.Tree) != 0 {
		t.Errorf("exit %d, but the record says %s with exit %d and tree %v; stderr:\n%s", code, rec.Status, rec.ExitCode, rec.Tree, p.stderr.String())
	}
	checkTranscripts(t, rec, code)
	return code
}

func containsStatus(list []record.Status, s record.Status) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkTranscripts: every transcript is JSON lines but for a last line the
// CLI was stopped in the middle of, and a succeeded run's last transcript
// ends with the result that decided it.
func checkTranscripts(t *testing.T, rec record.Record, code int) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(rec.RunDir, "attempt-*.jsonl"))
	var last string
	lastN := 0
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		d := stream.NewDecoder(fh)
		var kinds []stream.Kind
		var lastType string
		for {
			ev, err := d.Next()
			if err != nil {
				break
			}
			kinds = append(kinds, ev.Kind)
			lastType = ev.Type
		}
		fh.Close()
		for i, k := range kinds {
			if k == stream.KindMalformed {
				t.Errorf("%s: line %d is not JSON", f, i+1)
			}
		}
		n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "attempt-"), ".jsonl"))
		if n > lastN {
			lastN, last = n, lastType
		}
	}
	if code == 0 && last != "result" {
		t.Errorf("the run succeeded, but its last transcript ends with a %q line", last)
	}
}

// checkNotConcurrent fails if the two malaruns both ran claude for the
// issue: each attempt number of the run folder has one transcript only,
// which createExclusive ensures, and no attempt of one began while the
// other was still in its run.
func checkNotConcurrent(t *testing.T, first, second *proc) {
	t.Helper()
	if strings.Contains(first.stderr.String()+second.stderr.String(), "file exists") {
		t.Errorf("two malaruns wrote the same run folder:\n%s\n%s", first.stderr.String(), second.stderr.String())
	}
}

// plantRecord writes a record no malarun writes for p's issue, and returns it.
func plantRecord(t *testing.T, p *proc, rng *rand.Rand) []byte {
	t.Helper()
	dir := filepath.Join(p.stateDir, p.issue)
	run := journal.NewRunID(time.Now())
	base := fmt.Sprintf(`"version": 3, "issue": %q, "status": "processing", "cwd": "/", "home": "/root", "run_id": %q, "runs": [%q],
		"sessions": [], "session_talked": true, "attempts": 1, "reclaims": 0, "continuations": 0, "checkpoint": "",
		"cost_usd": 0, "total_cost_usd": 0, "owner": {"pid": 0, "host": "h", "started_at": "2026-01-01T00:00:00Z"},
		"started_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z", "marker": %q, "exit_code": 0`,
		p.issue, run, run, p.issue+"/"+run)
	plants := []string{
		`"run_dir": "/etc", "session_id": ""`,
		`"run_dir": %q, "session_id": "--dangerously-skip-permissions"`,
		`"run_dir": %q, "session_id": "", "tree": [{"pid": 1, "start_time": 0}]`,
		`"run_dir": %q, "session_id": "", "cost_usd": 1e308`,
	}
	plant := plants[rng.IntN(len(plants))]
	if strings.Contains(plant, "%q") {
		plant = fmt.Sprintf(plant, filepath.Join(dir, "runs", run))
	}
	b := []byte("{" + base + ", " + plant + "}\n")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, journal.RecordFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

// plantSites are the state paths plantFile plants at.
func plantSites() []string { return []string{"record", "lock", "note"} }

// plantFile plants at site a FIFO (kind 0), a symbolic link (1) or a
// 3 GiB sparse file (2), one of the state paths malarun reads (issue 32):
// nothing may block or read gigabytes, each ends at once with its
// documented code, and the fix a user would make (--reset, removing the
// lock) lets the issue run.
func plantFile(t *testing.T, c campaignCase, p *proc, site string, kind int) []int {
	t.Helper()
	dir := filepath.Join(p.stateDir, p.issue)
	path := map[string]string{
		"record": filepath.Join(dir, journal.RecordFile),
		"lock":   filepath.Join(dir, journal.LockFile),
		"note":   filepath.Join(p.stateDir, limitstore.DirName, limitKeyOf(p.cmd.Env)+".json"),
	}[site]
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	var err error
	switch kind {
	case 0:
		err = syscall.Mkfifo(path, 0o600)
	case 1:
		err = os.Symlink("/etc/passwd", path)
	default:
		var f *os.File
		if f, err = os.Create(path); err == nil {
			err = f.Truncate(3 << 30)
			f.Close()
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code := runToEnd(p)
	took := time.Since(start)
	switch site {
	case "record":
		if code != exitUsage || took > 10*time.Second {
			t.Fatalf("a planted record: exit %d after %v, want 2 at once; stderr:\n%s", code, took, p.stderr.String())
		}
		reset := p.again("--reset")
		return []int{code, c.finish(t, reset, runToEnd(reset))}
	case "lock":
		if kind == 2 {
			// A big regular file is a lock like any other: malarun locks it
			// and truncates it to write its name; nothing is read.
			return []int{c.finish(t, p, code)}
		}
		if code != exitFailure || took > 10*time.Second || !strings.Contains(p.stderr.String(), "lock") {
			t.Fatalf("a planted lock: exit %d after %v, want 1 at once naming it; stderr:\n%s", code, took, p.stderr.String())
		}
		os.Remove(path) // what the message tells the user to do
		next := p.again()
		return []int{code, c.finish(t, next, runToEnd(next))}
	}
	// A planted usage-limit note is removed with a warning; the run goes on
	// (and may write a note of its own there: a usage-limit scenario).
	if fi, err := os.Lstat(path); err == nil && (!fi.Mode().IsRegular() || fi.Size() > limitstore.MaxStoreBytes) {
		t.Errorf("the planted note is still there: %v, %d bytes", fi.Mode(), fi.Size())
	}
	return []int{c.finish(t, p, code)}
}

// limitKeyOf is the usage-limit note's key for a malarun run with env, as
// the supervisor computes it (limitshare.go).
func limitKeyOf(env []string) string {
	get := func(k string) string { return environ.Get(env, k) }
	cred := cmp.Or(get("ANTHROPIC_API_KEY"), get("CLAUDE_CODE_OAUTH_TOKEN"))
	if base := get("ANTHROPIC_BASE_URL"); base != "" {
		cred += "\x00" + base
	}
	return limitstore.Key(cred)
}

// Every planted kind at every site, once each (the campaign draws them).
func TestPlantedStateFiles(t *testing.T) {
	t.Parallel()
	for _, site := range plantSites() {
		for kind := range 3 {
			t.Run(fmt.Sprintf("%s-%d", site, kind), func(t *testing.T) {
				c := campaignCase{scenario: "success", fault: "planted-file"}
				c.behaviour, c.env, c.args = campaignScenarios(t)[c.scenario]()
				p := newProc(t, "planted", c.behaviour, append([]string(nil), c.env...), c.args...)
				codes := plantFile(t, c, p, site, kind)
				if last := codes[len(codes)-1]; last != 0 {
					t.Errorf("codes %v: the issue did not run after the fix", codes)
				}
			})
		}
	}
}

// bareEscapee: the run's setsid tool processes clear their environment
// (`setsid env -i cmd &`: no marker, no HOME), and malarun is killed
// outright at a random moment; the next malarun must end them before it
// starts anything (the run's cgroup, §D28), and nothing of the run may be
// left after it.
func bareEscapee(t *testing.T, c campaignCase, p *proc, after func(func())) []int {
	t.Helper()
	tag := testchild.EnvBareGrandchild + "=" + strconv.Itoa(os.Getpid()) + "-" + t.Name()
	p.cmd.Env = append(p.cmd.Env, tag, testchild.EnvGrandchild+"=1")
	t.Cleanup(func() {
		for _, pid := range testchild.ProcessesWithEnv(tag) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	p.start(nil, nil)
	after(func() { p.cmd.Process.Kill() })
	p.cmd.Wait() // killed, or ended by itself
	contained := false
	if e, ok := journal.Read(p.stateDir, p.issue); ok && e.Err == nil {
		contained = e.Record.Cgroup != ""
	}
	next := p.again()
	codes := []int{c.finish(t, next, runToEnd(next))}
	var left []int
	for _, pid := range testchild.ProcessesWithEnv(tag) {
		if !testchild.Zombie(pid) {
			left = append(left, pid)
		}
	}
	switch {
	case len(left) == 0:
	case contained || os.Getenv("CI") == "true":
		t.Errorf("tool processes that cleared their environment outlived the reclaim: %v", left)
	default:
		t.Logf("SKIPPED: no cgroup could be made here, so escapees %v that cleared their environment outlive a killed malarun (docs/platforms.md)", left)
	}
	return codes
}

// killedInLimitWait: malarun is killed outright once the record says it
// waits for a usage limit's reset (at once, in a scenario with no such
// wait, or when it has ended); the next malarun continues the run. A run
// whose wait was cut so must still succeed (issue 40: on 3689d6a the
// rerun's every claude was killed by the kernel as it entered the run's
// cgroup, exit 3).
func killedInLimitWait(t *testing.T, c campaignCase, p *proc) []int {
	t.Helper()
	p.start(nil, nil)
	waited := false
	testchild.WaitUntil(exitLimit, nil, func() bool {
		e, ok := journal.Read(p.stateDir, p.issue)
		waited = ok && e.Err == nil && e.Record.Status == record.Waiting && !e.Record.RetryAt.IsZero() && e.Record.RetryAt.After(time.Now())
		return waited || !alive(p)
	})
	p.cmd.Process.Kill()
	p.cmd.Wait()
	next := p.again()
	code := c.finish(t, next, runToEnd(next))
	if waited && c.scenario == "usage-limit-wait" && code != 0 {
		t.Errorf("the run continued after malarun was killed in its limit wait: exit %d, want 0; stderr:\n%s", code, next.stderr.String())
	}
	return []int{code}
}

// alive reports whether p's malarun has not exited (a zombie has).
func alive(p *proc) bool {
	pid := p.cmd.Process.Pid
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return err == nil && !testchild.Zombie(pid)
}

// ignoredSignals: malarun is started, as `nohup` or a shell's background
// job starts it, with SIGHUP and SIGINT ignored, and gets one of them
// (which: sig) at a random moment. It keeps it ignored (docs/record.md, "Interrupted is not dead"):
// the run ends as it would have without it.
func ignoredSignals(t *testing.T, c campaignCase, p *proc, after func(func()), which int) []int {
	t.Helper()
	sig := []syscall.Signal{syscall.SIGHUP, syscall.SIGINT}[which]
	old := p.cmd
	p.cmd = exec.Command("/bin/sh", append([]string{"-c", `trap "" HUP INT; exec "$0" "$@"`, old.Path}, old.Args[1:]...)...)
	p.cmd.Env, p.cmd.Dir = old.Env, old.Dir
	p.start(nil, nil)
	after(func() { p.cmd.Process.Signal(sig) })
	code := p.wait()
	if code == 128+int(sig) {
		t.Errorf("malarun started with %v ignored was interrupted by it; stderr:\n%s", sig, p.stderr.String())
	}
	return []int{c.finish(t, p, code)}
}

// The campaign's process faults on the scenarios they matter for, once
// each, so that CI runs them whatever the campaign's seed draws.
func TestCampaignProcessFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("!!! SKIPPING TestCampaignProcessFaults under -short (make check): five campaign runs with real process trees, 8 s; make test runs it !!!")
	}
	t.Parallel()
	for _, tc := range []struct{ scenario, fault string }{
		{"hang-resumed", "bare-escapee-reclaimed"}, {"term-ignoring-tree", "bare-escapee-reclaimed"},
		{"success", "ignored-signals"}, {"hang-resumed", "ignored-signals"},
		{"usage-limit-wait", "killed-in-limit-wait"},
	} {
		t.Run(tc.scenario+"-"+tc.fault, func(t *testing.T) {
			c := campaignCase{scenario: tc.scenario, fault: tc.fault}
			c.play(t, rand.New(rand.NewPCG(1, 2)))
		})
	}
}
