// Package docs holds malarun's design notes (design.md) and the JSON Schema
// of the --json report. Its only code is tests of what design.md says: here,
// every citation of a design.md section in the module's Go files must name a
// section that exists, so a comment never points at a fact that was renamed
// or dropped; leaves_test.go holds the rule of its "Packages" section that
// the pure packages depend on no I/O.
package docs

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The section sign is written as an escape throughout this file, and the
// old citation form is only ever described, never spelled out: the test
// scans its own source like any other Go file.
const sectionSign = "\u00a7"

// citationRules are the patterns a line is checked against.
type citationRules struct {
	heading  *regexp.Regexp // a citable heading of design.md: "### F13. Title"
	sign     *regexp.Regexp // a section sign and whatever id follows it
	validID  *regexp.Regexp
	oldForms *regexp.Regexp // citations of the design notes that lived outside the repo
}

func newRules() citationRules {
	return citationRules{
		heading:  regexp.MustCompile(`^#{2,6}\s+([A-Z][0-9]+)\.\s`),
		sign:     regexp.MustCompile(sectionSign + `([A-Za-z0-9]*)`),
		validID:  regexp.MustCompile(`^[A-Z][0-9]+$`),
		oldForms: regexp.MustCompile(`DESIGN\.md|DESIGN\sfact|(?i:\bfacts?\s+[0-9]+\b)`),
	}
}

// sections reads the ids of design.md's citable headings, and reports ids
// used by more than one heading. Lines inside fenced code blocks are not
// headings.
func (r citationRules) sections(name, text string) (ids map[string]int, problems []string) {
	ids = map[string]int{}
	fenced := false
	for n, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		m := r.heading.FindStringSubmatch(line)
		if fenced || m == nil {
			continue
		}
		if first, dup := ids[m[1]]; dup {
			problems = append(problems, fmt.Sprintf("%s:%d: section %s already defined at line %d", name, n+1, m[1], first))
			continue
		}
		ids[m[1]] = n + 1
	}
	return ids, problems
}

// check reports every citation in text that names no section of ids, every
// section sign not followed by an id, and, when oldForms is set, every
// citation in the form used before design.md existed.
func (r citationRules) check(name, text string, ids map[string]int, oldForms bool) []string {
	var problems []string
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		// The regular expressions run only on lines that can match: most
		// lines hold neither a section sign nor the word "fact", and the
		// case-blind oldForms on every line of the module was 9 s under -race.
		if !strings.Contains(line, sectionSign) && !(oldForms && mayBeOldForm(line)) {
			continue
		}
		for _, m := range r.sign.FindAllStringSubmatch(line, -1) {
			switch id := m[1]; {
			case !r.validID.MatchString(id):
				problems = append(problems, fmt.Sprintf("%s:%d: %q is not a citation of a docs/design.md section (write %sF13 or %sD2)", name, n, m[0], sectionSign, sectionSign))
			case ids[id] == 0:
				problems = append(problems, fmt.Sprintf("%s:%d: cites docs/design.md %s%s, which has no such section", name, n, sectionSign, id))
			}
		}
		if oldForms {
			if m := r.oldForms.FindString(line); m != "" {
				problems = append(problems, fmt.Sprintf("%s:%d: %q is the old citation form; cite docs/design.md %sF<n> (facts keep their numbers)", name, n, m, sectionSign))
			}
		}
	}
	if err := sc.Err(); err != nil {
		problems = append(problems, fmt.Sprintf("%s: %v", name, err))
	}
	return problems
}

// mayBeOldForm says whether line can hold an old citation form: one names
// DESIGN or a fact.
func mayBeOldForm(line string) bool {
	return strings.Contains(line, "DESIGN") || strings.Contains(strings.ToLower(line), "fact")
}

// moduleRoot is the nearest folder above the test's working directory that
// holds go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's working directory")
		}
		dir = parent
	}
}

// goFiles lists the module's Go files, skipping what the go command skips
// (testdata, and folders whose name starts with "." or "_", such as the
// .cache of installed CLIs) and vendor and node_modules.
func goFiles(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
				name == "testdata" || name == "vendor" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") {
			files = append(files, path)
		}
		return nil
	})
	return files, err
}

func TestDesignCitationsResolve(t *testing.T) {
	root := moduleRoot(t)
	rules := newRules()
	designPath := filepath.Join(root, "docs", "design.md")
	design, err := os.ReadFile(designPath)
	if err != nil {
		t.Fatalf("docs/design.md: %v", err)
	}
	ids, problems := rules.sections("docs/design.md", string(design))
	if len(ids) == 0 {
		t.Fatal("docs/design.md has no citable sections (headings like \"### F13. Title\")")
	}
	// design.md cites its own sections too; it may name the old form.
	problems = append(problems, rules.check("docs/design.md", string(design), ids, false)...)

	files, err := goFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	cited := 0
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		cited += strings.Count(string(b), sectionSign)
		problems = append(problems, rules.check(filepath.ToSlash(rel), string(b), ids, true)...)
	}
	for _, p := range problems {
		t.Error(p)
	}
	// A scan that finds no citations at all would pass whatever the code
	// says: the module is known to cite the design.
	if cited == 0 {
		t.Errorf("no citations found in %d Go files under %s: the scan is not looking where the code is", len(files), root)
	}
	t.Logf("%d Go files, %d citations, %d sections", len(files), cited, len(ids))
}

// TestCheckerCatchesBadCitations feeds the checker lines it must reject and
// lines it must accept, so the test above cannot pass by checking nothing.
func TestCheckerCatchesBadCitations(t *testing.T) {
	rules := newRules()
	design := strings.Join([]string{
		"# title",
		"### F1. A fact",
		"```",
		"### F7. not a heading: inside a code block",
		"```",
		"### D2. A decision",
		"### D2. The same id again",
	}, "\n")
	ids, dups := rules.sections("design.md", design)
	if len(ids) != 2 || ids["F1"] != 2 || ids["D2"] != 6 {
		t.Errorf("sections = %v, want F1 at line 2 and D2 at line 6", ids)
	}
	if len(dups) != 1 || !strings.Contains(dups[0], "design.md:7:") {
		t.Errorf("duplicate ids reported as %q, want one at design.md:7", dups)
	}

	tests := []struct {
		line string
		want string // a fragment of the one problem expected; "" for none
	}{
		{"// see docs/design.md " + sectionSign + "F1.", ""},
		{"// (docs/design.md " + sectionSign + "D2, " + sectionSign + "F1)", ""},
		{"// see docs/design.md " + sectionSign + "F99.", "no such section"},
		{"// see docs/design.md " + sectionSign + "F7 (only in a code block)", "no such section"},
		{"// see docs/design.md " + sectionSign + " F1", "is not a citation"},
		{"// see docs/design.md " + sectionSign + "f1", "is not a citation"},
		{"// (DESIGN\x2emd fact\x2013)", "old citation form"},
		{"// (DESIGN\x20fact\x208)", "old citation form"},
		{"// the CLI drops it (fact\x2016)", "old citation form"},
		{"// an artifact 3 times", ""},
	}
	for _, tt := range tests {
		got := rules.check("x.go", tt.line, ids, true)
		switch {
		case tt.want == "" && len(got) != 0:
			t.Errorf("%q: unexpected problems %q", tt.line, got)
		case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want) || !strings.HasPrefix(got[0], "x.go:1: ")):
			t.Errorf("%q: problems %q, want one at x.go:1 containing %q", tt.line, got, tt.want)
		}
	}
	if got := rules.check("design.md", "// (DESIGN\x2emd fact\x2013)", ids, false); len(got) != 0 {
		t.Errorf("old form flagged with oldForms off: %q", got)
	}
}
