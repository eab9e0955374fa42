package notrun

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

var at = time.Date(2026, 11, 27, 1, 2, 3, 0, time.UTC)

// A note is read back as written, a file refused again replaces its note,
// and a fleet's clear removes its folder's notes only.
func TestWriteReadClear(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state") // not made yet: a fleet may refuse before any run
	two := 2
	for _, n := range []Note{
		{File: "prompts/fix the login.md", Reason: "not an issue id", At: at},
		{File: "prompts/g.md", Issue: "g", Reason: "malarun: exit 2", ExitCode: &two, At: at.Add(time.Second)},
		{File: "other/h.md", Issue: "h", Reason: "exit 2", ExitCode: &two, At: at.Add(2 * time.Second)},
		{File: "prompts/fix the login.md", Reason: "not an issue id, again", At: at.Add(3 * time.Second)},
	} {
		if err := Write(state, n); err != nil {
			t.Fatal(err)
		}
	}
	notes, notRead, err := Read(state)
	if err != nil || notRead != 0 || len(notes) != 3 {
		t.Fatalf("%d notes (%d not read), %v; want 3", len(notes), notRead, err)
	}
	if n := notes[2]; n.File != "prompts/fix the login.md" || n.Reason != "not an issue id, again" {
		t.Errorf("the note refused again: %+v, want the later one", n)
	}
	if n := notes[0]; n.Issue != "g" || n.ExitCode == nil || *n.ExitCode != 2 {
		t.Errorf("the exit-2 note: %+v", n)
	}
	if st, err := os.Stat(filepath.Join(state, DirName)); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the folder: %v, %v; want 0700", err, st.Mode())
	}
	if removed, err := Clear(state, "prompts/"); err != nil || removed != 2 {
		t.Fatalf("clear: %d, %v; want 2", removed, err)
	}
	if notes, _, _ := Read(state); len(notes) != 1 || notes[0].File != "other/h.md" {
		t.Errorf("after clearing prompts/: %+v, want other/h.md's only", notes)
	}
}

// What is planted in the folder is counted, never trusted or waited on: a
// note under another note's name, a link, a FIFO, one too big, one with an
// exit code or a time no note has; the folder as a link is refused.
func TestPlantedNotes(t *testing.T) {
	state := t.TempDir()
	if err := Write(state, Note{File: "p/a.md", Reason: "x", At: at}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(state, DirName)
	good, _ := os.ReadFile(path(state, "p/a.md"))
	plant := func(name string, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	plant("0000.json", string(good)) // a copy under a name not its own
	plant(filepath.Base(path(state, "p/big.md")), `{"file":"p/big.md","reason":"`+strings.Repeat("x", maxNoteBytes)+`","at":"2026-11-27T01:02:03Z"}`)
	plant(filepath.Base(path(state, "p/code.md")), `{"file":"p/code.md","reason":"x","exit_code":300,"at":"2026-11-27T01:02:03Z"}`)
	plant(filepath.Base(path(state, "p/old.md")), `{"file":"p/old.md","reason":"x","at":"1970-01-01T00:00:00Z"}`)
	plant("notes.txt", "not a note")
	if err := os.Symlink("/etc/passwd", path(state, "p/link.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path(state, "p/fifo.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var notes []Note
	var notRead int
	var err error
	go func() { defer close(done); notes, notRead, err = Read(state) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("reading the notes did not end in a minute: the FIFO blocked it")
	}
	if err != nil || len(notes) != 1 || notes[0].File != "p/a.md" || notRead != 6 {
		t.Errorf("notes %+v, %d not read, %v; want p/a.md and 6 not read", notes, notRead, err)
	}
	elsewhere := t.TempDir()
	linked := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(linked, DirName)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Read(linked); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("the folder as a link: %v, want it refused", err)
	}
	if err := Write(linked, Note{File: "p/a.md", Reason: "x", At: at}); err == nil {
		t.Errorf("a note was written through a linked folder")
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("%d files written where the link leads", len(entries))
	}
}

// A note's strings are cut to their bounds, ending on a whole rune, and
// made valid UTF-8; past MaxNotes the notes are counted.
func TestBounds(t *testing.T) {
	state := t.TempDir()
	long := strings.Repeat("é", fileMax) + "\xff"
	if err := Write(state, Note{File: "p/" + long, Reason: long, At: at}); err != nil {
		t.Fatal(err)
	}
	notes, _, err := Read(state)
	if err != nil || len(notes) != 1 {
		t.Fatalf("%d notes, %v", len(notes), err)
	}
	if n := notes[0]; len(n.File) > fileMax || len(n.Reason) > reasonMax || !strings.HasSuffix(n.Reason, "é…") {
		t.Errorf("file %d bytes, reason %d bytes ending %q: want them cut to %d and %d on a rune", len(n.File), len(n.Reason),
			n.Reason[len(n.Reason)-8:], fileMax, reasonMax)
	}
	if err := Write(state, Note{Reason: "x", At: at}); err == nil {
		t.Errorf("a note without a file was written")
	}
	for i := range MaxNotes + 5 {
		if err := Write(state, Note{File: "q/" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + ".md" + strings.Repeat(" ", i/182), Reason: "x", At: at}); err != nil {
			t.Fatal(err)
		}
	}
	notes, notRead, err := Read(state)
	if err != nil || len(notes) != MaxNotes || notRead == 0 {
		t.Errorf("%d notes, %d not read, %v; want %d and the rest counted", len(notes), notRead, err, MaxNotes)
	}
}
