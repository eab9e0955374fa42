package usd

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestRoundPrintsAtMostSixDecimals(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want string
	}{
		{0.0001 + 0.0005, "0.0006"}, // 0.0006000000000000001 unrounded
		{0.1 + 0.2, "0.3"},
		{0.750625, "0.750625"},
		{0.0000004, "0"},
		{0.0000005, "0.000001"},
		{-0.0000005, "-0.000001"},
		{1.23456789, "1.234568"},
		{0, "0"},
		{12345.6789014, "12345.678901"},
		{1e12, "1000000000000"}, // too large to scale: as it is
	} {
		b, err := json.Marshal(Round(c.in))
		if err != nil || string(b) != c.want {
			t.Errorf("Round(%v) prints %s (%v), want %s", c.in, b, err, c.want)
		}
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got := Round(v); strconv.FormatFloat(got, 'g', -1, 64) != strconv.FormatFloat(v, 'g', -1, 64) {
			t.Errorf("Round(%v) = %v, want it as it is", v, got)
		}
	}
}

// Any sum of costs of six decimals prints with six decimals at most.
func TestRoundOfSumsOfMillionths(t *testing.T) {
	sum := 0.0
	for i := 1; i <= 5000; i++ {
		sum += float64(i%997) / 1e6
		s := strconv.FormatFloat(Round(sum), 'f', -1, 64)
		if dot := strings.IndexByte(s, '.'); dot >= 0 && len(s)-1-dot > decimals {
			t.Fatalf("after %d additions the sum %v prints as %s", i, sum, s)
		}
	}
}
