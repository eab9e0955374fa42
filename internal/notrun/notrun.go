// Package notrun keeps the prompt files a fleet recipe could not run, in
// the state directory, so that the morning's `malarun summary` names them
// (docs/many-issues.md, "Prompt files a fleet could not run"). A recipe
// refuses a file whose name is no issue id before any malarun starts, and
// a malarun that exits 2 (a configuration error) writes no record: without
// a note, neither would leave a trace where the summary reads.
//
// The place is <state_dir>/not-run/ (DirName, a name no issue may take):
// one JSON file per prompt file, named by a hash of its path, so a file
// refused again replaces its note and the folder holds at most one note
// per prompt. Everything read there is outside input: notes are opened
// the statefile way (no link, FIFO or device), each at most maxNoteBytes,
// at most MaxNotes of them, every field checked and cut.
package notrun

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/malarun/malarun/internal/statefile"
)

// DirName is the folder of the notes under the state directory. The
// supervisor refuses it as an issue id, as it does usage-limits.
const DirName = "not-run"

// Bounds of what is written and read.
const (
	// maxNoteBytes is the most a note file may hold.
	maxNoteBytes = 8 << 10
	// MaxNotes is how many notes a read takes; the rest are counted.
	MaxNotes = 1000
	// fileMax and reasonMax cut a note's file name and reason (bytes).
	fileMax   = 1024
	reasonMax = 1024
)

// Note is one prompt file a recipe could not run.
type Note struct {
	// File is the prompt file as the recipe named it (outside text:
	// escape it before showing it).
	File string `json:"file"`
	// Issue is the issue id the file's name gives ("" when it gives none).
	Issue string `json:"issue,omitempty"`
	// Reason is why it was not run, in the recipe's words or the end of
	// malarun's error.
	Reason string `json:"reason"`
	// ExitCode is malarun's, when it ran and refused (2: a configuration
	// error); nil when the recipe refused the file itself.
	ExitCode *int      `json:"exit_code,omitempty"`
	At       time.Time `json:"at"`
}

// path is where the note of a prompt file lives: a hash of its path, so
// any name, however hostile, makes a plain file name.
func path(stateDir, file string) string {
	sum := sha256.Sum256([]byte(file))
	return filepath.Join(stateDir, DirName, hex.EncodeToString(sum[:16])+".json")
}

// Write keeps n (its file and reason cut to their bounds) in stateDir,
// replacing an earlier note of the same file. The note is written whole
// to a new file and renamed into place, so a reader sees one note or the
// other; the folders are made 0700 when missing, and the notes' refused
// when it is a link or not a folder.
func Write(stateDir string, n Note) error {
	n.File, n.Reason = cut(n.File, fileMax), cut(n.Reason, reasonMax)
	if n.File == "" {
		return errors.New("a not-run note needs the prompt file's name")
	}
	dir := filepath.Join(stateDir, DirName)
	if err := os.MkdirAll(stateDir, 0o700); err != nil { // as a run makes it: a fleet may refuse before any runs
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if err := checkDir(dir); err != nil {
		return err
	}
	data, err := json.Marshal(n)
	if err != nil {
		return err
	}
	final := path(stateDir, n.File)
	tmp := fmt.Sprintf("%s.%d.tmp", final, os.Getpid())
	f, err := statefile.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(append(data, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// Clear removes the notes of the prompt files directly in promptsDir (as
// each note names its file): a recipe clears its own before it runs the
// folder again, so that a file renamed or removed since is no longer
// named. Notes of other folders, and anything that is not a note, stay.
func Clear(stateDir, promptsDir string) (removed int, err error) {
	notes, _, err := Read(stateDir)
	if err != nil {
		return 0, err
	}
	want := filepath.Clean(promptsDir)
	for _, n := range notes {
		if filepath.Dir(filepath.Clean(n.File)) != want {
			continue
		}
		if err := os.Remove(path(stateDir, n.File)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, err
		}
		removed++
	}
	return removed, nil
}

// Read is the notes of stateDir, oldest first (no folder: none): the first
// MaxNotes the folder lists. notRead counts the others: past MaxNotes, or
// not fit to read (a link, a
// FIFO, too big, not a note). A folder that is a link, or not a folder,
// is an error: nothing is read through it.
func Read(stateDir string) (notes []Note, notRead int, err error) {
	dir := filepath.Join(stateDir, DirName)
	if err := checkDir(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, 0, nil
		}
		return nil, 0, err
	}
	d, err := os.Open(dir)
	if err != nil {
		return nil, 0, err
	}
	defer d.Close()
	for {
		// In batches: a folder of millions of planted names is counted,
		// never held.
		entries, err := d.ReadDir(1024)
		for _, e := range entries {
			name := e.Name()
			if !strings.HasSuffix(name, ".json") {
				continue // a note being written, or not one of ours
			}
			if len(notes) >= MaxNotes {
				notRead++
				continue
			}
			n, err := readNote(filepath.Join(dir, name))
			if err != nil || path(stateDir, n.File) != filepath.Join(dir, name) {
				notRead++ // not written by Write: planted, or damaged
				continue
			}
			notes = append(notes, n)
		}
		if err != nil || len(entries) == 0 {
			break
		}
	}
	slices.SortFunc(notes, func(a, b Note) int { return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.File, b.File)) })
	return notes, notRead, nil
}

func readNote(p string) (Note, error) {
	data, err := statefile.Read(p, maxNoteBytes)
	if err != nil {
		return Note{}, err
	}
	var n Note
	if err := json.Unmarshal(data, &n); err != nil {
		return Note{}, err
	}
	switch {
	case n.File == "" || len(n.File) > fileMax || len(n.Reason) > reasonMax:
		return Note{}, errors.New("a field out of bounds")
	case n.ExitCode != nil && (*n.ExitCode < 0 || *n.ExitCode > 255):
		return Note{}, errors.New("an exit code out of range")
	case n.At.Year() < 2000 || n.At.Year() >= 2100:
		return Note{}, errors.New("a time out of range")
	}
	return n, nil
}

// checkDir refuses a folder that is a link or not a folder.
func checkDir(dir string) error {
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a folder (a link or a file there is never followed)", dir)
	}
	return nil
}

// cut keeps at most max bytes of s, ending on a whole rune, with an
// ellipsis when it cut; invalid UTF-8 becomes U+FFFD first.
func cut(s string, max int) string {
	s = strings.ToValidUTF8(s, "\ufffd")
	if len(s) <= max {
		return s
	}
	end := max - len("…")
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + "…"
}
