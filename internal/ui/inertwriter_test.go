package ui

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// writeChunks writes s to a new inertWriter in pieces cut at cuts (offsets
// in any order, out of range ones ignored), then closes it.
func writeChunks(t *testing.T, s []byte, cuts []int) string {
	t.Helper()
	var out bytes.Buffer
	iw := NewInertWriter(&out)
	prev := 0
	for _, c := range append(cuts, len(s)) {
		if c < prev || c > len(s) {
			continue
		}
		if n, err := iw.Write(s[prev:c]); n != c-prev || err != nil {
			t.Fatalf("Write = %d, %v; want %d, nil", n, err, c-prev)
		}
		if iw.nheld > 3 {
			t.Fatalf("%d bytes held", iw.nheld)
		}
		prev = c
	}
	if err := iw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// The stream form is the string form, however the text is cut.
func TestInertWriterMatchesInert(t *testing.T) {
	corpus := setTitle + "a\r\nb\rc" + clearScreen + csi8bit + csiC1 + hyperlink + bidi + invalid +
		"日本語 🙂 \u2028\r\x00\x7f" + invalid + "👨\u200d👩 ⚠\ufe0f\ufe0f\u200b 1\ufe0f" + "\r"
	want := Inert(corpus)
	// Every cut into two, and into three.
	for i := 0; i <= len(corpus); i++ {
		for j := i; j <= len(corpus); j++ {
			if got := writeChunks(t, []byte(corpus), []int{i, j}); got != want {
				t.Fatalf("cut at %d and %d: %q, want %q", i, j, got, want)
			}
		}
	}
	// Byte by byte.
	var cuts []int
	for i := range len(corpus) {
		cuts = append(cuts, i)
	}
	if got := writeChunks(t, []byte(corpus), cuts); got != want {
		t.Fatalf("byte by byte: %q, want %q", got, want)
	}
	// Random bytes cut at random: seeded, so a failure repeats.
	rng := rand.New(rand.NewPCG(1, 2))
	// Bytes that start, continue and end sequences, and the ones Inert acts on.
	alphabet := []byte("a\r\n\x1b\x9b\xe2\x80\xae\xf0\x9f\x99\x82\xc2\x8d\xef\xb8\x8f")
	for range 2000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		cuts := []int{rng.IntN(len(b) + 1), rng.IntN(len(b) + 1), rng.IntN(len(b) + 1)}
		cuts[1] = max(cuts[1], cuts[0])
		cuts[2] = max(cuts[2], cuts[1])
		if got, want := writeChunks(t, b, cuts), Inert(string(b)); got != want {
			t.Fatalf("%q cut at %v: %q, want %q", b, cuts, got, want)
		}
	}
}

// largestWriter records the largest write it was given.
type largestWriter struct {
	bytes.Buffer
	largest int
}

func (c *largestWriter) Write(p []byte) (int, error) {
	c.largest = max(c.largest, len(p))
	return c.Buffer.Write(p)
}

// One write of any size is made inert in pieces: sequences cut at a
// piece's end included, and the writer's memory does not grow with it.
func TestInertWriterLargeWrite(t *testing.T) {
	var b strings.Builder
	for b.Len() < 5*inertChunk {
		b.WriteString("ok \x1b[2J 日本 \r\n\xe2\x80\xae ")
	}
	// A sequence and a CRLF across every piece boundary.
	s := []byte(b.String())
	for i := 1; i <= 4; i++ {
		if i%2 == 1 {
			copy(s[i*inertChunk-2:], "日")
		} else {
			copy(s[i*inertChunk-1:], "\r\n")
		}
	}
	out := &largestWriter{}
	iw := NewInertWriter(out)
	if n, err := iw.Write(s); n != len(s) || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if err := iw.Close(); err != nil {
		t.Fatal(err)
	}
	if want := Inert(string(s)); out.String() != want {
		t.Errorf("a large write differs from Inert")
	}
	if out.largest > 3*inertChunk {
		t.Errorf("a write of %d bytes to w: the buffer grows with the input", out.largest)
	}
	if cap(iw.buf) > 3*inertChunk+16 {
		t.Errorf("buffer of %d bytes", cap(iw.buf))
	}
}

type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("disk full")
	}
	f.n--
	return len(p), nil
}

// The first error of w is returned, then again by every later call; a
// write after Close fails.
func TestInertWriterErrors(t *testing.T) {
	iw := NewInertWriter(&failingWriter{n: 1})
	if _, err := iw.Write([]byte("one")); err != nil {
		t.Fatal(err)
	}
	if n, err := iw.Write([]byte("two")); n != 0 || err == nil || err.Error() != "disk full" {
		t.Fatalf("Write = %d, %v; want the writer's error", n, err)
	}
	if _, err := iw.Write([]byte("three")); err == nil || err.Error() != "disk full" {
		t.Fatalf("Write after an error = %v", err)
	}
	if err := iw.Close(); err == nil {
		t.Fatal("Close after an error = nil")
	}

	var out bytes.Buffer
	iw = NewInertWriter(&out)
	iw.Write([]byte("cut \xe2\x82"))
	if err := iw.Close(); err != nil || out.String() != "cut \ufffd\ufffd" {
		t.Fatalf("Close = %v, wrote %q", err, out.String())
	}
	if err := iw.Close(); err != nil {
		t.Fatalf("a second Close = %v", err)
	}
	if _, err := iw.Write([]byte("x")); err == nil {
		t.Fatal("Write after Close = nil")
	}
}

func FuzzInertWriter(f *testing.F) {
	for _, s := range []string{setTitle, clearScreen, csi8bit, csiC1, hyperlink, bidi, invalid, "a\r\nb\r", "日本🙂"} {
		f.Add([]byte(s), []byte{1, 2, 3})
	}
	f.Fuzz(func(t *testing.T, s, cutBytes []byte) {
		var cuts []int
		at := 0
		for _, c := range cutBytes {
			at += int(c % 8)
			cuts = append(cuts, at)
		}
		want := Inert(string(s))
		if got := writeChunks(t, s, cuts); got != want {
			t.Fatalf("%q cut at %v: %q, want %q", s, cuts, got, want)
		}
		checkInert(t, string(s), want, true)
		checkInert(t, string(s), Clean(string(s), 0), false)
	})
}

func BenchmarkInertWriter(b *testing.B) {
	chunk := []byte(strings.Repeat("The quick brown fox jumps over the lazy dog; 日本語.\n", 700))
	iw := NewInertWriter(&bytes.Buffer{})
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		iw.w.(*bytes.Buffer).Reset()
		iw.Write(chunk)
	}
}

func BenchmarkInertWriterASCII(b *testing.B) {
	chunk := []byte(strings.Repeat("The quick brown fox jumps over the lazy dog.\tok\n", 700))
	iw := NewInertWriter(&bytes.Buffer{})
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		iw.w.(*bytes.Buffer).Reset()
		iw.Write(chunk)
	}
}
