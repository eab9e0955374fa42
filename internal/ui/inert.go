package ui

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text from outside malarun (the result, reasons quoting the model or the
// CLI, tool inputs, a record.json someone planted or damaged) must not drive
// the terminal it is printed on: an escape sequence can retitle the window
// (ESC ] 0 ; title BEL), clear the screen (ESC [ 2 J), move the cursor over
// lines already printed, plant a hyperlink (OSC 8), and bidirectional
// controls can make text display other than it reads. One classifier,
// classify, says what a terminal acts on; two forms apply it:
//
//   - Clean: one line (status line, event lines, a table cell). Everything
//     classify does not call text becomes a space, runs of spaces one.
//   - Inert (and inertWriter for a stream): many lines (the result, the
//     final error lines). Text, white space, '\n' and '\t' are kept as they
//     are; every other C0 control and DEL is shown in caret notation (ESC is
//     "^[", BEL "^G", DEL "^?"), so a reader sees something was there; C1
//     controls, bidirectional controls, U+2028/U+2029 and each byte of
//     invalid UTF-8 become U+FFFD. A CR right before a LF is dropped: a
//     CRLF line end is a line end (the LF alone ends the line on a
//     terminal too), while a lone CR, which would return the cursor over
//     the line, is "^M".
//
// Invisible characters are hidden too (zero-width spaces, the word joiner,
// the byte order mark, soft hyphens, tag characters, variation selectors,
// Hangul fillers: every default-ignorable code point): text that displays
// as nothing can carry what a reader never sees (a prompt smuggled in tag
// characters, a name that looks like another). Three of them join what a
// reader does see, and are text where they do: a variation selector
// (U+FE0E, U+FE0F) right after a text rune picks its look ("⚠️"), and a
// zero-width joiner or non-joiner right after a non-ASCII text rune or a
// kept selector joins an emoji sequence or Persian and Indic letters. Each
// can follow only what it joins, so at most one or two ride on a visible
// rune; a run of them is hidden.
//
// Caret notation is ambiguous with a literal "^[" in the text, as in cat -v:
// it is for a reader, not for decoding.

// runeKind is what a terminal makes of a rune.
type runeKind uint8

const (
	// kindText is printed as it is.
	kindText runeKind = iota
	// kindSpace is white space the terminal only moves over (' ', no-break
	// and other Unicode spaces).
	kindSpace
	kindTab
	kindNewline
	// kindC0 is a C0 control other than '\t' and '\n' (ESC, BEL, CR, BS,
	// ...) or DEL: each can start or be a command to the terminal.
	kindC0
	// kindHidden is what must not reach a terminal and has no caret form:
	// C1 controls U+0080–U+009F (a terminal in UTF-8 mode may take U+009B as
	// CSI, U+009D as OSC, U+009C as ST), the bidirectional embedding,
	// override and isolate controls U+202A–U+202E and U+2066–U+2069 and the
	// bidirectional marks U+200E, U+200F and U+061C (all listed by Trojan
	// Source, CVE-2021-42574), the line and paragraph separators U+2028 and
	// U+2029 (line breaks to some renderers), and a byte of invalid UTF-8 (a
	// raw 0x9B is 8-bit CSI).
	kindHidden
)

// joinAfter is what the rune before allows a joiner to be: the context
// classify needs for the three joiners (see above). Each loop over text
// keeps one and moves it on with next.
type joinAfter uint8

const (
	// joinNone: the start of the text, or after anything but text.
	joinNone joinAfter = iota
	// joinASCII: after an ASCII text rune (a keycap: "1\ufe0f\u20e3").
	joinASCII
	// joinWide: after a non-ASCII text rune (an emoji, a letter).
	joinWide
	// joinSelected: after a kept variation selector.
	joinSelected
)

// classify is the one definition of what a terminal acts on, and of what a
// reader cannot see. r and size are what utf8.DecodeRune returned:
// RuneError of size 1 is a byte of invalid UTF-8, while a real U+FFFD (size
// 3) is text. after is what came before r (joiners depend on it).
func classify(r rune, size int, after joinAfter) runeKind {
	switch {
	case r >= 0x20 && r < 0x7f:
		if r == ' ' {
			return kindSpace
		}
		return kindText
	case r == '\t':
		return kindTab
	case r == '\n':
		return kindNewline
	case r < 0x20 || r == 0x7f:
		return kindC0
	case r == utf8.RuneError && size <= 1,
		r >= 0x80 && r <= 0x9f,
		r >= 0x202a && r <= 0x202e,
		r >= 0x2066 && r <= 0x2069,
		r == 0x200e || r == 0x200f || r == 0x061c,
		r == 0x2028 || r == 0x2029:
		return kindHidden
	case r == 0xfe0e || r == 0xfe0f:
		if after == joinASCII || after == joinWide {
			return kindText
		}
		return kindHidden
	case r == 0x200c || r == 0x200d:
		if after == joinWide || after == joinSelected {
			return kindText
		}
		return kindHidden
	case invisible(r):
		return kindHidden
	case unicode.IsSpace(r):
		return kindSpace
	}
	return kindText
}

// next is the context after r, which classify called k.
func (joinAfter) next(r rune, k runeKind) joinAfter {
	switch {
	case k != kindText:
		return joinNone
	case r == 0xfe0e || r == 0xfe0f:
		return joinSelected
	case r == 0x200c || r == 0x200d:
		return joinNone // a joiner joins to what follows, which must be seen
	case r < utf8.RuneSelf:
		return joinASCII
	}
	return joinWide
}

// invisible reports a default-ignorable code point (Unicode's property:
// format characters, the other default ignorables, variation selectors),
// which displays as nothing. The prepended concatenation marks are format
// characters that display (the Arabic number sign).
func invisible(r rune) bool {
	if r < 0xad {
		return false
	}
	return (unicode.Is(unicode.Cf, r) && !unicode.Is(unicode.Prepended_Concatenation_Mark, r)) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Variation_Selector, r)
}

// keptASCII is classify for an ASCII byte that Inert keeps (text, ' ',
// '\t', '\n'), spelled out for speed; a test holds it to classify.
func keptASCII(b byte) bool {
	return b >= 0x20 && b < 0x7f || b == '\t' || b == '\n'
}

// Clean makes text from outside malarun (tool inputs, reasons quoting the
// model) safe to print on one terminal line: every rune that is not text
// (see classify) becomes a space (escape sequences' ESC included, so
// "\x1b[2J" shows as " [2J"), runs of white space one space. At most max
// runes are kept (0: no limit), with an ellipsis when cut.
func Clean(s string, max int) string {
	var b strings.Builder
	space := false
	n := 0
	after := joinNone
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		k := classify(r, size, after)
		after = after.next(r, k)
		if k != kindText {
			if !space && b.Len() > 0 {
				b.WriteByte(' ')
				n++
			}
			space = true
			continue
		}
		space = false
		if max > 0 && n >= max {
			return strings.TrimRight(b.String(), " ") + "…"
		}
		b.WriteRune(r)
		n++
	}
	return strings.TrimRight(b.String(), " ")
}

// Inert makes text from outside malarun safe to print on a terminal as
// many lines: '\n' and '\t' are kept, everything else a terminal acts on is
// shown in caret notation or as U+FFFD (see classify and the rules above).
// Text that needs no change comes back as it is.
func Inert(s string) string {
	if isInert(s) {
		return s
	}
	after := joinNone
	out, _ := appendInert(make([]byte, 0, len(s)+16), []byte(s), true, &after)
	return string(out)
}

// isInert reports whether Inert would leave s as it is.
func isInert(s string) bool {
	after := joinNone
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		k := classify(r, size, after)
		if k == kindC0 || k == kindHidden {
			return false
		}
		after = after.next(r, k)
	}
	return true
}

// appendInert appends the inert form of p to dst. Unless final, it stops
// before an incomplete UTF-8 sequence or a CR at the end of p, which the
// next bytes decide, and returns how much of p it used: the rest (at most
// utf8.UTFMax-1 bytes) must come again in front of the next bytes. With
// final it uses all of p: an incomplete sequence is invalid UTF-8. after is
// the context of the text before p, and becomes that of the text used.
func appendInert(dst, p []byte, final bool, after *joinAfter) ([]byte, int) {
	i := 0
	for i < len(p) {
		// A run of ASCII kept as it is, the bulk of most text, is copied whole.
		j := i
		for j < len(p) && keptASCII(p[j]) {
			j++
		}
		dst = append(dst, p[i:j]...)
		if j > i {
			last := rune(p[j-1])
			*after = after.next(last, classify(last, 1, joinNone))
		}
		if i = j; i == len(p) {
			break
		}
		if !final && !utf8.FullRune(p[i:]) {
			return dst, i
		}
		r, size := utf8.DecodeRune(p[i:])
		k := classify(r, size, *after)
		switch k {
		case kindC0:
			if r == '\r' {
				if i+1 == len(p) && !final {
					return dst, i // a CRLF split between writes
				}
				if i+1 < len(p) && p[i+1] == '\n' {
					i++ // the LF that follows ends the line
					*after = joinNone
					continue
				}
			}
			dst = append(dst, '^', byte(r)^0x40)
		case kindHidden:
			dst = utf8.AppendRune(dst, utf8.RuneError)
		default:
			dst = append(dst, p[i:i+size]...)
		}
		*after = after.next(r, k)
		i += size
	}
	return dst, i
}
