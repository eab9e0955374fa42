package main

import (
	"bytes"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/malarun/malarun/internal/event"

	"github.com/rs/zerolog"
)

// The console logs carry text from the model in fields (tool names, the
// API's error, the CLI's version, task descriptions); none of it reaches
// the terminal raw: not in a string field, the error, an array, an object
// nor the message.
func TestConsoleLogIsInert(t *testing.T) {
	for _, noColor := range []string{"", "1"} {
		var buf bytes.Buffer
		getenv := func(k string) string {
			if k == "NO_COLOR" {
				return noColor
			}
			return ""
		}
		log, err := newLogger(&buf, true, "auto", "debug", zerolog.TraceLevel, false, getenv)
		if err != nil {
			t.Fatal(err)
		}
		log.Warn().Str("field", hostile).Err(errors.New(hostile)).Strs("list", []string{hostile, "b"}).
			Interface("object", map[string]string{hostile: hostile}).Msg("message " + hostile)
		out := buf.String()
		if !strings.Contains(out, "WRN") || strings.Count(out, "\n") != 1 {
			t.Fatalf("not one console log line: %q", out)
		}
		if raw := rawIn(sgr.ReplaceAllString(out, "")); len(raw) > 0 {
			t.Errorf("NO_COLOR=%q: the console log has %q raw:\n%q", noColor, raw, out)
		}
		// What was there still shows, in caret notation or quoted.
		if !strings.Contains(out, "title^G") || !strings.Contains(out, "message x ]0;title") {
			t.Errorf("NO_COLOR=%q: the text is gone:\n%q", noColor, out)
		}
	}
}

// Where the event lines are drawn (lines), a record that an event also
// reports (it carries event.AlsoField) is left out, in either
// format; other records stay, and without lines every record stays.
func TestRecordsAnEventSaysAreLeftOutBesideEventLines(t *testing.T) {
	for _, format := range []string{"console", "json"} {
		for _, lines := range []bool{true, false} {
			var buf bytes.Buffer
			log, err := newLogger(&buf, true, format, "info", zerolog.WarnLevel, lines, func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			log.Warn().Str(event.AlsoField, string(event.HangDetected)).Msg("hang detected: no output within the limit")
			log.Warn().Msg("stopping the run; a second signal kills it at once")
			log.Error().Str(event.AlsoField, string(event.AttemptEnded)).Msg("an error an event says")
			out := buf.String()
			if got, want := strings.Contains(out, "hang detected"), !lines; got != want {
				t.Errorf("%s, lines %v: the hang's record shown %v, want %v:\n%s", format, lines, got, want, out)
			}
			if got, want := strings.Contains(out, "an error an event says"), !lines; got != want {
				t.Errorf("%s, lines %v: the error an event says shown %v, want %v:\n%s", format, lines, got, want, out)
			}
			if !strings.Contains(out, "a second signal kills it at once") {
				t.Errorf("%s, lines %v: a record no event says is missing:\n%s", format, lines, out)
			}
		}
	}
}

// Log messages are constant: text from outside malarun (the CLI's, the
// model's, a record's) goes into fields, which the console writer quotes,
// never into the message, which it prints as it is. Every .Msg call in
// internal/ and cmd/ takes a string literal, a constant, or a sum of them.
func TestLogMessagesAreConstant(t *testing.T) {
	constsOf := map[string]map[string]bool{} // by package folder: each is parsed once
	for _, root := range []string{repoPath("internal"), repoPath("cmd")} {
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				t.Fatal(err)
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Dir(path)
			if constsOf[dir] == nil {
				constsOf[dir] = packageConsts(t, dir)
			}
			consts := constsOf[dir]
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || (sel.Sel.Name != "Msg" && sel.Sel.Name != "Msgf") || len(call.Args) == 0 {
					return true
				}
				if sel.Sel.Name == "Msgf" || !constString(call.Args[0], consts) {
					t.Errorf("%s: a log message built at run time: move what varies into a field", fset.Position(call.Pos()))
				}
				return true
			})
			return nil
		})
	}
}

// constString reports whether e is a string literal, a constant of the
// package, or a sum of them.
func constString(e ast.Expr, consts map[string]bool) bool {
	switch e := e.(type) {
	case *ast.BasicLit:
		return e.Kind == token.STRING
	case *ast.Ident:
		return consts[e.Name]
	case *ast.ParenExpr:
		return constString(e.X, consts)
	case *ast.BinaryExpr:
		return e.Op == token.ADD && constString(e.X, consts) && constString(e.Y, consts)
	}
	return false
}

// packageConsts names the constants declared at the top of dir's Go files.
func packageConsts(t *testing.T, dir string) map[string]bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	consts := map[string]bool{}
	for _, path := range files {
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, s := range g.Specs {
					for _, n := range s.(*ast.ValueSpec).Names {
						consts[n.Name] = true
					}
				}
			}
		}
	}
	return consts
}
