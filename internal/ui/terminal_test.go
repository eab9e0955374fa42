package ui

import (
	"strings"
	"testing"

	"github.com/malarun/malarun/internal/testing/screen"
)

func TestTerminalRedrawsInPlace(t *testing.T) {
	scr := screen.New(40)
	term := NewTerminal(scr, func() int { return 40 })
	term.SetStatus("status one")
	term.SetStatus("status two, longer")
	term.SetStatus("three")
	term.Println("event A")
	term.Write([]byte("log 1\nlog "))
	term.SetStatus("four")
	term.Write([]byte("2\n"))
	want := []string{"event A", "log 1", "log 2", "four"}
	if got := scr.Lines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("screen:\n%s\nwant %q", scr, want)
	}
	if row, col := scr.Cursor(); row != 3 || col != len("four") {
		t.Errorf("cursor at %d,%d, want the end of the status line", row, col)
	}
	term.Write([]byte("unfinished"))
	term.Close()
	want = []string{"event A", "log 1", "log 2", "unfinished"}
	if got := scr.Lines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("after Close:\n%s\nwant %q", scr, want)
	}
	if row, col := scr.Cursor(); row != 4 || col != 0 {
		t.Errorf("after Close the cursor is at %d,%d, want the start of a fresh line", row, col)
	}
	if errs := scr.Errors(); len(errs) > 0 {
		t.Errorf("garbled output: %q", errs)
	}
}

// A status line as wide as the terminal would wrap and could not be erased:
// it is cut to one column less.
func TestTerminalCutsToWidth(t *testing.T) {
	scr := screen.New(20)
	term := NewTerminal(scr, func() int { return 20 })
	term.SetStatus(strings.Repeat("x", 50))
	term.SetStatus(strings.Repeat("y", 50))
	if got := scr.Lines(); len(got) != 1 || got[0] != strings.Repeat("y", 18)+"…" {
		t.Errorf("screen:\n%s", scr)
	}
	term.Close()
	if got := scr.Lines(); len(got) != 0 {
		t.Errorf("after Close:\n%s", scr)
	}
}
