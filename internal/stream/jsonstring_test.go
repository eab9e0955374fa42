package stream

import "testing"

func TestStrSpecialTable(t *testing.T) {
	if len(strSpecial) != 256 {
		t.Fatalf("table has %d entries", len(strSpecial))
	}
	for c := range 256 {
		want := c < 0x20 || c == '"' || c == '\\'
		if got := strSpecial[c] != 0; got != want {
			t.Errorf("strSpecial[%#x] = %v, want %v", c, got, want)
		}
	}
}

// TestPlainRun checks the eight-byte test against the byte table for every
// pair of byte values at every pair of positions: it may stop early, which
// only costs speed, but must never step over a special byte.
func TestPlainRun(t *testing.T) {
	var b [8]byte
	for p := range 8 {
		for q := p; q < 8; q++ {
			for c1 := range 256 {
				for c2 := range 256 {
					for k := range b {
						b[k] = 'a'
					}
					b[p], b[q] = byte(c1), byte(c2)
					special := strSpecial[b[p]] != 0 || strSpecial[b[q]] != 0
					n := plainRun(b[:])
					if special && n != 0 || !special && n != 8 {
						t.Fatalf("plainRun(%q) = %d", b, n)
					}
				}
			}
		}
	}
}
