package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The README's Install section states the Go version go.mod requires,
// exactly: the go line is the minimum the go command accepts, so a README
// that says less sends people to a toolchain that refuses the build.
func TestREADMEStatesGoModVersion(t *testing.T) {
	goMod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(goMod)
	if goLine == nil {
		t.Fatal("go.mod has no go line")
	}
	want := string(goLine[1])
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, install, ok := strings.Cut(string(readme), "\n## Install\n")
	if !ok {
		t.Fatal("README.md has no ## Install section")
	}
	install, _, _ = strings.Cut(install, "\n## ")
	stated := regexp.MustCompile(`\bGo (\d+\.\d+(?:\.\d+)?)`).FindAllStringSubmatch(install, -1)
	if len(stated) == 0 {
		t.Errorf("README's Install section names no Go version; go.mod says go %s", want)
	}
	for _, m := range stated {
		if m[1] != want {
			t.Errorf("README's Install section says %q; go.mod says go %s", m[0], want)
		}
	}
}
