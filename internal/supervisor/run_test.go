package supervisor_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/transcript"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"github.com/malarun/malarun/internal/endpoint"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/supervisor"
	"github.com/malarun/malarun/internal/testing/fakeclaude"
	"github.com/malarun/malarun/internal/testing/qemutest"
	"github.com/malarun/malarun/internal/testing/testchild"
)

func TestMain(m *testing.M) {
	testchild.MaybeRun()
	os.Exit(m.Run())
}

const transcripts = "../../testdata/transcripts/"

// harness runs the supervisor against a fake claude: fakeclaude's scripted
// child with no process, in synctest's fake time (newHarness), or the fake
// child as a process, through the real spawner (newProcHarness: tests of
// process handling only).
type harness struct {
	t       *testing.T
	cfg     supervisor.Config
	stdout  bytes.Buffer
	logs    lockedBuffer
	signals chan os.Signal
	args    string // where the fake child records argv and stdin
	// observer, when set, receives the run's events.
	observer func(event.Event)
	// records, when set, wraps where the record is saved.
	records func(supervisor.RecordWriter) supervisor.RecordWriter
	// rand, when set, is the jitter's random source.
	rand func() float64
	// fake is the claude of a test in fake time (nil: a process).
	fake *fakeclaude.Claude
	// waits, when set, sees the run's usage-limit waits.
	waits *waits
	// probe, when set, looks at the API's address; unset, the address is
	// reached (fakeProbe). Never netprobe.Probe: it resolves names, and
	// net's resolver state is process-wide: first touched inside a
	// synctest bubble it belongs to that bubble, and a later test's
	// lookup is a fatal "send on synctest channel from outside bubble".
	probe func(context.Context, endpoint.Target) endpoint.Finding
	// traceparent, when set, names each attempt's span (Deps.Traceparent).
	traceparent func(int) (string, string)
}

// One spawner for the whole test process: subreaper status is process-wide.
var spawner = proc.NewSpawner()

// newHarness runs behaviour as fakeclaude's scripted child. Its test runs
// in synctest's bubble: every timer is fake time, so a hang of minutes is
// decided in microseconds, and exactly.
func newHarness(t *testing.T, behaviour string, env ...string) *harness {
	h := baseHarness(t, behaviour, env...)
	h.fake = &fakeclaude.Claude{}
	return h
}

// newProcHarness runs behaviour as the fake child process (this test
// binary), for the tests of process handling: real signals, real trees,
// real pipes and files, in real time.
//
// Its idle_timeout is generous: these tests are about processes, not
// timing, and a -race child on a loaded machine can take seconds to build
// a big line or to start at all (a test that wants a stop sets its own
// limit, after a handshake).
func newProcHarness(t *testing.T, behaviour string, env ...string) *harness {
	qemutest.SkipReexec(t)
	h := baseHarness(t, behaviour, env...)
	h.cfg.IdleTimeout = 2 * time.Minute
	return h
}

func baseHarness(t *testing.T, behaviour string, env ...string) *harness {
	h := &harness{t: t, signals: make(chan os.Signal, 2)}
	h.args = filepath.Join(t.TempDir(), "args.txt")
	h.cfg = supervisor.DefaultConfig()
	h.cfg.IssueID = "issue-1"
	h.cfg.Prompt = []byte("Fix the bug.")
	h.cfg.PromptSource = "test"
	h.cfg.ClaudeBin = os.Args[0]
	h.cfg.StateDir = t.TempDir()
	h.cfg.Env = testchild.Env(behaviour, append(env, testchild.EnvArgsFile+"="+h.args)...)
	h.cfg.IdleTimeout = 5 * time.Second
	h.cfg.KillGrace = 2 * time.Second
	// One attempt unless a test is about retrying: a hang or crash then
	// ends the run with exit 3.
	h.cfg.MaxAttempts = 1
	h.cfg.Backoff = []time.Duration{0}
	return h
}

// lockedBuffer is a log sink a test may read while the run writes to it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// attempts returns what the fake child recorded for each attempt: argv,
// then "--stdin--", then the prompt it read.
func (h *harness) attempts() []string {
	b, _ := os.ReadFile(h.args)
	recs := strings.Split(string(b), testchild.AttemptSeparator)
	return recs[:len(recs)-1]
}

func (h *harness) run() (event.Report, error, time.Duration) {
	start := time.Now()
	log := zerolog.New(&h.logs)
	probe := h.probe
	if probe == nil {
		probe = (&fakeProbe{}).probe
	}
	deps := supervisor.Deps{Log: log, Signals: h.signals, Spawner: spawner, Observer: h.observer, Records: h.records, Rand: h.rand, Probe: probe,
		Traceparent: h.traceparent}
	if h.waits != nil {
		deps.Observer = func(e event.Event) {
			h.waits.observe(e)
			if h.observer != nil {
				h.observer(e)
			}
		}
	}
	if h.fake != nil {
		deps.Claude = h.fake
	}
	rep, err := supervisor.Run(context.Background(), h.cfg, deps)
	if err == nil {
		h.stdout.WriteString(rep.Result + "\n") // what the command line prints
	}
	return rep, err, time.Since(start)
}

func wantKind(t *testing.T, err error, kind error, detail string) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("err = %v, want %v", err, kind)
	}
	if !strings.Contains(err.Error(), detail) {
		t.Errorf("error %q does not mention %q", err, detail)
	}
}

// assertGone proves each pid is gone: not even a zombie is left.
func assertGone(t *testing.T, pids ...int) {
	t.Helper()
	for _, pid := range pids {
		if err := unix.Kill(pid, 0); !errors.Is(err, unix.ESRCH) {
			unix.Kill(pid, unix.SIGKILL)
			t.Errorf("pid %d still exists after the run", pid)
		}
	}
}

var pidRe = regexp.MustCompile(`"pid":(\d+),"parent":(\d+)`)

// treePids reads the fake child's own pid and its grandchild's from the transcript.
func treePids(t *testing.T, runDir string) []int {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(runDir, "attempt-1.jsonl"))
	m := pidRe.FindSubmatch(b)
	if m == nil {
		t.Fatalf("no grandchild line in the transcript: %s", b)
	}
	a, _ := strconv.Atoi(string(m[1]))
	p, _ := strconv.Atoi(string(m[2]))
	return []int{p, a}
}

func TestSuccessPrintsResultAndPassesProtocolFlags(t *testing.T) {
	h := newProcHarness(t, testchild.Replay, testchild.EnvTranscript+"="+transcripts+"text-success.jsonl")
	h.cfg.ExtraArgs = []string{"--model", "sonnet"}
	rep, err, _ := h.run()
	if err != nil {
		t.Fatalf("run: %v\nlogs:\n%s", err, h.logs.String())
	}
	if h.stdout.String() != "Hello from mock\n" {
		t.Errorf("stdout %q", h.stdout.String())
	}
	// The session is the one malarun gave the CLI, whatever the stream names
	// (the recording's own id differs here): a stream's id never becomes an argument.
	if _, id := sessionFlag(t, h.attempts()[0]); rep.Attempts != 1 || rep.CostUSD != 0.750625 || rep.SessionID != id ||
		rep.ResultCut || rep.ResultLine.Path != filepath.Join(rep.RunDir, "attempt-1.jsonl") || rep.ResultLine.Bytes == 0 {
		t.Errorf("report %+v, want session %s", rep, id)
	}
	if !strings.Contains(h.logs.String(), `"claude_session":"4ff18c41-0db8-4141-8ca3-59af0fe7a255","message":"claude named another session`) {
		t.Errorf("no warning about the stream's other session id:\n%s", h.logs.String())
	}
	args := []byte(h.attempts()[0])
	want := regexp.MustCompile(`^-p\n--output-format\nstream-json\n--verbose\n--include-partial-messages\n--include-hook-events\n--session-id\n[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\n--model\nsonnet\n--stdin--\nFix the bug\.$`)
	if !want.Match(args) {
		t.Errorf("child got argv and stdin:\n%s", args)
	}
	for _, f := range []string{"prompt.md", "attempt-1.jsonl", "attempt-1.stderr"} {
		st, err := os.Stat(filepath.Join(rep.RunDir, f))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v", f, err, st)
		}
	}
	if rel, _ := filepath.Rel(h.cfg.StateDir, rep.RunDir); !strings.HasPrefix(rel, "issue-1/runs/") {
		t.Errorf("run dir %s not under <state>/issue-1/runs", rep.RunDir)
	}
}

func TestPartialMessagesOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.Replay)
		h.cfg.PartialMessages = false
		if _, err, _ := h.run(); err != nil {
			t.Fatal(err)
		}
		if args, _ := os.ReadFile(h.args); bytes.Contains(args, []byte("--include-partial-messages")) {
			t.Errorf("flag passed with partial_messages off:\n%s", args)
		}
	})
}

func TestEachRunGetsANewFolder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.Replay)
		a, err1, _ := h.run()
		b, err2, _ := h.run()
		if err1 != nil || err2 != nil || a.RunDir == b.RunDir {
			t.Errorf("runs %q and %q (%v, %v)", a.RunDir, b.RunDir, err1, err2)
		}
	})
}

func TestHangIsKilledAndReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.Hang, testchild.EnvTranscript+"="+transcripts+"hang-after-init.jsonl")
		h.cfg.IdleTimeout = 300 * time.Millisecond
		_, err, took := h.run()
		wantKind(t, err, outcome.RetriesExhausted, "no output for 300ms while waiting for the API's reply (idle_timeout)")
		// In fake time the hang is found exactly when the silence reaches
		// idle_timeout, and the scripted child ends at its SIGTERM.
		if took != h.cfg.IdleTimeout {
			t.Errorf("took %v, want exactly idle_timeout %v", took, h.cfg.IdleTimeout)
		}
	})
}

func TestHangWithTermIgnoringTreeIsGone(t *testing.T) {
	// The child's tool call starts tool_timeout's timer once its tree is
	// whole (the handshake); idle_timeout would count the start of two
	// processes, which can take longer than any short timeout under load.
	h := newProcHarness(t, testchild.Grandchild)
	h.cfg.IdleTimeout = time.Hour
	h.cfg.ToolTimeout = 300 * time.Millisecond
	h.cfg.KillGrace = 300 * time.Millisecond
	rep, err, took := h.run()
	wantKind(t, err, outcome.RetriesExhausted, "tool_timeout")
	pids := treePids(t, rep.RunDir)
	assertGone(t, pids...)
	if limit := h.cfg.ToolTimeout + h.cfg.KillGrace + 10*time.Second; took > limit {
		t.Errorf("took %v, more than %v", took, limit)
	}
}

func TestSilentToolShorterThanToolTimeoutIsNotKilled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.SilentTool, testchild.EnvSilence+"=900ms")
		h.cfg.IdleTimeout = 150 * time.Millisecond
		h.cfg.ToolTimeout = 20 * time.Second
		if _, err, _ := h.run(); err != nil {
			t.Fatalf("run: %v", err)
		}
		if h.stdout.String() != "All done.\n" {
			t.Errorf("stdout %q", h.stdout.String())
		}
	})
}

func TestSilentToolLongerThanToolTimeoutIsAHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.SilentTool, testchild.EnvSilence+"=1h")
		h.cfg.IdleTimeout = 10 * time.Second
		h.cfg.ToolTimeout = 200 * time.Millisecond
		_, err, took := h.run()
		wantKind(t, err, outcome.RetriesExhausted, "while Bash ran (tool_timeout)")
		if took != h.cfg.ToolTimeout {
			t.Errorf("took %v, want exactly tool_timeout %v", took, h.cfg.ToolTimeout)
		}
	})
}

func TestErrorResultExitsWithItsText(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.Replay, testchild.EnvTranscript+"="+transcripts+"prompt-too-long.jsonl", testchild.EnvExit+"=1")
		_, err, _ := h.run()
		wantKind(t, err, outcome.ErrorResult, "error result (API status 400, terminal reason prompt_too_long): Prompt is too long")
		if h.stdout.Len() != 0 {
			t.Errorf("stdout %q on failure", h.stdout.String())
		}
	})
}

func TestAuthRetryStopsEarly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.Hang, testchild.EnvTranscript+"="+transcripts+"auth-failed-api-retry.jsonl", testchild.EnvLines+"=2")
		h.cfg.IdleTimeout = time.Hour
		_, err, took := h.run()
		wantKind(t, err, outcome.Auth, "401 authentication_failed")
		if took != 0 {
			t.Errorf("took %v: the first 401 retry stops the attempt at once", took)
		}
	})
}

func TestExitBeforeInitReportsStderr(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.ExitEarly, testchild.EnvExit+"=1")
		_, err, _ := h.run()
		wantKind(t, err, outcome.ErrorResult, "exited with code 1 before its first line; stderr: error: unknown option '--bogus'")
	})
}

// A CLI SIGKILLed from outside before its first line (the OOM killer) is a
// crash: nothing ran, so the run starts again in a new session and succeeds.
func TestKilledBeforeFirstLineStartsAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.KilledFirst)
		h.cfg.MaxAttempts = 3
		rep, err, _ := h.run()
		if err != nil || rep.Attempts != 2 {
			t.Fatalf("run: %v, %d attempts\n%s", err, rep.Attempts, h.logs.String())
		}
		if got := rep.History[0]; got.Outcome != "crash" || !strings.Contains(got.Reason, "killed by signal 9 (killed) before its first line (a signal malarun did not send)") {
			t.Errorf("first attempt %s: %s", got.Outcome, got.Reason)
		}
		first, _ := sessionFlag(t, h.attempts()[0])
		second, _ := sessionFlag(t, h.attempts()[1])
		if first != "--session-id" || second != "--session-id" || rep.History[0].Session == rep.History[1].Session {
			t.Errorf("the second attempt should be a new session: %s %s, sessions %s %s", first, second, rep.History[0].Session, rep.History[1].Session)
		}
	})
}

func TestCrashWithCutShortLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.CrashMidLine, testchild.EnvLines+"=2")
		_, err, _ := h.run()
		wantKind(t, err, outcome.RetriesExhausted, "killed by signal 9 (killed) without a result line, its last line cut short")
	})
}

func TestGarbageLinesAreSkipped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.Garbage)
		if _, err, _ := h.run(); err != nil {
			t.Fatalf("run: %v", err)
		}
		if n := strings.Count(h.logs.String(), "undecodable line"); n != 2 {
			t.Errorf("%d undecodable lines logged, want 2:\n%s", n, h.logs.String())
		}
	})
}

func TestLingeringAfterResultIsKilledAndResultKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.Linger)
		h.cfg.ResultExitTimeout = 200 * time.Millisecond
		h.cfg.KillGrace = 200 * time.Millisecond
		if _, err, _ := h.run(); err != nil {
			t.Fatalf("run: %v", err)
		}
		if h.stdout.String() != "All done.\n" || !strings.Contains(h.logs.String(), "still alive after its result line") {
			t.Errorf("stdout %q, logs:\n%s", h.stdout.String(), h.logs.String())
		}
	})
}

func TestMissingBinary(t *testing.T) {
	h := newProcHarness(t, testchild.Replay)
	h.cfg.ClaudeBin = "/nonexistent/claude"
	_, err, _ := h.run()
	wantKind(t, err, outcome.StartFailed, `claude_bin "/nonexistent/claude"`)
}

func TestSessionTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.Hang)
		h.cfg.IdleTimeout = time.Hour
		h.cfg.SessionTimeout = 300 * time.Millisecond
		_, err, took := h.run()
		wantKind(t, err, outcome.SessionTimeout, "session_timeout")
		if took != h.cfg.SessionTimeout {
			t.Errorf("took %v, want exactly session_timeout %v", took, h.cfg.SessionTimeout)
		}
	})
}

// The real CLI exits as soon as a write to a pipe would block, losing the
// rest (docs/design.md §F13); stdout is a file, so the result always arrives.
func TestNonBlockingWriterResultSeen20Of20(t *testing.T) {
	runs := 20
	if testing.Short() {
		runs = 2 // make check: the 20 runs take half a minute under -race; make test runs them
	}
	for i := range runs {
		h := newProcHarness(t, testchild.NonBlocking)
		if _, err, _ := h.run(); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if h.stdout.String() != "All done.\n" {
			t.Fatalf("run %d: stdout %q", i, h.stdout.String())
		}
	}
}

func TestHundredMegabyteLine(t *testing.T) {
	size := 100 << 20
	if testing.Short() {
		size = 16 << 20 // make check: still 16 times the decoder's buffer and the result cap
	}
	h := newProcHarness(t, testchild.BigLine, fmt.Sprintf("%s=%d", testchild.EnvSize, size))
	if _, err, _ := h.run(); err != nil {
		t.Fatalf("run: %v", err)
	}
	if h.stdout.String() != "All done.\n" {
		t.Errorf("stdout %q", h.stdout.String())
	}
}

// A result longer than the decoder keeps: the report has its beginning,
// says it was cut, and locates its line in the transcript, from which the
// command line copies the whole text.
func TestCutResultIsLocated(t *testing.T) {
	const size = 3 << 20
	h := newProcHarness(t, testchild.BigResult, fmt.Sprintf("%s=%d", testchild.EnvSize, size))
	rep, err, _ := h.run()
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	var want strings.Builder
	testchild.BigResultText(&want, size)
	line := rep.ResultLine
	if !rep.ResultCut || len(rep.Result) > stream.MaxResultBytes || !strings.HasPrefix(want.String(), rep.Result) ||
		line.Path != filepath.Join(rep.RunDir, "attempt-1.jsonl") || line.Offset != int64(len(testchild.InitLine)+len(testchild.TextLine)+2) {
		t.Fatalf("report: result of %d bytes (cut %v), line %+v", len(rep.Result), rep.ResultCut, line)
	}
	rt, err := transcript.ReadResult(line, rep.Result)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	var got strings.Builder
	if _, err := rt.WriteTo(&got); err != nil || got.String() != want.String() {
		t.Errorf("copied %d bytes (%v), want the %d of the text", got.Len(), err, want.Len())
	}
}

func TestSignalStopsRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			h := newHarness(t, testchild.Hang)
			h.cfg.IdleTimeout = time.Hour
			h.signals <- sig
			_, err, _ := h.run()
			var re *supervisor.RunError
			if !errors.As(err, &re) || !errors.Is(err, outcome.Interrupted) || re.Signal != sig {
				t.Errorf("%v: err = %v", sig, err)
			}
		}
	})
}

func TestSecondSignalKillsAtOnce(t *testing.T) {
	h := newProcHarness(t, testchild.Grandchild)
	h.cfg.IdleTimeout = time.Hour
	h.cfg.ShutdownGrace = time.Hour
	h.cfg.KillGrace = time.Hour
	go func() {
		// Signal only once the tree ignores SIGTERM, or the test proves nothing.
		waitForTranscriptLine(h.t, h.cfg.StateDir, `"subtype":"fake_grandchild"`)
		h.signals <- syscall.SIGINT
		h.signals <- syscall.SIGINT
	}()
	rep, err, took := h.run()
	wantKind(t, err, outcome.Interrupted, "")
	assertGone(t, treePids(t, rep.RunDir)...)
	if took > 10*time.Second {
		t.Errorf("took %v", took)
	}
}

// waitForTranscriptLine waits for the first attempt's transcript to hold a
// line containing s: the handshake that says the child is ready.
func waitForTranscriptLine(t *testing.T, stateDir, s string) {
	pattern := filepath.Join(stateDir, "*", "runs", "*", "attempt-1.jsonl")
	if !testchild.WaitUntil(10*time.Second, nil, func() bool { return testchild.FileHolds(pattern, s) }) {
		t.Errorf("no transcript line with %q within 10s", s)
	}
}
