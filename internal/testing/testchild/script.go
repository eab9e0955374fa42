package testchild

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A script is what a behaviour that only prints does: lines, silences, an
// end. The fake child process plays it (play, below); internal/testing/fakeclaude
// plays the same script with no process, in a test's fake time, so that
// the supervisor's decisions are tested on exactly the output its process
// tests use. Behaviours that need a process (signals, grandchildren,
// pipes, huge lines, files as gates) have no script.

// Step is one thing a scripted child does, in order.
type Step struct {
	// Sleep is a silence before the step's output (a silent tool).
	Sleep time.Duration
	// Line is printed on stdout with a newline; Partial without one (a line
	// cut short); Stderr on stderr.
	Line, Partial, Stderr string
}

// EndKind is how a script ends after its steps.
type EndKind int

const (
	Exits   EndKind = iota // exit with Script.Code
	Blocks                 // wait, silent, until stopped (SIGTERM ends it)
	Ignores                // wait, silent, ignoring SIGTERM: only SIGKILL ends it
	Killed                 // die by SIGKILL, as the OOM killer would
	// Dies: wait, silent, until SIGTERM, then print Script.LastWords and
	// exit 143, as 2.1.197 was seen to under load (docs/design.md §D35).
	Dies
)

// Script is a scriptable behaviour's output and end.
type Script struct {
	Steps []Step
	End   EndKind
	Code  int
	// LastWords are the lines a script that Dies prints after SIGTERM.
	LastWords []string
}

// Child is what a script is chosen by: the child's arguments, what it read
// on stdin and its environment.
type Child struct {
	Args   []string
	Stdin  []byte
	Getenv func(string) string
}

// ScriptOf is the script of behaviour b for c; ok is false for a behaviour
// that needs a process.
func ScriptOf(b string, c Child) (s Script, ok bool) {
	for _, name := range []string{EnvTranscript, EnvResumed, EnvContinued} {
		if path := c.Getenv(name); path != "" {
			if _, err := os.Stat(path); err != nil {
				// The child's own failure, as the process reports it.
				return Script{Steps: []Step{{Stderr: "testchild: " + err.Error()}}, Code: 98}, true
			}
		}
	}
	switch b {
	case Replay, Linger:
		s = printing(c.replayed())
		s.Code = c.envInt(EnvExit, 0)
		if b == Linger {
			s.End = Blocks
		}
	case Hang:
		s = c.firstLines()
		s.End = Blocks
	case IgnoreTerm:
		s = printing([]string{InitLine})
		s.End = Ignores
	case SilentTool:
		s = printing([]string{InitLine, ToolLine})
		s.Steps = append(s.Steps, Step{Sleep: c.envDuration(EnvSilence), Line: ToolDone}, Step{Line: TextLine}, Step{Line: Result})
	case KilledFirst:
		if b, _ := os.ReadFile(c.Getenv(EnvArgsFile)); !strings.Contains(string(b), AttemptSeparator) {
			return Script{End: Killed}, true
		}
		s = printing([]string{InitLine, TextLine, Result})
	case StopHook:
		if c.hasArg("--resume") {
			return printing([]string{InitLine, TextLine, Result}), true
		}
		s = printing([]string{InitLine, TextLine, HookStarted})
		s.Steps = append(s.Steps, Step{Sleep: c.envDuration(EnvSilence), Line: HookDone}, Step{Line: Result})
	case Garbage:
		s = printing([]string{InitLine, "this is not json", `{"type":"assistant","message":{"content":[{"type":"text","text":"unterminated`, TextLine, Result})
	case ExitEarly:
		s = Script{Steps: []Step{{Stderr: "error: unknown option '--bogus'"}}, Code: c.envInt(EnvExit, 1)}
	case CrashMidLine:
		s = c.firstLines()
		s.Steps = append(s.Steps, Step{Partial: `{"type":"assistant","message":{"content":[{"type":"te`})
		s.End = Killed
	case ResumeAware:
		if c.Getenv(EnvGrandchild) != "" && !c.hasArg("--resume") && !strings.Contains(string(c.Stdin), ContinuationMarker) {
			return Script{}, false // the grandchild is a process
		}
		s = c.resumeAware()
	case UsageLimited:
		s = c.usageLimited()
	case LastWords:
		if c.hasArg("--resume") {
			return printing(c.linesOr(EnvResumed, []string{InitLine, TextLine, Result})), true
		}
		s = c.firstLines()
		s.End, s.LastWords = Dies, c.linesOr(EnvLastWords, nil)
	default:
		return Script{}, false
	}
	return s, true
}

func (c Child) resumeAware() Script {
	if strings.Contains(string(c.Stdin), ContinuationMarker) {
		return printing(c.linesOr(EnvContinued, []string{InitLine, TextLine, Result}))
	}
	if !c.hasArg("--resume") {
		s := c.firstLines()
		s.End = Blocks
		return s
	}
	s := printing(c.linesOr(EnvResumed, []string{InitLine, TextLine, Result}))
	s.Code = c.envInt(EnvExit, 0)
	return s
}

func (c Child) usageLimited() Script {
	if c.hasArg("--resume") && c.Getenv(EnvLimitAlways) == "" {
		return printing(c.linesOr(EnvResumed, []string{InitLine, TextLine, Result}))
	}
	s := printing(UsageLimitLines(int64(c.envInt(EnvResetsAt, 0))))
	s.Code = 1
	return s
}

// firstLines are the first EnvLines lines of the transcript (default 1).
func (c Child) firstLines() Script {
	lines := c.transcript()
	return printing(lines[:min(c.envInt(EnvLines, 1), len(lines))])
}

func printing(lines []string) Script {
	s := Script{Steps: make([]Step, len(lines))}
	for i, l := range lines {
		s.Steps[i].Line = l
	}
	return s
}

// replayed is what a Replay child prints at this start: the transcript
// EnvTranscripts names for it, else EnvTranscript's.
func (c Child) replayed() []string {
	list := c.Getenv(EnvTranscripts)
	if list == "" {
		return c.transcript()
	}
	paths := strings.Split(list, ",")
	counter := paths[0] + ".starts"
	b, _ := os.ReadFile(counter)
	n := strings.Count(string(b), "\n")
	if f, err := os.OpenFile(counter, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600); err == nil {
		f.WriteString("start\n")
		f.Close()
	}
	if err := c.writeSession(n); err != nil {
		return []string{`{"type":"testchild_error","error":"` + err.Error() + `"}`}
	}
	data, err := os.ReadFile(paths[min(n, len(paths)-1)])
	if err != nil {
		return []string{`{"type":"testchild_error","error":"` + err.Error() + `"}`}
	}
	return strings.Split(strings.TrimRight(string(data), "\n"), "\n")
}

// writeSession appends EnvSessions' lines for start n to the session file.
func (c Child) writeSession(n int) error {
	list := c.Getenv(EnvSessions)
	if list == "" {
		return nil
	}
	paths := strings.Split(list, ",")
	data, err := os.ReadFile(paths[min(n, len(paths)-1)])
	if err != nil {
		return err
	}
	prompt, _ := json.Marshal(string(c.Stdin))
	text := strings.ReplaceAll(string(data), PromptField, string(prompt))
	dir := filepath.Join(c.Getenv("HOME"), ".claude", "projects", "-fake")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, c.Session()+".jsonl"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	return errors.Join(err, f.Close())
}

// transcript is the file EnvTranscript names, as lines (default: a success).
func (c Child) transcript() []string {
	return c.linesOr(EnvTranscript, []string{InitLine, TextLine, Result})
}

// linesOr are the lines of the file the variable name names, else def
// (ScriptOf has checked that the file is there).
func (c Child) linesOr(name string, def []string) []string {
	path := c.Getenv(name)
	if path == "" {
		return def
	}
	b, _ := os.ReadFile(path)
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

func (c Child) envInt(name string, def int) int {
	v, err := strconv.Atoi(c.Getenv(name))
	if err != nil {
		return def
	}
	return v
}

func (c Child) envDuration(name string) time.Duration {
	d, err := time.ParseDuration(c.Getenv(name))
	if err != nil {
		return 0
	}
	return d
}

func (c Child) hasArg(a string) bool { return slices.Contains(c.Args, a) }

// ArgAfter is the argument after flag ("" if none).
func (c Child) ArgAfter(flag string) string {
	for i := 0; i+1 < len(c.Args); i++ {
		if c.Args[i] == flag {
			return c.Args[i+1]
		}
	}
	return ""
}

// Session is the session the flags name: like the real CLI, a child runs
// in it ("" if none).
func (c Child) Session() string {
	if s := c.ArgAfter("--session-id"); s != "" {
		return s
	}
	return c.ArgAfter("--resume")
}

// InSession is line with the recordings' session id replaced by session.
func InSession(line, session string) string {
	if session == "" {
		return line
	}
	return strings.ReplaceAll(line, SessionID, session)
}

// RecordArgs appends args and what arrived on stdin to the args file, one
// record per attempt, so a test can check the flags malarun passed and
// that the prompt came on stdin ("": no file).
func RecordArgs(path string, args []string, stdin []byte) {
	if path == "" {
		return
	}
	var b strings.Builder
	for _, a := range args {
		b.WriteString(a)
		b.WriteByte('\n')
	}
	b.WriteString("--stdin--\n")
	b.Write(stdin)
	b.WriteString(AttemptSeparator)
	appendTo(path, b.String())
}

// RecordTrace appends, to the file EnvTraceFile names, the TRACEPARENT and
// TRACESTATE the child was started with ("-" for one not set).
func RecordTrace(lookup func(string) (string, bool)) {
	path, _ := lookup(EnvTraceFile)
	if path == "" {
		return
	}
	value := func(name string) string {
		if v, ok := lookup(name); ok {
			return v
		}
		return "-"
	}
	appendTo(path, fmt.Sprintf("%s %s\n", value("TRACEPARENT"), value("TRACESTATE")))
}

func appendTo(path, s string) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	f.WriteString(s)
	f.Close()
}
