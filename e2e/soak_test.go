package e2e_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/testing/fakeapi"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// A fleet soak (issue 31): many issues, a few at a time, each against its
// own fake API and the real CLI, driven by an orchestrator that follows
// `malarun exit-codes --json` as a team's would (rerun on "now", wait for
// retry_at on "after_retry_at", give up otherwise), with faults mixed in.
// MALARUN_SOAK=ISSUESxCONCURRENCY sets the size (make soak: 40x8); make
// test runs the short default, one issue per fault kind. Invariants: every
// issue ends in success, its side effect ran once, its record says
// succeeded, and nothing of any run is left (each env's cleanup checks).

// soakFaults are the fault kinds, one per issue in turn.
func soakFaults() []string {
	return []string{"stall", "cli-killed-early", "malarun-kill", "usage-limit", "slow-hook", "failed-mcp",
		"overloaded", "malarun-term", "none", "stall-mid-text", "long-tool-input", "cli-killed-midrun", "shared-limit"}
}

// soakSize is the fleet: issues and how many run at once.
func soakSize(t *testing.T) (issues, at int) {
	spec := os.Getenv("MALARUN_SOAK")
	if spec == "" {
		return len(soakFaults()), 3
	}
	a, b, ok := strings.Cut(spec, "x")
	n, err1 := strconv.Atoi(a)
	c, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || c < 1 {
		t.Fatalf("MALARUN_SOAK=%q: want ISSUESxCONCURRENCY, such as 40x8", spec)
	}
	return n, c
}

// soakIssue is one issue of the fleet and what its invocations cost.
type soakIssue struct {
	n     int
	fault string
	e     *env
	side  string // the file its one Bash call appends to
	// slack stretches the allowances (and the faults that outlast them)
	// for a fleet larger than the machine.
	slack time.Duration
	// Invocations of malarun, their exit codes (-1: killed by the soak),
	// and CPU ticks: malarun's own and its reaped children's (claude's tree).
	codes              []int
	ownTicks, cldTicks int64
	err                string
	// idle is the longest the issue waited between two invocations (the
	// orchestrator's wait for a usage limit's reset): nothing of it ran.
	idle time.Duration
	rss  *rssSampler
}

func TestFleetSoak(t *testing.T) {
	if e2e.claude == "" {
		t.Skip("real claude CLI missing (make e2e-deps)")
	}
	if v := os.Getenv("MALARUN_CLAUDE_VERSION"); v != "" && v != currentCLIVersion && os.Getenv("MALARUN_SOAK") == "" {
		t.Skipf("SKIPPED for claude %s: the short fleet soak runs against the current CLI (%s); make soak runs the long one", v, currentCLIVersion)
	}
	issues, at := soakSize(t)
	// A fleet of more CLIs than the machine can run keeps each waiting
	// for a core: its silences stretch. The soak's allowances (seconds,
	// so that stalls cost little) stretch with it, or a healthy CLI
	// starved of CPU would look hung (1000x16 on 2 cores: 15 hangs while
	// waiting for the fake API's immediate answer).
	slack := time.Duration(max(1, (at+2*runtime.NumCPU()-1)/(2*runtime.NumCPU())))
	table := exitTable(t)
	fleet := make([]*soakIssue, issues)
	shared := newSharedLimit(t)
	stateDir := t.TempDir() // the whole fleet's, as a night's is
	for i := range fleet {
		fleet[i] = newSoakIssue(t, i+1, soakFaults()[i%len(soakFaults())], shared, slack)
		fleet[i].e.issue, fleet[i].e.stateDir = fmt.Sprintf("soak-%04d", i+1), stateDir
	}
	rss := newRSSSampler()
	defer rss.stop()
	for _, is := range fleet {
		is.rss = rss
	}
	started := time.Now()
	sem := make(chan struct{}, at)
	var wg sync.WaitGroup
	for _, is := range fleet {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			is.orchestrate(table)
		}()
	}
	wg.Wait()
	wall := time.Since(started)
	var own, cld int64
	var idle time.Duration
	ok := 0
	for _, is := range fleet {
		own, cld = own+is.ownTicks, cld+is.cldTicks
		idle = max(idle, is.idle)
		if is.err != "" {
			t.Errorf("issue %d (%s): %s; exit codes %v", is.n, is.fault, is.err, is.codes)
			continue
		}
		if is.check(t) {
			ok++
		}
	}
	t.Logf("fleet soak: %d/%d issues succeeded, %d at a time, in %v: %.0f issues per hour; CPU: malarun %.2f s, claude %.2f s (malarun %.1f%% of the fleet's)",
		ok, issues, at, wall.Round(time.Second), float64(issues)/wall.Hours(), float64(own)/100, float64(cld)/100, 100*float64(own)/float64(max(own+cld, 1)))
	t.Logf("memory: all malaruns at once at most %.1f MiB (the largest one %.1f MiB); the longest any issue waited with nothing of it running: %v",
		float64(rss.peakSum())/1024, float64(rss.peakOne())/1024, idle.Round(time.Millisecond))
	for _, is := range fleet {
		t.Logf("  issue %2d %-16s exit codes %v", is.n, is.fault, is.codes)
	}
	summarizeSoak(t, stateDir, fleet)
}

// exitTable is `malarun exit-codes --json`: code → retry.
func exitTable(t *testing.T) map[int]string {
	out, err := exec.Command(e2e.malarun, "exit-codes", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Codes []struct {
			Code  int    `json:"code"`
			Retry string `json:"retry"`
		} `json:"codes"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	table := map[int]string{}
	for _, c := range doc.Codes {
		table[c.Code] = c.Retry
	}
	return table
}

func newSoakIssue(t *testing.T, n int, fault string, shared *sharedLimit, slack time.Duration) *soakIssue {
	side := filepath.Join(t.TempDir(), "side-effect")
	if fault == "shared-limit" {
		is := shared.issue(t, n, side)
		is.slack = slack
		return is
	}
	bash := fakeapi.Bash("echo ran >> " + side)
	switch fault {
	case "malarun-term", "malarun-kill", "cli-killed-midrun":
		bash = fakeapi.Bash("echo ran >> " + side + "; sleep 3") // the soak signals malarun or claude meanwhile
	case "long-tool-input":
		// Its input takes longer to write than idle_timeout: healthy.
		bash = bash.WithPace(fakeapi.Pace{InputAfter: 8 * slack * time.Second, Ping: 2 * time.Second})
	}
	var opts []fakeapi.Option
	if fault == "usage-limit" {
		id := fmt.Sprintf("toolu_soak%d", n)
		bash = bash.WithToolUseID(id)
		opts = append(opts, ownLimit(id))
	}
	steps := []fakeapi.Step{bash}
	switch fault {
	case "stall":
		steps = append(steps, fakeapi.Stall())
	case "stall-mid-text":
		steps = append(steps, fakeapi.Text("The build needs").WithPace(fakeapi.Pace{StallAfter: 1, Ping: time.Second}))
	case "overloaded":
		steps = append(steps, fakeapi.Repeat(fakeapi.Overloaded(), 2))
	}
	steps = append(steps, fakeapi.Text(fmt.Sprintf("Issue %d done.", n)))
	e := newEnvWith(t, append(opts, fakeapi.WithScript(steps...))...)
	is := &soakIssue{n: n, fault: fault, e: e, side: side, slack: slack}
	switch fault {
	case "usage-limit":
		// An account of its own: the fleet shares one state dir, where
		// malarun shares an account's limit between its runs.
		oauthEnv(e)
		e.extraEnv = append(e.extraEnv, fmt.Sprintf("CLAUDE_CODE_OAUTH_TOKEN=e2e-oauth-token-%d", n))
	case "slow-hook":
		writeHooks(t, e.work, fmt.Sprintf(`{"Stop":[{"hooks":[{"type":"command","command":"sleep %d"}]}]}`, 6*slack))
	case "failed-mcp":
		giveFailedMCPServer(t, e, "broken")
	case "cli-killed-early":
		e.claudeBin = killedOnceCLI(t)
	}
	return is
}

// orchestrate runs the issue as an orchestrator following the exit-code
// table would, at most 8 invocations.
func (is *soakIssue) orchestrate(table map[int]string) {
	var ended time.Time
	for inv := 1; inv <= 8; inv++ {
		if !ended.IsZero() {
			is.idle = max(is.idle, time.Since(ended))
		}
		code, report := is.invoke(inv)
		ended = time.Now()
		is.codes = append(is.codes, code)
		switch {
		case code == 0:
			return
		case code == -1: // the soak's own kill: the next invocation reclaims the run
		case table[code] == "now":
		case table[code] == "after_retry_at":
			var r struct {
				RetryAt time.Time `json:"retry_at"`
			}
			if err := json.Unmarshal([]byte(report), &r); err != nil || r.RetryAt.IsZero() {
				is.err = fmt.Sprintf("exit %d without retry_at: %v", code, err)
				return
			}
			// An orchestrator's wait for the reset, not a test's: the
			// fake API's limit ends at a wall-clock time.
			time.Sleep(time.Until(r.RetryAt))
		default:
			is.err = fmt.Sprintf("exit %d, retry %q: given up", code, table[code])
			return
		}
	}
	is.err = "still not done after 8 invocations"
}

// invoke runs malarun once; the malarun-* faults signal it, on its first
// invocation, once claude's Bash call is under way. It returns the exit
// code (-1 if the soak killed it) and stdout (the --json report).
func (is *soakIssue) invoke(inv int) (int, string) {
	e := is.e
	flags := []string{"--json", "--idle-timeout", fmt.Sprint(4 * is.slack * time.Second), "--text-timeout", fmt.Sprint(3 * is.slack * time.Second),
		"--kill-grace", "1s", "--backoff", "0s"}
	cmd, stdout, _ := e.command(flags...)
	if err := cmd.Start(); err != nil {
		is.err = err.Error()
		return -2, ""
	}
	killed := false
	if inv == 1 && is.fault == "cli-killed-midrun" {
		// claude itself dies (OOM, a signal of its own) at a random moment
		// of its Bash call, after the call's effect: malarun resumes.
		if testchild.WaitUntil(time.Minute, nil, func() bool { b, _ := os.ReadFile(is.side); return strings.Contains(string(b), "ran\n") }) {
			time.Sleep(time.Duration(rand.Int64N(int64(2 * time.Second))))
			if pid := claudePid(is.e.stateDirPath(), is.e.issueID()); pid > 0 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	if inv == 1 && (is.fault == "malarun-term" || is.fault == "malarun-kill") {
		// The handshake: the Bash call has written its side effect and
		// sleeps; the signal comes while it runs.
		// Its content, not the file: the shell creates the file (>>) before
		// echo writes, and a signal in between left the call's effect
		// undone (seen once under load).
		if testchild.WaitUntil(time.Minute, nil, func() bool { b, _ := os.ReadFile(is.side); return strings.Contains(string(b), "ran\n") }) {
			sig := syscall.SIGTERM
			if is.fault == "malarun-kill" {
				sig, killed = syscall.SIGKILL, true
			}
			cmd.Process.Signal(sig)
		}
	}
	is.rss.add(cmd.Process.Pid)
	own, children := zombieTicks(cmd.Process.Pid)
	is.rss.remove(cmd.Process.Pid)
	is.ownTicks += own
	is.cldTicks += children
	cmd.Wait()
	if killed {
		return -1, stdout.String()
	}
	return cmd.ProcessState.ExitCode(), stdout.String()
}

// check asserts what a successful issue must leave: its side effect once,
// its record succeeded; it reports whether both hold.
func (is *soakIssue) check(t *testing.T) bool {
	t.Helper()
	good := true
	if b, _ := os.ReadFile(is.side); string(b) != "ran\n" {
		t.Errorf("issue %d (%s): its Bash call ran %d times, want once", is.n, is.fault, strings.Count(string(b), "ran"))
		good = false
	}
	out, err := exec.Command(e2e.malarun, "status", is.e.issueID(), "--json", "--state-dir", is.e.stateDirPath()).Output()
	var rec struct {
		Status string `json:"status"`
	}
	if err != nil || json.Unmarshal(out, &rec) != nil || rec.Status != "succeeded" {
		t.Errorf("issue %d (%s): record %q (%v)", is.n, is.fault, rec.Status, err)
		good = false
	}
	return good
}
