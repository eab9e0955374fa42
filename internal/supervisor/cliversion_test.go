package supervisor

import (
	"os"
	"strings"
	"testing"
)

func TestCLIVersionNote(t *testing.T) {
	for _, c := range []struct {
		v    string
		want string // a word of the note; "" = none
	}{
		{"", ""},
		{"2.1.197", ""},
		{"2.1.250", ""},
		{"2.1.330", ""},
		{"2.1.332", ""},
		{"2.1.196", "older"},
		{"2.0.999", "older"},
		{"2.1.333", "newer"},
		{"2.2.0", "newer"},
		{"3", "newer"},
		{"2.1.330-beta.1", ""},
	} {
		got := cliVersionNote(c.v)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("cliVersionNote(%q) = %q, want one with %q", c.v, got, c.want)
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
