package supervisor

import (
	"os"
	"strings"
	"testing"
)

func TestCLIVersionOutsideTheRange(t *testing.T) {
	for _, c := range []struct {
		v             string
		tooOld, newer bool
	}{
		{"", false, false},
		{"2.1.197", false, false},
		{"2.1.250", false, false},
		{"2.1.330", false, false},
		{"2.1.332", false, false},
		{"2.1.196", true, false},
		{"2.0.999", true, false},
		{"2.1.333", false, true},
		{"2.2.0", false, true},
		{"3", false, true},
		{"2.1.330-beta.1", false, false},
	} {
		if got := tooOld(c.v); got != c.tooOld {
			t.Errorf("tooOld(%q) = %v", c.v, got)
		}
		if got := newerThanTested(c.v); got != c.newer {
			t.Errorf("newerThanTested(%q) = %v", c.v, got)
		}
	}
}

// The README states the range the code warns outside of.
func TestREADMEStatesTheSupportedCLIRange(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := OldestSupportedCLI + " to " + NewestTestedCLI
	if !strings.Contains(string(b), want) {
		t.Errorf("README.md does not say %q", want)
	}
}
