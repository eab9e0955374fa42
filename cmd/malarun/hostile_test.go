package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/malarun/malarun/internal/journal"
	iproc "github.com/malarun/malarun/internal/proc"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// Every signal that would end malarun (a closed terminal's SIGHUP, Ctrl-\'s
// SIGQUIT, SIGINT, SIGTERM) is a shutdown: the tree is stopped, the record
// says interrupted with no reclaim counted, the exit code is 128 + the
// signal, and the next invocation resumes the session.
func TestEveryShutdownSignalStopsTheRunAndItResumes(t *testing.T) {
	t.Parallel() // a malarun process of its own: its own folders, nothing shared
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			p := scenarioHangResumed(t).proc(t, "issue-sig")
			p.start(nil, nil)
			p.waitTranscript(1, `"name":"Bash"`)
			claude := p.claudePid()
			if !slices.Contains(leftOf(p), claude) {
				t.Fatalf("leftOf does not find claude (pid %d) while it runs: %v", claude, leftOf(p))
			}
			session := p.recordOnce("the session", hasSession).SessionID
			p.cmd.Process.Signal(sig)
			if code, want := p.wait(), 128+int(sig); code != want {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, want, p.stderr.String())
			}
			if strings.Contains(p.stderr.String(), "goroutine ") {
				t.Errorf("a goroutine dump on stderr:\n%s", p.stderr.String())
			}
			assertNothingLeft(t, p)
			rec := p.record()
			if rec.Status != record.Interrupted || rec.Reclaims != 0 || rec.ExitCode != 128+int(sig) || len(rec.Tree) != 0 {
				t.Errorf("record: status %s, reclaims %d, exit %d, tree %v", rec.Status, rec.Reclaims, rec.ExitCode, rec.Tree)
			}
			next := p.again()
			if code := next.run(); code != 0 {
				t.Fatalf("next invocation: exit %d; stderr:\n%s", code, next.stderr.String())
			}
			if rec := next.record(); rec.Status != record.Succeeded || rec.Reclaims != 0 || rec.SessionID != session {
				t.Errorf("next invocation's record: status %s, reclaims %d, session %s (want %s)", rec.Status, rec.Reclaims, rec.SessionID, session)
			}
		})
	}
}

// A terminal that closes under malarun: the kernel sends SIGHUP, and every
// later write to the terminal fails with EIO. The run stops as for any
// shutdown signal, the record notes that stderr failed, and nothing of the
// tree is left.
func TestClosedTerminalIsAShutdown(t *testing.T) {
	t.Parallel() // a malarun process of its own: its own folders, nothing shared
	p := scenarioHangResumed(t).proc(t, "issue-hup")
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = tty, tty, tty
	// malarun leads the terminal's session, as a login shell's job would be
	// the foreground: closing the terminal hangs it up.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	drained := make(chan struct{})
	go func() { // a terminal that is not read would block its writer
		defer close(drained)
		buf := make([]byte, 4096)
		for {
			if _, err := ptmx.Read(buf); err != nil {
				return
			}
		}
	}()
	p.waitTranscript(1, `"name":"Bash"`)
	claude := p.claudePid()
	ptmx.Close()
	<-drained
	if code := p.wait(); code != 129 {
		t.Fatalf("exit %d, want 129 (SIGHUP)", code)
	}
	if iproc.Alive(claude, 0) {
		t.Errorf("claude (pid %d) outlived malarun", claude)
	}
	rec := p.record()
	if rec.Status != record.Interrupted || rec.Reclaims != 0 {
		t.Errorf("record: status %s, reclaims %d", rec.Status, rec.Reclaims)
	}
	if len(rec.OutputFailures) != 1 || rec.OutputFailures[0].Output != "stderr" || !strings.Contains(rec.OutputFailures[0].Error, "input/output error") {
		t.Errorf("output failures %+v, want stderr's EIO", rec.OutputFailures)
	}
}

// A log reader that goes away mid-run (`malarun ... 2>&1 | head`): the next
// write to stderr would have killed malarun with SIGPIPE, leaving claude
// running and the record processing. Now the run goes on to its end, and
// the record and the report note when stderr was lost.
func TestStderrReaderGoneMidRun(t *testing.T) {
	t.Parallel() // a malarun process of its own: its own folders, nothing shared
	p, open := gatedRun(t, "issue-pipe", "--json")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p.start(nil, w)
	w.Close()
	readUntil(r, `"message":"attempt started"`)
	r.Close()
	open()
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	var report struct {
		Outcome        string                           `json:"outcome"`
		Result         string                           `json:"result"`
		OutputFailures []struct{ Output, Error string } `json:"output_failures"`
	}
	if err := json.Unmarshal(p.stdout.Bytes(), &report); err != nil {
		t.Fatalf("report: %v\n%s", err, p.stdout.String())
	}
	if report.Outcome != "success" || report.Result != "All done." || len(report.OutputFailures) != 1 ||
		report.OutputFailures[0].Output != "stderr" || !strings.Contains(report.OutputFailures[0].Error, "broken pipe") {
		t.Errorf("report %+v", report)
	}
	rec := p.record()
	if rec.Status != record.Succeeded || len(rec.OutputFailures) != 1 || !strings.Contains(rec.OutputFailures[0].Error, "broken pipe") {
		t.Errorf("record: status %s, output failures %+v", rec.Status, rec.OutputFailures)
	}
}

// A log reader that stops reading (a full pipe): without the sink the next
// log line would block malarun for ever, hang detection included. The run
// ends; what did not fit is dropped, and the record says so.
func TestStalledStderrReaderNeverStopsTheRun(t *testing.T) {
	t.Parallel() // a malarun process of its own: its own folders, nothing shared
	// Enough lines that the debug log outgrows the pipe and the sink.
	lines := []string{testchild.InitLine}
	for range 30000 {
		lines = append(lines, `{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"working"}},"session_id":"`+testchild.SessionID+`"}`)
	}
	lines = append(lines, testchild.TextLine, testchild.Result)
	p := newProc(t, "issue-stall", testchild.Replay, []string{testchild.EnvTranscript + "=" + writeTranscript(t, lines...)}, "--log-level", "debug")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close() // open, never read
	p.start(nil, w)
	w.Close()
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	if p.stdout.String() != "All done.\n" {
		t.Errorf("stdout %q", p.stdout.String())
	}
	rec := p.record()
	if rec.Status != record.Succeeded || len(rec.OutputFailures) != 1 || !strings.Contains(rec.OutputFailures[0].Error, "fell behind") {
		t.Errorf("record: status %s, output failures %+v", rec.Status, rec.OutputFailures)
	}
}

// The reader of an --events FIFO that goes away: the events from then on
// are lost, noted in the record, and the run goes on.
func TestEventsReaderGoneMidRun(t *testing.T) {
	t.Parallel() // a malarun process of its own: its own folders, nothing shared
	fifo := filepath.Join(t.TempDir(), "events")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	p, open := gatedRun(t, "issue-events", "--events", fifo)
	p.start(nil, nil)
	f, err := os.Open(fifo) // the reader malarun waits for
	if err != nil {
		t.Fatal(err)
	}
	if got := readUntil(f, `"event":"attempt_started"`); !strings.Contains(got, `"event":"run_started"`) {
		t.Fatalf("the events began with %q", got)
	}
	f.Close()
	open()
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, p.stderr.String())
	}
	rec := p.record()
	if rec.Status != record.Succeeded || len(rec.OutputFailures) != 1 || rec.OutputFailures[0].Output != "events" ||
		!strings.Contains(rec.OutputFailures[0].Error, "broken pipe") {
		t.Errorf("record: status %s, output failures %+v", rec.Status, rec.OutputFailures)
	}
}

// --events naming a FIFO no one reads: opening it waits for a reader, and a
// signal meanwhile ends malarun at once, with nothing started.
func TestSignalWhileEventsWaitsForAReader(t *testing.T) {
	t.Parallel() // a malarun process of its own: its own folders, nothing shared
	fifo := filepath.Join(t.TempDir(), "events")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	args := filepath.Join(t.TempDir(), "args")
	p := newProc(t, "issue-fifo", testchild.Replay, []string{testchild.EnvArgsFile + "=" + args}, "--events", fifo)
	stderr := filepath.Join(t.TempDir(), "stderr")
	f, err := os.Create(stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p.start(nil, f)
	if !testchild.WaitUntil(exitLimit, nil, func() bool { return testchild.FileHolds(stderr, "waiting for its reader") }) {
		t.Fatal("malarun never said it waits for the FIFO's reader")
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(); code != 143 {
		t.Fatalf("exit %d, want 143", code)
	}
	if b, _ := os.ReadFile(stderr); !strings.Contains(string(b), "nothing was started") {
		t.Errorf("stderr:\n%s", b)
	}
	if _, err := os.Stat(args); err == nil {
		t.Error("claude was started")
	}
	if _, ok := journal.Read(p.stateDir, p.issue); ok {
		t.Error("a record was written")
	}
}

// --prompt naming a FIFO (or /dev/stdin, or <(cmd)) that has no writer yet:
// its open blocks, and a signal meanwhile ends malarun at once.
func TestSignalWhileThePromptBlocks(t *testing.T) {
	t.Parallel() // a malarun process of its own: its own folders, nothing shared
	fifo := filepath.Join(t.TempDir(), "prompt")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	p := newProc(t, "issue-prompt", testchild.Replay, nil)
	p.cmd.Args[3] = fifo // --prompt FIFO
	p.start(nil, nil)
	waitBlockedOnFIFO(t, p.cmd.Process.Pid)
	p.cmd.Process.Signal(syscall.SIGINT)
	if code := p.wait(); code != 130 {
		t.Fatalf("exit %d, want 130", code)
	}
	if !strings.Contains(p.stderr.String(), "while reading the prompt from "+fifo+"; nothing was started") {
		t.Errorf("stderr:\n%s", p.stderr.String())
	}
}

func TestPromptIsCapped(t *testing.T) {
	c := newCLI(t)
	c.run("issue-1", "--prompt", "/dev/zero").wantUsage(t, "the prompt from /dev/zero is larger than 32 MiB")
}

// SIGPIPE is caught by malarun, never ignored: an ignored signal passes
// through exec, and claude and every tool it runs would then get EPIPE
// where a pipeline (`yes | head`) expects the signal.
func TestToolsKeepTheDefaultSIGPIPE(t *testing.T) {
	t.Parallel() // a malarun process of its own: its own folders, nothing shared
	p := newProc(t, "issue-sigpipe", testchild.Hang, []string{testchild.EnvLines + "=1"})
	p.start(nil, nil)
	claude := p.claudePid()
	if sigMask(t, p.cmd.Process.Pid, "SigCgt")&sigBit(syscall.SIGPIPE) == 0 {
		t.Error("malarun does not catch SIGPIPE: a vanished log reader would kill it")
	}
	for name, mask := range map[string]string{"ignores": "SigIgn", "blocks": "SigBlk"} {
		// A mask inherited through exec stays; the Go runtime of the fake
		// claude blocks every signal for an instant while it starts a
		// thread, which a read can catch, and under load the thread can be
		// descheduled in that instant (20 reads in a row all caught it at a
		// load of 8): SIGPIPE must be off at some read before the limit.
		if !testchild.WaitUntil(exitLimit, nil, func() bool { return sigMask(t, claude, mask)&sigBit(syscall.SIGPIPE) == 0 }) {
			t.Errorf("claude %s SIGPIPE (for %v)", name, exitLimit)
		}
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(); code != 143 {
		t.Fatalf("exit %d", code)
	}
}

// The issue's whole folder removed mid-run (a tidied state directory): the
// folder, lock and record are made again at the next step, and the run
// folder, with the run's prompt, before the next attempt: the run goes on
// and resumes its session; only the earlier transcripts are lost.
func TestRemovedIssueFolderMidRun(t *testing.T) {
	t.Parallel() // a malarun process of its own: its own folders, nothing shared
	p := scenarioHangResumed(t).proc(t, "issue-tidied")
	p.start(nil, nil)
	p.waitTranscript(1, `"name":"Bash"`)
	session := p.recordOnce("the session", hasSession).SessionID
	// malarun may write into it meanwhile: remove until it is gone.
	if !testchild.WaitUntil(exitLimit, nil, func() bool { return os.RemoveAll(filepath.Join(p.stateDir, p.issue)) == nil }) {
		t.Fatal("the issue folder could not be removed")
	}
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), "the run folder was removed while the run went on") {
		t.Errorf("no warning about the removed run folder:\n%s", p.stderr.String())
	}
	assertNothingLeft(t, p)
	rec := p.record()
	if rec.Status != record.Succeeded || rec.SessionID != session {
		t.Errorf("record: status %s, session %s (want %s)", rec.Status, rec.SessionID, session)
	}
	for _, f := range []string{journal.LockFile, filepath.Join("runs", rec.RunID, "prompt.md"), filepath.Join("runs", rec.RunID, "attempt-2.jsonl")} {
		if _, err := os.Stat(filepath.Join(p.stateDir, p.issue, f)); err != nil {
			t.Errorf("not made again: %v", err)
		}
	}
}

// `nohup malarun ...` (or a shell's background job, which ignores SIGINT):
// a signal ignored when malarun starts stays ignored, for malarun and for
// claude. The terminal closing then leaves the run alone. (SIGQUIT cannot
// be kept so: Go's runtime takes it over in every Go program.)
func TestIgnoredSignalsStayIgnored(t *testing.T) {
	t.Parallel() // a malarun process of its own: its own folders, nothing shared
	p, open := gatedRun(t, "issue-nohup")
	// As nohup does: ignore, then exec.
	p.cmd.Args = append([]string{"/bin/sh", "-c", `trap "" HUP INT; exec "$0" "$@"`}, p.cmd.Args...)
	p.cmd.Path = "/bin/sh"
	p.start(nil, nil)
	claude := p.claudePid()
	for _, pid := range []int{p.cmd.Process.Pid, claude} {
		if ign := sigMask(t, pid, "SigIgn"); ign&sigBit(syscall.SIGHUP) == 0 || ign&sigBit(syscall.SIGINT) == 0 {
			t.Errorf("pid %d no longer ignores SIGHUP and SIGINT: SigIgn %x", pid, ign)
		}
	}
	p.cmd.Process.Signal(syscall.SIGHUP)
	p.cmd.Process.Signal(syscall.SIGINT)
	open()
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d, want 0: the ignored signals stopped the run", code)
	}
}

// A shell's $PWD spelled with a trailing slash (os.Getwd returns it as it
// is): the run records the clean path, and it reads back.
func TestTrailingSlashInPWD(t *testing.T) {
	t.Parallel() // a malarun process of its own: its own folders, nothing shared
	p := scenarioSuccess(t).proc(t, "issue-pwd")
	p.cmd.Env = append(p.cmd.Env, "PWD="+p.cmd.Dir+"/")
	if code := p.run(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
	if rec := p.record(); rec.Cwd != p.cmd.Dir {
		t.Errorf("cwd recorded as %q, want %q", rec.Cwd, p.cmd.Dir)
	}
}

// The lock file removed, and another malarun that cannot see this one (on
// another host) takes the issue over: this one stops its claude within
// the lock's check interval and exits 7, leaving the record to the other.
func TestTakenOverRunStops(t *testing.T) {
	t.Parallel() // a malarun process of its own: its own folders, nothing shared
	// A tool that runs for a minute: only the loss of the issue stops it.
	p := scenarioHangResumed(t).proc(t, "issue-taken", "--tool-timeout", "1m")
	p.start(nil, nil)
	p.waitTranscript(1, `"name":"Bash"`)
	claude := p.claudePid()
	// The handshake is malarun's record of the running call, not the
	// transcript: malarun saves its record when it reads the line, and a
	// save after the take-over's would write its own owner back.
	if !testchild.WaitUntil(exitLimit, nil, func() bool {
		e, ok := journal.Read(p.stateDir, p.issue)
		return ok && e.Err == nil && len(e.Record.Running) > 0
	}) {
		t.Fatal("malarun never recorded the running Bash call")
	}
	if err := os.Remove(filepath.Join(p.stateDir, p.issue, journal.LockFile)); err != nil {
		t.Fatal(err)
	}
	other, err := journal.Acquire(p.stateDir, p.issue, "pid 7 on elsewhere")
	if err != nil {
		t.Fatalf("the other malarun could not take the lock: %v", err)
	}
	defer other.Release()
	rec := p.record()
	rec.Owner = record.Owner{Pid: 7, Host: "elsewhere", StartedAt: time.Now().UTC()}
	if err := other.Save(rec); err != nil {
		t.Fatal(err)
	}
	taken := time.Now()
	if code := p.wait(); code != 7 {
		t.Fatalf("exit %d, want 7; stderr:\n%s", code, p.stderr.String())
	}
	if took := time.Since(taken); took > 30*time.Second {
		t.Errorf("stopped %v after the take-over", took)
	}
	if !strings.Contains(p.stderr.String(), "another malarun took the issue over; stopping this one's claude") {
		t.Errorf("the attempt was not stopped for the take-over:\n%s", p.stderr.String())
	}
	if iproc.Alive(claude, 0) {
		t.Error("claude still runs beside the other malarun's")
	}
	assertNothingLeft(t, p)
	if got := p.record(); got.Owner.Host != "elsewhere" || got.Status != record.Processing {
		t.Errorf("the record was written over: owner %+v, status %s", got.Owner, got.Status)
	}
}
