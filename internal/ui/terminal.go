package ui

import (
	"bytes"
	"io"
	"sync"

	"golang.org/x/sys/unix"

	// Builds only for the kernels malarun supports, with one clear error elsewhere.
	_ "github.com/malarun/malarun/internal/platform"
)

// clearLine returns the cursor to the start of the line and erases it.
const clearLine = "\r\x1b[2K"

// Terminal keeps one status line at the bottom of a terminal, redrawn in
// place, and prints permanent lines (events, logs) above it. Every output is
// one Write, under a mutex, so lines from several goroutines never mix.
type Terminal struct {
	mu      sync.Mutex
	w       io.Writer
	width   func() int
	status  string // as drawn, already cut to the width
	partial []byte // Write data not yet ended by a newline
}

// NewTerminal draws on w; width reports the terminal's columns (asked again
// at every redraw, so a resized window is followed).
func NewTerminal(w io.Writer, width func() int) *Terminal {
	return &Terminal{w: w, width: width}
}

// SetStatus draws s as the status line ("" removes it). It is cut to one
// column less than the width: a line that fills the last column would wrap,
// and the next redraw could no longer erase it.
func (t *Terminal) SetStatus(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s != "" {
		s = fit(s, t.StatusWidth())
	}
	if s == t.status {
		return
	}
	t.status = s
	io.WriteString(t.w, clearLine+s)
}

// StatusWidth is the columns a status line may take now (see SetStatus).
func (t *Terminal) StatusWidth() int { return t.width() - 1 }

// Println prints a permanent line above the status line.
func (t *Terminal) Println(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.above([]byte(line + "\n"))
}

// Write prints complete lines above the status line and keeps an
// unfinished one until its newline comes (zerolog writes whole lines).
func (t *Terminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.partial = append(t.partial, p...)
	if i := bytes.LastIndexByte(t.partial, '\n'); i >= 0 {
		t.above(t.partial[:i+1])
		t.partial = append([]byte(nil), t.partial[i+1:]...)
	}
	return len(p), nil
}

// above erases the status line, writes lines (ending in a newline) and
// draws the status line again below them: one Write. The \r before the
// status line does not count on the terminal turning \n into \r\n.
func (t *Terminal) above(lines []byte) {
	buf := make([]byte, 0, len(clearLine)+len(lines)+1+len(t.status))
	buf = append(buf, clearLine...)
	buf = append(buf, lines...)
	buf = append(buf, '\r')
	buf = append(buf, t.status...)
	t.w.Write(buf)
}

// Close prints what is left of an unfinished line and erases the status
// line, leaving the cursor at the start of an empty line.
func (t *Terminal) Close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.partial) > 0 {
		t.partial = append(t.partial, '\n')
		t.above(t.partial)
		t.partial = nil
	}
	if t.status != "" {
		t.status = ""
		io.WriteString(t.w, clearLine)
	}
}

// TerminalFd returns w's file descriptor when w is a terminal.
func TerminalFd(w io.Writer) (int, bool) {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return -1, false
	}
	fd := int(f.Fd())
	if _, err := unix.IoctlGetTermios(fd, getTermios); err != nil {
		return -1, false
	}
	return fd, true
}

// WidthOf returns a function reporting the columns of the terminal on fd
// (80 when it cannot tell).
func WidthOf(fd int) func() int {
	return func() int {
		ws, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ)
		if err != nil || ws.Col == 0 {
			return 80
		}
		return int(ws.Col)
	}
}
