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

func TestRawStringIs(t *testing.T) {
	const want = "run_in_background"
	tests := []struct {
		raw  string // a JSON string body as written
		want bool
	}{
		{`run_in_background`, true},
		{`run_in_backgroun\u0064`, true},
		{`\u0072un_in_background`, true},
		{`run\u005fin\u005Fbackground`, true},
		{`run_in_background\u0000`, false},
		{`run_in_backgroun`, false},
		{`run_in_backgroundd`, false},
		{`Run_in_background`, false},
		{`run_in_backgroun\u00e9`, false},
		{`run_in_backgroun\n`, false},
		{`run_in_backgroun\"`, false},
		{``, false},
	}
	for _, tt := range tests {
		if got := rawStringIs([]byte(tt.raw), want); got != tt.want {
			t.Errorf("rawStringIs(%q) = %v, want %v", tt.raw, got, tt.want)
		}
	}
	for _, tt := range []struct {
		raw, want string
	}{
		{`a\"b`, `a"b`}, {`a\\b`, `a\b`}, {`a\/b`, `a/b`}, {`\b\f\n\r\t`, "\b\f\n\r\t"}, {``, ``},
	} {
		if !rawStringIs([]byte(tt.raw), tt.want) {
			t.Errorf("rawStringIs(%q, %q) = false, want true", tt.raw, tt.want)
		}
	}
}
