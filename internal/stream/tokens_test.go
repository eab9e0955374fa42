package stream

import (
	"encoding/json"
	"testing"
)

func TestTokensAdd(t *testing.T) {
	const top = maxTokenSum
	for _, c := range []struct {
		name    string
		a, b    int64
		want    int64
		comment string
	}{
		{"zero", 0, 0, 0, ""},
		{"plain", 1200, 34, 1234, ""},
		{"at the decoder's bound", maxTokens, maxTokens, 2 * maxTokens, "far inside the cap"},
		{"reaches the cap", top - 1, 1, top, ""},
		{"past the cap", top - 1, 2, top, "saturates, never wraps"},
		{"cap plus cap", top, top, top, ""},
		{"above the cap", 1<<63 - 1, 1<<63 - 1, top, "a planted count is clamped first"},
		{"negative", -5, 7, 7, "a planted negative counts as 0"},
		{"both negative", -1 << 63, -1, 0, ""},
	} {
		a, b := Tokens{c.a, c.a, c.a, c.a}, Tokens{c.b, c.b, c.b, c.b}
		want := Tokens{c.want, c.want, c.want, c.want}
		if got := a.Add(b); got != want {
			t.Errorf("%s: %d + %d = %+v, want %d each (%s)", c.name, c.a, c.b, got, c.want, c.comment)
		}
		if got := b.Add(a); got != want {
			t.Errorf("%s: %d + %d = %+v, want %d each: Add is not symmetric", c.name, c.b, c.a, got, c.want)
		}
	}
	// Each count is summed on its own.
	got := Tokens{1, 2, 3, 4}.Add(Tokens{10, 20, 30, 40})
	if got != (Tokens{InputTokens: 11, OutputTokens: 22, CacheCreationInputTokens: 33, CacheReadInputTokens: 44}) {
		t.Errorf("counts mixed up: %+v", got)
	}
}

// The cap is a number a float64 reader holds exactly: what malarun prints
// at the cap reads back as itself.
func TestMaxTokenSumIsExactInFloat64(t *testing.T) {
	raw, err := json.Marshal(Tokens{InputTokens: maxTokenSum})
	if err != nil {
		t.Fatal(err)
	}
	var back struct{ Input float64 }
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if back.Input != maxTokenSum || int64(back.Input) != maxTokenSum {
		t.Errorf("%s read as float64 is %v, not %d", raw, back.Input, maxTokenSum)
	}
	if string(raw) != `{"input":9007199254740991,"output":0,"cache_creation_input":0,"cache_read_input":0}` {
		t.Errorf("the tokens' one JSON form changed: %s", raw)
	}
}
