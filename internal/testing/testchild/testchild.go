// Package testchild is the fake claude CLI used by malarun's unit tests. A
// test binary re-executes itself (as os/exec's own tests do) with
// MALARUN_FAKE_CHILD naming a behaviour; its TestMain calls MaybeRun first.
// Behaviours cover what the real CLI does when it fails: hang, go silent in
// a tool, ignore SIGTERM, leave setsid grandchildren, print huge or broken
// lines, exit early, linger after its result, lose output to a full pipe.
//
// The benchmark harness (tools/bench) runs the same fake child: its
// measured behaviours (measured.go) report their CPU and timestamps.
package testchild

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// Environment variables that steer the fake child.
const (
	EnvBehaviour  = "MALARUN_FAKE_CHILD"      // which behaviour to run
	EnvTranscript = "MALARUN_FAKE_TRANSCRIPT" // a .jsonl file to replay
	EnvLines      = "MALARUN_FAKE_LINES"      // how many lines to print before hanging
	EnvExit       = "MALARUN_FAKE_EXIT"       // exit code at the end
	EnvSilence    = "MALARUN_FAKE_SILENCE"    // how long a silent tool runs (a duration)
	EnvArgsFile   = "MALARUN_FAKE_ARGS_FILE"  // where to write argv and the stdin it read
	EnvSize       = "MALARUN_FAKE_SIZE"       // bytes in a big line
	// EnvTermLog is the file where CountTerm and its grandchildren append a
	// TermLine for every SIGTERM they receive, as it arrives, so the count
	// survives the SIGKILL that ends them.
	EnvTermLog = "MALARUN_FAKE_TERM_LOG"
	// EnvTermLate makes CountTerm start one more counting setsid grandchild
	// when its first SIGTERM arrives: a process the stop must find later.
	EnvTermLate = "MALARUN_FAKE_TERM_LATE"
	envTermRole = "MALARUN_FAKE_TERM_ROLE" // which TermRole a counter logs as
)

// Behaviours.
const (
	Replay       = "replay"        // print the transcript, exit EnvExit
	Hang         = "hang"          // print EnvLines lines of the transcript, then block
	SilentTool   = "silent-tool"   // a tool_use, EnvSilence of silence, the tool_result, a result
	KilledFirst  = "killed-first"  // the first attempt (none in EnvArgsFile yet) dies by SIGKILL before any line; later ones succeed
	StopHook     = "stop-hook"     // a reply, a Stop hook silent for EnvSilence, a result; --resume: a success
	IgnoreTerm   = "ignore-term"   // ignore SIGTERM, print the init line, block
	Grandchild   = "grandchild"    // ignore SIGTERM, start a setsid grandchild that ignores it too, print init, GrandchildLine and a tool call (ToolLine), block
	Sleeper      = "sleeper"       // the grandchild: ignore SIGTERM, say "ready", block
	BigLine      = "big-line"      // init, one assistant line of EnvSize bytes, a result
	Garbage      = "garbage"       // init, lines that are not JSON, a result
	ExitEarly    = "exit-early"    // an error on stderr, exit EnvExit before any line
	Linger       = "linger"        // print the transcript, then stay alive
	NonBlocking  = "nonblocking"   // O_NONBLOCK stdout, a big line then a result, exit on EAGAIN
	CrashMidLine = "crash-midline" // print EnvLines lines, half a line, then die
	// ResumeAware acts on the session flags, like the real CLI: a fresh
	// start (--session-id) prints EnvLines lines of the transcript and
	// hangs; --resume prints EnvResumed (a transcript; default: a success);
	// a fresh start whose prompt begins a continuation (ContinuationMarker)
	// prints EnvContinued (default: a success).
	ResumeAware = "resume-aware"
	// CountTerm counts the SIGTERMs it receives (and otherwise ignores
	// them) in EnvTermLog, starts a setsid grandchild that counts its own,
	// prints the init line and GrandchildLine, and blocks.
	CountTerm = "count-term"
	// Orphaner leaves an orphan that dies young: it starts a process that
	// starts a grandchild and exits; the grandchild, re-parented to the
	// nearest subreaper, exits as soon as its parent is gone. Orphaner then
	// prints OrphanLine and blocks, so the orphan's zombie appears while the
	// child still runs.
	Orphaner = "orphaner"

	termCounter  = "term-counter"  // a counting grandchild: count SIGTERMs, say "ready", block
	orphanParent = "orphan-parent" // start orphanChild, print its pid and start time, exit
	orphanChild  = "orphan-child"  // exit once stdin (held by orphanParent) reaches EOF
	// UsageLimited is the real CLI (2.1.330) refused by a subscription's
	// usage limit (usagelimited.go).
	UsageLimited = "usage-limited"
	// LastWords prints EnvLines lines of the transcript and waits; on
	// SIGTERM it prints EnvLastWords (a transcript) and exits 143: a CLI
	// that goes on for a moment after malarun stopped it. --resume: a
	// success (or EnvResumed).
	LastWords = "last-words"
	// Gated prints EnvLines lines of the transcript, waits until the file
	// EnvGate exists, then prints the rest and exits EnvExit: a test
	// decides when the run goes on (after it broke an output, say).
	Gated = "gated"
)

// Roles in TermLine: the child itself, the grandchild it starts first, and
// the one it starts on its first SIGTERM (EnvTermLate).
const (
	RoleChild      = "child"
	RoleGrandchild = "grandchild"
	RoleLate       = "late"
)

// TermLine is what a counting process appends to EnvTermLog for each
// SIGTERM it receives.
func TermLine(role string, pid int) string { return fmt.Sprintf("%s %d term\n", role, pid) }

// OrphanLine is printed by Orphaner once its orphan has been left behind.
func OrphanLine(pid int, startTime uint64) string {
	return fmt.Sprintf(`{"type":"system","subtype":"fake_orphan","pid":%d,"start":%d,"session_id":"%s"}`, pid, startTime, SessionID)
}

// ContinuationMarker starts malarun's built-in continuation and fallback prompts.
const ContinuationMarker = "You are continuing work on issue"

// EnvContinued is the transcript a ResumeAware child replays in a continuation.
const EnvContinued = "MALARUN_FAKE_CONTINUED"

// EnvGrandchild makes a ResumeAware child, on a fresh start, also start a
// setsid grandchild that ignores SIGTERM (as a Bash tool's background job
// would) and print its GrandchildLine.
const EnvGrandchild = "MALARUN_FAKE_GRANDCHILD"

// EnvBareGrandchild makes every setsid grandchild start with an empty
// environment, as `setsid env -i cmd &` does: it carries no marker of the
// run (docs/design.md §D28), only its behaviour and this entry, by which a
// test finds it.
const EnvBareGrandchild = "MALARUN_FAKE_BARE_GRANDCHILD"

// EnvResumed is the transcript a ResumeAware child replays when resumed.
const EnvResumed = "MALARUN_FAKE_RESUMED"

// EnvLastWords is the transcript a LastWords child prints after SIGTERM.
const EnvLastWords = "MALARUN_FAKE_LAST_WORDS"

// EnvTranscripts makes a Replay child replay the Nth of these transcripts
// (a list separated by commas) at its Nth start, the last one from then
// on: a run whose attempts print different things. The starts are
// counted in a file beside the first transcript (its name and ".starts").
const EnvTranscripts = "MALARUN_FAKE_TRANSCRIPTS"

// EnvSessions, beside EnvTranscripts, names the lines (a file each, a list
// separated by commas, the Nth for the Nth start, the last from then on)
// that the child appends to its session file, as the real CLI keeps one
// (docs/design.md §F38): $HOME/.claude/projects/-fake/<session>.jsonl.
// PromptField in them is replaced by what the child read on stdin, as a
// JSON string.
const EnvSessions = "MALARUN_FAKE_SESSIONS"

// PromptField stands for the prompt in EnvSessions' lines.
const PromptField = "{{prompt}}"

// Lines the fake child prints, shaped like the real CLI's.
const (
	SessionID = "5fcbbccf-06da-4fd6-8405-d704e7fbd2c7"
	InitLine  = `{"type":"system","subtype":"init","cwd":"/tmp","session_id":"` + SessionID + `","model":"claude-opus-4-8[1m]"}`
	ToolLine  = `{"type":"assistant","message":{"model":"claude-opus-4-8","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"sleep 1"}}],"usage":{"input_tokens":10,"output_tokens":1,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}},"parent_tool_use_id":null,"session_id":"` + SessionID + `"}`
	// HookStarted and HookDone are a Stop hook's lines (§F27, as 2.1.330 prints them).
	HookStarted = `{"type":"system","subtype":"hook_started","hook_id":"hook-1","hook_name":"Stop","hook_event":"Stop","session_id":"` + SessionID + `"}`
	HookDone    = `{"type":"system","subtype":"hook_response","hook_id":"hook-1","hook_name":"Stop","hook_event":"Stop","output":"ok\n","stdout":"ok\n","stderr":"","exit_code":0,"outcome":"success","session_id":"` + SessionID + `"}`
	ToolDone    = `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"ok","is_error":false}]},"parent_tool_use_id":null,"session_id":"` + SessionID + `"}`
	TextLine    = `{"type":"assistant","message":{"model":"claude-opus-4-8","content":[{"type":"text","text":"All done."}],"usage":{"input_tokens":10,"output_tokens":1,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}},"parent_tool_use_id":null,"session_id":"` + SessionID + `"}`
	Result      = `{"type":"result","subtype":"success","is_error":false,"api_error_status":null,"result":"All done.","session_id":"` + SessionID + `","total_cost_usd":0.01,"terminal_reason":"completed"}`
)

// GrandchildLine is printed by Grandchild once its grandchild is ready.
func GrandchildLine(pid int) string {
	return fmt.Sprintf(`{"type":"system","subtype":"fake_grandchild","pid":%d,"parent":%d,"session_id":"%s"}`, pid, os.Getpid(), SessionID)
}

// MaybeRun runs the behaviour named by EnvBehaviour and exits; it returns
// when the variable is unset (the test binary is running tests).
func MaybeRun() {
	b := os.Getenv(EnvBehaviour)
	if b == "" {
		return
	}
	if code, ok := runMeasured(b); ok {
		os.Exit(code)
	}
	os.Exit(run(b))
}

func run(behaviour string) int {
	stdin, _ := io.ReadAll(os.Stdin)
	RecordArgs(os.Getenv(EnvArgsFile), os.Args[1:], stdin)
	RecordTrace(os.LookupEnv)
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	// Like the real CLI, run in the session the flags name.
	c := self(stdin)
	session := c.Session()
	println := func(s string) {
		out.WriteString(InSession(s, session))
		out.WriteByte('\n')
		out.Flush()
	}
	if sc, ok := ScriptOf(behaviour, c); ok {
		return play(sc, out, session)
	}
	if code, ok := runGroupTrick(behaviour, println); ok {
		return code
	}
	switch behaviour {
	case Grandchild:
		signal.Ignore(syscall.SIGTERM)
		pid := startGrandchild()
		println(InitLine)
		println(GrandchildLine(pid))
		// A tool call that never ends: a test bounds the hang with
		// tool_timeout, whose timer starts only now, so however slowly
		// this tree starts on a loaded machine it is whole before the stop.
		println(ToolLine)
		block()
	case Sleeper:
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ready")
		block()
	case BigLine:
		println(InitLine)
		writeBigLine(out, envInt(EnvSize, 100<<20))
		out.Flush()
		println(Result)
		return 0
	case BigResult:
		return bigResult(out, println, firstNonEmpty(session, SessionID))
	case NonBlocking:
		return nonBlocking()
	case ResumeAware:
		// A fresh start with a grandchild (ScriptOf plays the rest).
		lines := transcript()
		for _, l := range lines[:min(envInt(EnvLines, 1), len(lines))] {
			println(l)
		}
		println(GrandchildLine(startGrandchild()))
		block()
	case CountTerm:
		countTerm(println)
	case termCounter:
		countTerms(os.Getenv(envTermRole), nil)
		fmt.Println("ready")
		block()
	case Orphaner:
		println(InitLine)
		pid, start := leaveOrphan()
		println(OrphanLine(pid, start))
		block()
	case orphanParent:
		return startOrphanChild()
	case orphanChild:
		return 0 // run read stdin to EOF: orphanParent is gone
	case Gated:
		return gated(println)
	}
	fmt.Fprintf(os.Stderr, "testchild: unknown behaviour %q\n", behaviour)
	return 99
}

// play plays a script as a process: its lines on stdout as they come,
// its end a real exit, block or SIGKILL.
func play(sc Script, out *bufio.Writer, session string) int {
	if sc.End == Ignores {
		signal.Ignore(syscall.SIGTERM)
	}
	var term chan os.Signal
	if sc.End == Dies {
		term = make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
	}
	for _, st := range sc.Steps {
		time.Sleep(st.Sleep)
		if st.Stderr != "" {
			fmt.Fprintln(os.Stderr, st.Stderr)
		}
		if st.Line != "" {
			out.WriteString(InSession(st.Line, session) + "\n")
		}
		out.WriteString(InSession(st.Partial, session))
		out.Flush()
	}
	switch sc.End {
	case Blocks, Ignores:
		block()
	case Killed:
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		block()
	case Dies:
		<-term
		for _, l := range sc.LastWords {
			out.WriteString(InSession(l, session) + "\n")
		}
		out.Flush()
		return 143
	}
	return sc.Code
}

// self is this process as a scripted child sees it.
func self(stdin []byte) Child { return Child{Args: os.Args[1:], Stdin: stdin, Getenv: os.Getenv} }

// block waits forever without spinning; only a signal ends it. Not
// `select {}`: with no other goroutine the runtime would call that a
// deadlock and exit (the race detector's own goroutines hide it under -race).
func block() {
	for {
		time.Sleep(time.Hour)
	}
}

// transcript is the transcript's lines for a behaviour played as a
// process; a file that cannot be read ends the child with 98, as ScriptOf's
// scripts do.
func transcript() []string {
	if path := os.Getenv(EnvTranscript); path != "" {
		if _, err := os.Stat(path); err != nil {
			fmt.Fprintln(os.Stderr, "testchild:", err)
			os.Exit(98)
		}
	}
	return self(nil).transcript()
}

func argAfter(flag string) string { return self(nil).ArgAfter(flag) }

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// EnvTraceFile is where the child appends, one line per attempt, the
// TRACEPARENT and TRACESTATE it was started with ("-" for one not set).
const EnvTraceFile = "MALARUN_FAKE_TRACE_FILE"

// AttemptSeparator ends each attempt's record in the args file.
const AttemptSeparator = "\n--end--\n"

// startGrandchild starts this binary again as a Sleeper in a new session,
// as the Bash tool does, and waits until it ignores SIGTERM.
func startGrandchild() int { return startSetsid(Sleeper) }

// startSetsid starts this binary again as behaviour in a new session and
// waits until it says "ready". The grandchild records no args and writes
// no report: those are its parent's.
func startSetsid(behaviour string) int {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), EnvBehaviour+"="+behaviour, EnvArgsFile+"=", EnvReport+"=")
	if tag := os.Getenv(EnvBareGrandchild); tag != "" {
		cmd.Env = []string{EnvBehaviour + "=" + behaviour, EnvBareGrandchild + "=" + tag}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		os.Exit(97)
	}
	if err := cmd.Start(); err != nil {
		os.Exit(97)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "ready\n" {
		os.Exit(96)
	}
	return cmd.Process.Pid
}

func writeBigLine(w *bufio.Writer, size int) {
	head := `{"type":"assistant","message":{"model":"claude-opus-4-8","content":[{"type":"text","text":"`
	tail := `"}],"usage":{"input_tokens":10,"output_tokens":1,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}},"session_id":"` + SessionID + `"}`
	w.WriteString(head)
	chunk := []byte(strings.Repeat("A", 1<<16))
	for n := size - len(head) - len(tail); n > 0; n -= len(chunk) {
		w.Write(chunk[:min(n, len(chunk))])
	}
	w.WriteString(tail)
	w.WriteByte('\n')
}

// nonBlocking reproduces docs/design.md §F13: like the real CLI it exits as
// soon as a write would block, losing what the reader has not taken yet.
// Through a pipe the result line is lost; through a regular file it is not.
func nonBlocking() int {
	if err := syscall.SetNonblock(1, true); err != nil {
		return 95
	}
	var buf strings.Builder
	buf.WriteString(InitLine + "\n")
	bw := bufio.NewWriter(&buf)
	writeBigLine(bw, envInt(EnvSize, 20<<20))
	bw.Flush()
	buf.WriteString(Result + "\n")
	data := []byte(buf.String())
	for len(data) > 0 {
		n, err := syscall.Write(1, data)
		if err != nil {
			return 0 // EAGAIN: give up and exit "successfully", as the CLI does
		}
		data = data[n:]
	}
	return 0
}

func envInt(name string, def int) int { return self(nil).envInt(name, def) }

func envDuration(name string) time.Duration { return self(nil).envDuration(name) }

// Env is the environment for a fake child running behaviour: the test's
// own environment plus extra. GORACE drops the race runtime's one second
// sleep at exit, which would otherwise slow every fake child under -race.
func Env(behaviour string, extra ...string) []string {
	env := append(os.Environ(), EnvBehaviour+"="+behaviour, "GORACE=atexit_sleep_ms=0")
	return append(env, extra...)
}
