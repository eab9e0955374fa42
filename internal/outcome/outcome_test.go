package outcome

import (
	"errors"
	"fmt"
	"testing"
)

func TestOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want Outcome
	}{
		{nil, Success},
		{Budget, Budget},
		{fmt.Errorf("run: %w", RetriesExhausted), RetriesExhausted},
		{errors.New("disk full"), Error},
	} {
		if got := Of(c.err); got != c.want {
			t.Errorf("Of(%v) = %q, want %q", c.err, got, c.want)
		}
	}
	if !errors.Is(fmt.Errorf("x: %w", Interrupted), Interrupted) || errors.Is(Interrupted, SessionTimeout) {
		t.Error("errors.Is must match an outcome by its name")
	}
}
