package ui

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/malarun/malarun/internal/event"
)

// GitHub Actions reads workflow commands from a step's stdout and stderr:
// a line that starts with "::" once leading white space is trimmed
// ("::error title=T::message"), and the legacy form "##[command]data"
// anywhere in a line. Text from the model must not reach the runner as
// either. Two defences, used where each fits:
//
//   - Free text (the result on stdout, the error lines at the end) is
//     wrapped in "::stop-commands::TOKEN" ... "::TOKEN::" with a fresh
//     random TOKEN: in between the runner ignores every command.
//   - Logs and JSON lines on stderr are defused line by line (ActionsLog):
//     they are never wrapped, because the runner reads stdout and stderr
//     concurrently, and a stop section on one stream could close while
//     the other's lines are being read.

// escapeData escapes a workflow command's message.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a workflow command's property value (title=...).
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// ErrorCommand is an ::error:: annotation with a title.
func ErrorCommand(title, message string) string {
	return "::error title=" + escapeProperty(title) + "::" + escapeData(message)
}

// stopToken is a fresh random token for ::stop-commands::.
func stopToken() string {
	b := make([]byte, 16)
	rand.Read(b) // never fails (crypto/rand since Go 1.24)
	return hex.EncodeToString(b)
}

// writeInert writes text so that the runner runs no command in it: between
// ::stop-commands::TOKEN and ::TOKEN::, with a fresh token.
func writeInert(w io.Writer, text string) error {
	if text == "" {
		return nil
	}
	s, err := StartStopSection(w)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(s, text); err != nil {
		return err
	}
	return s.Close()
}

// StopSection is writeInert for a text that streams (a result copied from
// its transcript): StartStopSection writes "::stop-commands::TOKEN", the
// text goes through Write as it comes, and Close ends its last line if it
// did not and writes "::TOKEN::".
type StopSection struct {
	w     io.Writer
	token string
	last  byte // the text's last byte so far
}

// StartStopSection opens a section on w with a fresh token.
func StartStopSection(w io.Writer) (*StopSection, error) {
	s := &StopSection{w: w, token: stopToken(), last: '\n'}
	_, err := io.WriteString(w, "::stop-commands::"+s.token+"\n")
	return s, err
}

// Write passes p on as it is: inside the section no command runs.
func (s *StopSection) Write(p []byte) (int, error) {
	if len(p) > 0 {
		s.last = p[len(p)-1]
	}
	return s.w.Write(p)
}

// Close ends the section: the footer must start a line of its own.
func (s *StopSection) Close() error {
	end := "::" + s.token + "::\n"
	if s.last != '\n' {
		end = "\n" + end
	}
	_, err := io.WriteString(s.w, end)
	return err
}

// ActionsLog is stderr under GitHub Actions: what is written to it is
// defused line by line (a line that would start with "::" is indented with
// "> ", "##[" becomes "##\u005b", which JSON decodes back to "##["), while
// Command writes malarun's own workflow commands as they are. One mutex
// orders both.
type ActionsLog struct {
	mu      sync.Mutex
	w       io.Writer
	partial []byte
}

// NewActionsLog writes to w.
func NewActionsLog(w io.Writer) *ActionsLog { return &ActionsLog{w: w} }

// Write passes complete lines on, defused; it keeps an unfinished line
// until its newline comes.
func (a *ActionsLog) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.partial = append(a.partial, p...)
	i := bytes.LastIndexByte(a.partial, '\n')
	if i < 0 {
		return len(p), nil
	}
	out := defuse(string(a.partial[:i+1]))
	a.partial = append([]byte(nil), a.partial[i+1:]...)
	if _, err := io.WriteString(a.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Command writes a workflow command line (its data already escaped).
func (a *ActionsLog) Command(line string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.flush()
	io.WriteString(a.w, line+"\n")
}

// Inert writes text wrapped in a stop-commands section (see writeInert).
func (a *ActionsLog) Inert(text string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.flush()
	return writeInert(a.w, text)
}

// Flush ends an unfinished line.
func (a *ActionsLog) Flush() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.flush()
}

func (a *ActionsLog) flush() {
	if len(a.partial) > 0 {
		io.WriteString(a.w, defuse(string(a.partial)+"\n"))
		a.partial = nil
	}
}

// defuse makes every line of s inert for the runner, changing as little
// as possible (see ActionsLog).
func defuse(s string) string {
	s = strings.ReplaceAll(s, "##[", `##\u005b`)
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimLeftFunc(l, unicode.IsSpace), "::") {
			lines[i] = "> " + l
		}
	}
	return strings.Join(lines, "")
}

// Groups folds each attempt's log lines into a ::group:: of the job log.
// It writes on the supervisor's goroutine, as the logs do, so the group
// markers land between the right lines.
type Groups struct {
	log  *ActionsLog
	open bool
}

// NewGroups writes its markers to log.
func NewGroups(log *ActionsLog) *Groups { return &Groups{log: log} }

// Observe opens a group when an attempt starts and closes it when it ends.
func (g *Groups) Observe(e event.Event) {
	switch e.Kind {
	case event.AttemptStarted:
		g.Close()
		title := e.Issue + ": attempt " + strconv.Itoa(e.Attempt)
		switch {
		case e.Purpose == "checkpoint":
			title += ", checkpoint request to session " + ShortSession(e.Session)
		case e.Resume:
			title += ", resuming session " + ShortSession(e.Session)
		default:
			title += ", session " + ShortSession(e.Session)
		}
		g.log.Command("::group::" + escapeData(title))
		g.open = true
	case event.AttemptEnded:
		g.Close()
	}
}

// Close ends an open group.
func (g *Groups) Close() {
	if g.open {
		g.log.Command("::endgroup::")
		g.open = false
	}
}
