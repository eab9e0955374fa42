package ui

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOneEscaperEach: Markdown is written through markdown.go alone, and
// HTML through html/template alone (issue 48): no product package escapes
// HTML by hand (package html) or builds a page with html/template but the
// pages' own, and none makes a Markdown fence of its own.
func TestOneEscaperEach(t *testing.T) {
	pages := map[string]bool{"internal/ui": true, "internal/replay": true, "internal/fleet": true}
	root := filepath.Join("..", "..")
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && !strings.HasPrefix(rel, "internal") && !strings.HasPrefix(rel, "cmd") || rel == "internal/testing" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		files++
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p == "html" || p == "html/template" && !pages[filepath.ToSlash(filepath.Dir(rel))] {
				t.Errorf("%s imports %s: HTML is escaped by html/template, in the pages' packages", rel, p)
			}
		}
		if rel != "internal/ui/markdown.go" && strings.Contains(string(src), "strings.Repeat(\"`\"") {
			t.Errorf("%s makes a Markdown fence: ui/markdown.go writes Markdown", rel)
		}
		return nil
	})
	if err != nil || files < 100 {
		t.Fatalf("read %d product files: %v", files, err)
	}
}
