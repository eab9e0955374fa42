package ui

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"unicode/utf8"
)

// jsonString writes what it is given as the inside of a JSON string (no
// quotes), so that a text too big to hold (a result copied from its
// transcript) goes into the --json report as it streams by. Each chunk is
// escaped by encoding/json itself, so the report reads byte for byte as
// json.Marshal would write the whole string: HTML-safe (< > & as \u003c
// ...), U+2028 and U+2029 escaped, invalid UTF-8 as \ufffd. Chunks are cut
// only between runes, where encoding/json's output cannot depend on the
// cut: the first bytes of a rune wait for the next Write.
type jsonString struct {
	w io.Writer
	// defuse writes "##[" as "##\u005b" (GitHub Actions reads the legacy
	// workflow command form anywhere in a line; see github.go); hashes
	// counts the '#' the last chunk ended with, up to two, since "##[" can
	// straddle chunks.
	defuse bool
	hashes int

	pending []byte // a rune's first bytes, waiting for the rest
	in      []byte
	buf     bytes.Buffer
	enc     *json.Encoder
	err     error
}

func newJSONString(w io.Writer, defuse bool) *jsonString {
	s := &jsonString{w: w, defuse: defuse}
	s.enc = json.NewEncoder(&s.buf) // HTML-safe, as json.Marshal
	return s
}

// Write escapes p. After an error of the writer below, everything is
// dropped and the error returned.
func (s *jsonString) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	s.in = append(append(s.in[:0], s.pending...), p...)
	cut := len(s.in) - partialRuneLen(s.in)
	s.pending = append(s.pending[:0], s.in[cut:]...)
	s.write(s.in[:cut])
	if s.err != nil {
		return 0, s.err
	}
	return len(p), nil
}

// Close writes what is still pending: bytes that no rune completed are
// invalid, and come out as encoding/json writes them (\ufffd each).
func (s *jsonString) Close() error {
	if s.err == nil && len(s.pending) > 0 {
		s.write(s.pending)
		s.pending = s.pending[:0]
	}
	return s.err
}

func (s *jsonString) write(text []byte) {
	if len(text) == 0 {
		return
	}
	s.buf.Reset()
	if err := s.enc.Encode(string(text)); err != nil {
		s.err = err // a string always encodes; kept for the contract
		return
	}
	out := s.buf.Bytes()
	out = out[1 : len(out)-2] // the quotes and Encode's newline
	if s.defuse {
		t := strings.Repeat("#", s.hashes) + string(out)
		t = strings.ReplaceAll(t, "##[", `##\u005b`)
		out = []byte(t[s.hashes:])
		s.hashes = min(len(t)-len(strings.TrimRight(t, "#")), 2)
	}
	_, s.err = s.w.Write(out)
}

// partialRuneLen is the length of the rune b ends in the middle of: its
// first bytes are there, the rest could still come. 0 when b ends between
// runes, or in bytes that are invalid whatever follows.
func partialRuneLen(b []byte) int {
	for i := 1; i < utf8.UTFMax && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < utf8.RuneSelf {
			return 0
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(b[len(b)-i:]) {
				return 0
			}
			return i
		}
	}
	return 0
}
