// Package screen is a tiny terminal emulator for tests: enough of a VT100
// to tell what a person would see after malarun's output. It knows
// printable text, \r, \n, \b, erase in line (ESC [ K, ESC [ 1 K, ESC [ 2 K)
// and SGR colours (ESC [ ... m, ignored); anything else (other controls and
// sequences, C1 controls, bidirectional controls, invalid UTF-8) is
// recorded as an error, so output that would garble a real terminal fails
// the test.
package screen

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Screen is a terminal of a fixed width with unlimited scrollback.
type Screen struct {
	mu      sync.Mutex
	width   int
	rows    [][]rune
	row     int
	col     int
	pending []byte // an escape sequence or UTF-8 rune cut between writes
	errs    []string
	changed chan struct{}
}

// New returns an empty screen width columns wide.
func New(width int) *Screen {
	return &Screen{width: width, rows: [][]rune{nil}, changed: make(chan struct{}, 1)}
}

// Write feeds output to the screen.
func (s *Screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	data := append(s.pending, p...)
	s.pending = nil
	for len(data) > 0 {
		n, ok := s.step(data)
		if !ok {
			s.pending = append([]byte(nil), data...)
			break
		}
		data = data[n:]
	}
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
	return len(p), nil
}

// Changed is ready after a Write.
func (s *Screen) Changed() <-chan struct{} { return s.changed }

// step interprets the start of data; false when it is incomplete.
func (s *Screen) step(data []byte) (int, bool) {
	switch c := data[0]; {
	case c == '\r':
		s.col = 0
		return 1, true
	case c == '\n':
		s.row++
		if s.row == len(s.rows) {
			s.rows = append(s.rows, nil)
		}
		return 1, true
	case c == '\b':
		s.col = max(0, s.col-1)
		return 1, true
	case c == 0x1b:
		return s.escape(data)
	case c < 0x20 || c == 0x7f:
		s.errs = append(s.errs, fmt.Sprintf("control character %q", c))
		return 1, true
	}
	if !utf8.FullRune(data) {
		return 0, false
	}
	r, n := utf8.DecodeRune(data)
	switch {
	case r == utf8.RuneError && n == 1:
		s.errs = append(s.errs, fmt.Sprintf("invalid UTF-8 %#x", data[0]))
	case r >= 0x80 && r <= 0x9f:
		// A terminal in UTF-8 mode may act on a C1 control (U+009B is CSI).
		s.errs = append(s.errs, fmt.Sprintf("C1 control %U", r))
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		// Shown, but it reorders what follows: text that reads otherwise.
		s.errs = append(s.errs, fmt.Sprintf("bidirectional control %U", r))
	}
	s.put(r)
	return n, true
}

func (s *Screen) escape(data []byte) (int, bool) {
	if len(data) < 2 {
		return 0, false
	}
	if data[1] != '[' {
		s.errs = append(s.errs, fmt.Sprintf("escape sequence %q", data[:2]))
		return 2, true
	}
	for i := 2; i < len(data); i++ {
		c := data[i]
		if c >= 0x40 && c <= 0x7e {
			s.csi(string(data[2:i]), c)
			return i + 1, true
		}
	}
	return 0, false
}

func (s *Screen) csi(params string, final byte) {
	line := s.rows[s.row]
	switch {
	case final == 'm':
	case final == 'K' && (params == "" || params == "0"):
		if s.col < len(line) {
			s.rows[s.row] = line[:s.col]
		}
	case final == 'K' && params == "1":
		for i := 0; i < min(s.col+1, len(line)); i++ {
			line[i] = ' '
		}
	case final == 'K' && params == "2":
		s.rows[s.row] = nil
	default:
		s.errs = append(s.errs, fmt.Sprintf("CSI sequence %q", "\x1b["+params+string(final)))
	}
}

// put writes r at the cursor; at the last column the line wraps, as a
// terminal's autowrap does.
func (s *Screen) put(r rune) {
	if s.col >= s.width {
		s.row++
		s.col = 0
		if s.row == len(s.rows) {
			s.rows = append(s.rows, nil)
		}
	}
	line := s.rows[s.row]
	for len(line) <= s.col {
		line = append(line, ' ')
	}
	line[s.col] = r
	s.rows[s.row] = line
	s.col++
}

// Lines is the whole screen, scrollback included, each line's trailing
// spaces trimmed; trailing empty lines are left out.
func (s *Screen) Lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, l := range s.rows {
		out = append(out, strings.TrimRight(string(l), " "))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// Current is the line the cursor is on: where a status line is drawn.
func (s *Screen) Current() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.TrimRight(string(s.rows[s.row]), " ")
}

// Cursor is the cursor's row and column.
func (s *Screen) Cursor() (row, col int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.row, s.col
}

// Errors lists what the screen could not interpret.
func (s *Screen) Errors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.errs...)
}

// String is the screen as text, for failure messages.
func (s *Screen) String() string {
	var b strings.Builder
	for i, l := range s.Lines() {
		b.WriteString(strconv.Itoa(i+1) + "|" + l + "\n")
	}
	return b.String()
}
