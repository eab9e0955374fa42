package manpage

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain words", "plain words"},
		{`a\b`, `a\eb`},
		{`\fB bold?`, `\efB bold?`},
		{"--flag -x", `\-\-flag \-x`},
		{"it's `x` ^ ~", `it\(aqs \(gax\(ga \(ha \(ti`},
		{"caf\u00e9 \u2014 \U0001F600", `caf\[u00E9] \[u2014] \[u1F600]`},
		{"esc\x1b[31m bel\a nl\ncr\rdel\x7f c1\u009b", `esc [31m bel  nl cr del  c1 `},
		{"bad \xff utf8", `bad \[uFFFD] utf8`},
		{`"quoted"`, `"quoted"`},
	} {
		if got := escape(tt.in); got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestText(t *testing.T) {
	got := Text("one\nparagraph\n\n  an example\n    indented more\n\n\nlast")
	want := []Block{Para("one\nparagraph"), Pre("  an example\n    indented more"), Para("last")}
	if len(got) != len(want) {
		t.Fatalf("got %d blocks %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i].kind != want[i].kind || got[i].text != want[i].text {
			t.Errorf("block %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// hostile is text that would be roff if it were not escaped: requests at
// the start of a line, escapes, a control line made with an apostrophe,
// quotes that would end a macro argument.
const hostile = ".SH INJECTED\n'br\n\\fBbold\\fR \\\" comment\n.\\\" gone\n\"quote\" -- rm -rf ~ ^x `y`\n    .TH indented"

func hostilePage() Page {
	return Page{
		Name: "tool", Section: "1", Date: `2026-"01"`, Source: `tool v1 "x"`, Manual: "User Commands",
		Sections: []Section{
			{Title: "NAME", Blocks: []Block{Para("tool - does things")}},
			{Title: ".SH evil \"title\"", Blocks: []Block{Para(hostile), Pre(hostile), Sub(hostile),
				Item([]Span{B(".bold"), R(" "), I("'it")}, hostile), Lines([]Span{B(".x")}, []Span{R("'y")})}},
		},
	}
}

// Every line that roff reads as a request is one the writer meant; no
// hyphen is left to be a hyphen; the page is ASCII.
func TestWriteEscapesEverything(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, hostilePage()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	requests := map[string]bool{`.\"`: true, ".TH": true, ".nh": true, ".ad": true, ".SH": true, ".SS": true,
		".PP": true, ".TP": true, ".RS": true, ".RE": true, ".nf": true, ".fi": true, ".br": true}
	for i, l := range strings.Split(strings.TrimSuffix(page, "\n"), "\n") {
		if l == "" {
			t.Errorf("line %d is empty (a blank line in roff output)", i+1)
			continue
		}
		if l[0] == '.' || l[0] == '\'' {
			name, _, _ := strings.Cut(l, " ")
			if !requests[name] || strings.HasPrefix(l, ".SH INJECTED") || strings.HasPrefix(l, ".TH indented") {
				t.Errorf("line %d is a request the writer did not mean: %q", i+1, l)
			}
		}
		for j := 0; j < len(l); j++ {
			if c := l[j]; c >= 0x80 || c < 0x20 {
				t.Errorf("line %d has byte %#x: %q", i+1, c, l)
			}
			if l[j] == '-' && (j == 0 || l[j-1] != '\\') {
				t.Errorf("line %d has a bare hyphen at %d: %q", i+1, j, l)
			}
		}
	}
	for _, want := range []string{
		`.TH "TOOL" "1" "2026\-\(dq01\(dq" "tool v1 \(dqx\(dq" "User Commands"`,
		`.SH ".SH EVIL \(dqTITLE\(dq"`,
		`\&.SH INJECTED`,
		`\(aqbr`,
		`\efBbold\efR \e" comment`,
		`.TP` + "\n" + `\fB.bold\fR \fI\(aqit\fR`,
		"tool \\- does things\n",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
}

// groff reads the hostile page without a warning and prints the hostile
// text as it was written.
func TestGroffRendersTheTextAsWritten(t *testing.T) {
	groff := requireGroff(t)
	var b bytes.Buffer
	if err := Write(&b, hostilePage()); err != nil {
		t.Fatal(err)
	}
	// -ww: every warning; -P-cbou: plain text, no bold or underlining.
	cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", "-P-cbou")
	cmd.Stdin = &b
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil || errOut.Len() > 0 {
		t.Fatalf("groff: %v\n%s", err, errOut.String())
	}
	text := out.String()
	for _, want := range []string{".SH INJECTED", "'br", `\fBbold\fR \" comment`, `.\" gone`,
		`"quote" -- rm -rf ~ ^x` + " `y`", ".TH indented", ".bold 'it", "tool - does things"} {
		if !strings.Contains(text, want) {
			t.Errorf("groff's output lacks %q:\n%s", want, text)
		}
	}
}

// requireGroff finds groff, or skips loudly; with CI=true a missing groff
// is a failure (.ci/run installs it).
func requireGroff(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("groff")
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("no groff on PATH (apt-get install groff-base); CI=true, so this is a failure")
	}
	t.Skipf("!!! SKIPPING: no groff on PATH (apt-get install groff-base) !!!")
	return ""
}
