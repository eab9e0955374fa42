package replay

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/malarun/malarun/internal/statefile"
)

// transcriptNumber is the attempt whose stdout the file name is in a run
// folder (attempt-N.jsonl, N from 1 to 999999 without leading zeros), or 0.
func transcriptNumber(name string) int {
	digits, isAttempt := strings.CutPrefix(name, "attempt-")
	digits, isJSONL := strings.CutSuffix(digits, ".jsonl")
	if !isAttempt || !isJSONL || len(digits) == 0 || len(digits) > 6 || digits[0] == '0' {
		return 0
	}
	n := 0
	for _, c := range []byte(digits) {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// AttemptNumbers lists the attempts of a run folder that have a transcript
// (attempt-N.jsonl), in order: show walks them, the summary takes the last
// as the attempt that runs now.
func AttemptNumbers(runDir string) ([]int, error) {
	entries, err := os.ReadDir(runDir)
	if err != nil {
		return nil, err
	}
	var ns []int
	for _, e := range entries {
		if n := transcriptNumber(e.Name()); n > 0 {
			ns = append(ns, n)
		}
	}
	slices.Sort(ns)
	return ns, nil
}

// promptLines is how much of a prompt the story shows.
const (
	promptLines = 6
	promptBytes = 4 << 10
)

// promptOf reads the first lines of attempt n's prompt: attempt-N.prompt.md
// when malarun wrote one (resume, checkpoint, continuation), else the run's
// prompt.md. Its size is the file's.
func promptOf(runDir string, n int) (name, text string, size int64, err error) {
	name = fmt.Sprintf("attempt-%d.prompt.md", n)
	f, err := statefile.Open(filepath.Join(runDir, name))
	if errors.Is(err, os.ErrNotExist) {
		name = "prompt.md"
		f, err = statefile.Open(filepath.Join(runDir, name))
	}
	if err != nil {
		return name, "", 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return name, "", 0, err
	}
	buf := make([]byte, promptBytes)
	k, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return name, "", 0, err
	}
	return name, firstLines(validUTF8(buf[:k]), promptLines), fi.Size(), nil
}

// firstLines keeps the first n lines of s.
func firstLines(s string, n int) string {
	at := 0
	for range n {
		i := strings.IndexByte(s[at:], '\n')
		if i < 0 {
			return strings.TrimRight(s, "\n")
		}
		at += i + 1
	}
	return strings.TrimRight(s[:at], "\n")
}

// validUTF8 makes b a string: a rune cut at its end (the read stopped in
// it) is dropped, any other invalid byte replaced.
func validUTF8(b []byte) string {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				b = b[:i]
			}
			break
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
