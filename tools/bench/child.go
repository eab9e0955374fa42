package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/malarun/malarun/internal/synth"
)

// The fake claude: this binary, run by malarun (or by the kill benchmark)
// with envChild naming a behaviour. Each behaviour prints stream-json lines
// like the real CLI, one write per line, and before it exits writes a
// report (envReport) with its own CPU and its children's, and timestamps on
// CLOCK_MONOTONIC, which every process on the machine shares.
const (
	envChild      = "MALARUN_BENCH_CHILD"      // behaviour
	envReport     = "MALARUN_BENCH_REPORT"     // where to write the childReport
	envTranscript = "MALARUN_BENCH_TRANSCRIPT" // replay: the .jsonl to print
	envPace       = "MALARUN_BENCH_PACE"       // pause between lines (a duration)
	envLines      = "MALARUN_BENCH_LINES"      // partial: lines in all
	envSize       = "MALARUN_BENCH_SIZE"       // image: bytes of base64 data
	envSilence    = "MALARUN_BENCH_SILENCE"    // silent: how long to say nothing
	envMarker     = "MALARUN_BENCH_MARKER"     // silent: file created when the silence begins
	envWrap       = "MALARUN_BENCH_WRAP"       // wrap: the real CLI to run
)

// Behaviours.
const (
	childReplay     = "replay"      // the transcript, paced; exit 0
	childPartial    = "partial"     // a generated run with partial messages; exit 0
	childImage      = "image"       // init, one user line with a huge image, a result; exit 0
	childHang       = "hang"        // a few lines, then silence until SIGTERM; reports both times
	childSilent     = "silent"      // init, a line, silence, a result; exit 0
	childObey       = "obey"        // a line, then block; SIGTERM kills it
	childIgnore     = "ignore"      // ignore SIGTERM, a line, block
	childObeyTree   = "obey-tree"   // obey, with a setsid grandchild that obeys too
	childIgnoreTree = "ignore-tree" // ignore, with a setsid grandchild that ignores too
	childSleeper    = "sleeper"     // the grandchild: say "ready", block
	childWrap       = "wrap"        // run the real CLI as a child and report the CPU of its whole tree
)

// childReport is what a fake child tells the harness.
type childReport struct {
	// CPUNs is user+system time of the child and of every descendant it
	// reaped, read just before it exits.
	CPUNs int64 `json:"cpu_ns"`
	// ExitNs is CLOCK_MONOTONIC just before the child exits.
	ExitNs int64 `json:"exit_ns"`
	// LastLineNs (hang) is when the last line had been written; TermNs when
	// SIGTERM arrived.
	LastLineNs int64 `json:"last_line_ns,omitempty"`
	TermNs     int64 `json:"term_ns,omitempty"`
	// Pids (tree behaviours) are the child and its grandchild.
	Pids []int `json:"pids,omitempty"`
	// Leftover (wrap) counts descendants still running when the CLI exited.
	Leftover int `json:"leftover,omitempty"`
	ExitCode int `json:"exit_code"`
}

// mono is CLOCK_MONOTONIC in nanoseconds: comparable between processes,
// unlike the monotonic reading inside a time.Time.
func mono() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err)
	}
	return ts.Nano()
}

func runChild(behaviour string) int {
	session := argAfter("--session-id")
	if session == "" {
		session = argAfter("--resume")
	}
	if session == "" {
		session = "5313e7c2-72e3-4a4f-96f5-b6f07478e90f"
	}
	emit := synth.Newline(os.Stdout) // one write(2) per line, as the CLI does
	pace := envDuration(envPace)
	paced := func(line string) error {
		if err := emit(line); err != nil {
			return err
		}
		if pace > 0 {
			time.Sleep(pace)
		}
		return nil
	}
	rep := childReport{}
	switch behaviour {
	case childReplay:
		b, err := os.ReadFile(os.Getenv(envTranscript))
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench child:", err)
			return 98
		}
		for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
			paced(withSession(l, session))
		}
	case childPartial:
		synth.Partial(paced, session, envInt(envLines, 200000))
	case childImage:
		emit(synth.Init(session))
		synth.ImageLine(os.Stdout, session, envInt(envSize, 100<<20))
		emit(synth.Text(session, "msg_1", synth.ResultText))
		emit(synth.Result(session, synth.ResultText))
	case childHang:
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		emit(synth.Init(session))
		for i := 1; i <= 3; i++ {
			time.Sleep(20 * time.Millisecond)
			emit(synth.Text(session, fmt.Sprintf("msg_%d", i), "Working on it."))
		}
		rep.LastLineNs = mono()
		<-term
		rep.TermNs = mono()
		rep.ExitCode = 143
		writeReport(rep)
		signal.Reset(syscall.SIGTERM)
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		block()
	case childSilent:
		emit(synth.Init(session))
		emit(synth.Text(session, "msg_1", "Thinking."))
		if err := os.WriteFile(os.Getenv(envMarker), []byte(strconv.FormatInt(mono(), 10)), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "bench child:", err)
			return 98
		}
		time.Sleep(envDuration(envSilence))
		emit(synth.Text(session, "msg_2", synth.ResultText))
		emit(synth.Result(session, synth.ResultText))
	case childObey, childIgnore, childObeyTree, childIgnoreTree:
		ignore := behaviour == childIgnore || behaviour == childIgnoreTree
		if ignore {
			signal.Ignore(syscall.SIGTERM)
		}
		pids := []int{os.Getpid()}
		if strings.HasSuffix(behaviour, "-tree") {
			pids = append(pids, startSleeper(ignore))
		}
		b, _ := json.Marshal(pids)
		emit(`{"type":"system","subtype":"bench_tree","pids":` + string(b) + `}`)
		block()
	case childSleeper:
		if os.Getenv("MALARUN_BENCH_IGNORE") != "" {
			signal.Ignore(syscall.SIGTERM)
		}
		fmt.Println("ready")
		block()
	case childWrap:
		return wrap(&rep)
	default:
		fmt.Fprintf(os.Stderr, "bench child: unknown behaviour %q\n", behaviour)
		return 99
	}
	writeReport(rep)
	return rep.ExitCode
}

// block waits until a signal ends the process. Not select {}: with no other
// goroutine, the runtime would call that a deadlock and exit with status 2
// (the race detector's runtime hides this, a plain build does not).
func block() {
	for {
		time.Sleep(time.Hour)
	}
}

// writeReport adds the CPU used so far and the time, and writes rep where
// envReport says.
func writeReport(rep childReport) {
	path := os.Getenv(envReport)
	if path == "" {
		return
	}
	rep.CPUNs = cpuNs(unix.RUSAGE_SELF) + cpuNs(unix.RUSAGE_CHILDREN)
	rep.ExitNs = mono()
	b, _ := json.Marshal(rep)
	os.WriteFile(path, b, 0o600)
}

func cpuNs(who int) int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(who, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// wrap runs the real CLI (envWrap) with this process's arguments and
// standard streams, so that the CPU of the CLI's whole tree can be
// reported: this process is a child subreaper, so whatever the CLI leaves
// behind re-parents here, and it reaps every descendant it can before it
// reports. The report is what malarun's rusage counts for its children;
// malarun's own CPU is the rest. The wrapper's own start (a few ms) is
// reported too, so it does not count against malarun.
func wrap(rep *childReport) int {
	unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	// The CLI handles SIGTERM and SIGINT itself; the wrapper lives on to
	// report (malarun signals the whole group). Caught, not ignored: an
	// ignored signal would stay ignored in the CLI across exec.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM, syscall.SIGINT)
	cmd := exec.Command(os.Getenv(envWrap), os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = withoutBenchEnv(os.Environ())
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "bench wrap:", err)
		return 127
	}
	err := cmd.Wait()
	rep.ExitCode = cmd.ProcessState.ExitCode()
	if err != nil && rep.ExitCode < 0 {
		rep.ExitCode = 1
	}
	// Reap what re-parented here; give stragglers a short while.
	deadline := time.Now().Add(2 * time.Second)
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if err != nil { // ECHILD: nothing left
			break
		}
		if pid == 0 {
			if time.Now().After(deadline) {
				rep.Leftover++
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	writeReport(*rep)
	return rep.ExitCode
}

func withoutBenchEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "MALARUN_BENCH_") {
			out = append(out, kv)
		}
	}
	return out
}

// startSleeper starts this binary as a sleeper in a new session (as the
// Bash tool starts its commands) and waits until it is ready.
func startSleeper(ignore bool) int {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(withoutBenchEnv(os.Environ()), envChild+"="+childSleeper)
	if ignore {
		cmd.Env = append(cmd.Env, "MALARUN_BENCH_IGNORE=1")
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		os.Exit(97)
	}
	if err := cmd.Start(); err != nil {
		os.Exit(97)
	}
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		os.Exit(96)
	}
	return cmd.Process.Pid
}

var sessionField = regexp.MustCompile(`"session_id":"[^"]*"`)

// withSession puts the session malarun asked for into a recorded line.
func withSession(line, session string) string {
	return sessionField.ReplaceAllLiteralString(line, `"session_id":"`+session+`"`)
}

func argAfter(flag string) string {
	for i := 1; i+1 < len(os.Args); i++ {
		if os.Args[i] == flag {
			return os.Args[i+1]
		}
	}
	return ""
}

func envInt(name string, def int) int {
	v, err := strconv.Atoi(os.Getenv(name))
	if err != nil {
		return def
	}
	return v
}

func envDuration(name string) time.Duration {
	d, _ := time.ParseDuration(os.Getenv(name))
	return d
}
