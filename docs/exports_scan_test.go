package docs

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The scanner behind TestInternalExportsAreUsedOutside: which exported
// names the packages of internal/ declare, and which of them a Go file in
// another folder names (pkg.Name). Standard library only (go/parser,
// go/ast): it reads every module of the repository (the product's, deploy/,
// tools/...), whatever their build tags, so a name used on one platform or
// in one module only still counts.

// exportScan is what the scanner found under one repository root.
type exportScan struct {
	// declared holds "internal/x.Name" for every exported top-level name of
	// a package under internal/ (not internal/testing/...), from its
	// non-test files: a _test.go file's names are seen by no other package.
	declared map[string]bool
	// usedOutside holds "internal/x.Name" for every pkg.Name that a Go file
	// of another folder writes (tests included).
	usedOutside map[string]bool
	// api holds, for each name of declared, the places of its exported
	// API (exports_api_test.go); types every type internal/'s packages
	// declare at top level, exported or not ("internal/x.name").
	api   map[string][]apiPart
	types map[string]bool
	// problems are what the scanner refuses: a dot import of an internal
	// package (its names would be used unqualified, invisible here), and
	// files that do not parse.
	problems []string
}

// parsedFile is one Go file, with the folder it is in relative to the root.
type parsedFile struct {
	rel, dir string // slash-separated, relative to the root
	file     *ast.File
}

// scanExports parses every Go file under root and sorts out the exported
// names of internal/ and their uses from other folders.
func scanExports(root string) (exportScan, error) {
	s := exportScan{declared: map[string]bool{}, usedOutside: map[string]bool{}, api: map[string][]apiPart{}, types: map[string]bool{}}
	paths, err := goFiles(root)
	if err != nil {
		return s, err
	}
	modules := map[string]string{} // module path -> its folder (relative; "." for the root)
	var files []parsedFile
	pkgName := map[string]string{} // folder -> the package its non-test files declare
	looked := map[string]bool{}    // folders whose go.mod was looked for
	fset := token.NewFileSet()
	for _, file := range paths {
		rel, err := filepath.Rel(root, file)
		if err != nil {
			return s, err
		}
		rel = filepath.ToSlash(rel)
		dir := filepath.ToSlash(filepath.Dir(rel))
		// The module's folder may hold no Go file itself: look at every
		// folder from the file's up to the root, each once.
		for d := dir; !looked[d]; d = path.Dir(d) {
			looked[d] = true
			if mod, ok, err := modulePath(filepath.Join(root, filepath.FromSlash(d))); err != nil {
				return s, err
			} else if ok {
				modules[mod] = d
			}
		}
		// Not SkipObjectResolution: an identifier the file declares itself
		// (a local named like an import) has Obj set and is not a package.
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			s.problems = append(s.problems, err.Error())
			continue
		}
		files = append(files, parsedFile{rel, dir, f})
		if !strings.HasSuffix(rel, "_test.go") {
			pkgName[dir] = f.Name.Name
		}
	}
	for _, pf := range files {
		if ownsExports(pf.dir) && !strings.HasSuffix(pf.rel, "_test.go") {
			for _, name := range exportedNames(pf.file) {
				s.declared[pf.dir+"."+name] = true
			}
			addAPI(pf.dir, pf.file, s.api, s.types)
		}
		s.problems = append(s.problems, usesFrom(pf, modules, pkgName, s.usedOutside)...)
	}
	return s, nil
}

// ownsExports reports whether the package in folder dir is one whose
// exports the rule is about: internal/ but not its test helpers.
func ownsExports(dir string) bool {
	return strings.HasPrefix(dir, "internal/") && dir != "internal/testing" && !strings.HasPrefix(dir, "internal/testing/")
}

// modulePath is the module path declared by dir's go.mod, if it has one.
func modulePath(dir string) (string, bool, error) {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if os.IsNotExist(err) {
		return "", false, nil
	} else if err != nil {
		return "", false, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), true, nil
		}
	}
	return "", false, fmt.Errorf("%s/go.mod names no module", dir)
}

// exportedNames are the exported top-level names f declares: functions
// (not methods), types, constants and variables.
func exportedNames(f *ast.File) []string {
	var names []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.IsExported() {
				names = append(names, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch spec := spec.(type) {
				case *ast.TypeSpec:
					if spec.Name.IsExported() {
						names = append(names, spec.Name.Name)
					}
				case *ast.ValueSpec:
					for _, n := range spec.Names {
						if n.IsExported() {
							names = append(names, n.Name)
						}
					}
				}
			}
		}
	}
	return names
}

// folderOf maps an import path to its folder relative to the root, through
// the module whose path is its longest prefix; ok is false for a path of no
// module in the repository (the standard library, dependencies).
func folderOf(importPath string, modules map[string]string) (string, bool) {
	best := ""
	for mod := range modules {
		if (importPath == mod || strings.HasPrefix(importPath, mod+"/")) && len(mod) > len(best) {
			best = mod
		}
	}
	if best == "" {
		return "", false
	}
	return path.Join(modules[best], strings.TrimPrefix(importPath, best)), true
}

// usesFrom adds to used the "internal/x.Name" that pf writes as pkg.Name
// for a package of another folder, and returns the dot imports it refuses.
func usesFrom(pf parsedFile, modules, pkgName map[string]string, used map[string]bool) []string {
	var problems []string
	imported := map[string]string{} // the name the file uses -> the package's folder
	for _, spec := range pf.file.Imports {
		importPath, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			continue
		}
		dir, ok := folderOf(importPath, modules)
		if !ok || !ownsExports(dir) || dir == pf.dir {
			continue
		}
		name := pkgName[dir]
		if spec.Name != nil {
			name = spec.Name.Name
		}
		switch name {
		case ".":
			problems = append(problems, fmt.Sprintf("%s: a dot import of %s: name its package, so that its uses are seen", pf.rel, importPath))
		case "_", "":
		default:
			imported[name] = dir
		}
	}
	if len(imported) == 0 {
		return problems
	}
	ast.Inspect(pf.file, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Obj == nil {
			if dir, ok := imported[id.Name]; ok {
				used[dir+"."+sel.Sel.Name] = true
			}
		}
		return true
	})
	return problems
}

// exportProblems compares a scan with the kept list: a name no other
// folder uses, by name or through the API of a name it uses, must be kept
// with a reason, and every kept entry must still be declared and still be
// unused outside, so the list stays true. An exported name must not name
// an unexported type of its package in its API. unused counts the exported
// names used by no other folder, throughAPI those used only through an API.
func exportProblems(s exportScan, kept map[string]string) (problems []string, unused, throughAPI int) {
	problems = slices.Clone(s.problems)
	reached := usedThroughAPI(s)
	used := func(name string) bool { return s.usedOutside[name] || reached[name] != "" }
	throughAPI = len(reached)
	for name := range s.declared {
		if used(name) {
			continue
		}
		unused++
		if reason, ok := kept[name]; !ok {
			problems = append(problems, fmt.Sprintf("%s is exported and no other package uses it: unexport it, or keep it (docs/exports_test.go) with the reason", name))
		} else if strings.TrimSpace(reason) == "" || strings.Contains(reason, "\n") {
			problems = append(problems, fmt.Sprintf("%s is kept without a one-line reason", name))
		}
	}
	for name := range kept {
		switch {
		case !s.declared[name]:
			problems = append(problems, fmt.Sprintf("%s is in the kept list but is no longer an exported name of internal/: drop it from the list", name))
		case s.usedOutside[name]:
			problems = append(problems, fmt.Sprintf("%s is in the kept list but another package uses it now: drop it from the list", name))
		case reached[name] != "":
			problems = append(problems, fmt.Sprintf("%s is in the kept list but %s names it, which another package uses: drop it from the list", name, reached[name]))
		}
	}
	problems = append(problems, unexportedInAPI(s)...)
	slices.Sort(problems)
	return problems, unused, throughAPI
}

// checkExports fails t with every problem exportProblems finds.
func checkExports(t *testing.T, s exportScan, kept map[string]string) {
	t.Helper()
	problems, unused, throughAPI := exportProblems(s, kept)
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("internal/ exports %d names; %d of them are used outside only through the API of a name used outside; %d are used by no other package, %d of them kept for a reason",
		len(s.declared), throughAPI, unused, len(kept))
}
