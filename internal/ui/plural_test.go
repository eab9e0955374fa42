package ui

import "testing"

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n          int
		word, want string
	}{
		{0, "tool call", "0 tool calls"}, {1, "tool call", "1 tool call"}, {2, "tool call", "2 tool calls"},
		{1, "crash", "1 crash"}, {154, "crash", "154 crashes"}, {2, "batch", "2 batches"},
	} {
		if got := Plural(c.n, c.word); got != c.want {
			t.Errorf("Plural(%d, %q) = %q, want %q", c.n, c.word, got, c.want)
		}
	}
}
