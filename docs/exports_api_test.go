package docs

import (
	"fmt"
	"go/ast"
	"go/token"
	"slices"
)

// The exported API of internal/'s packages, read with go/ast alone: what
// types an exported name puts in a caller's hands. It serves two rules.
// A type is used outside when the API of a name used outside names it (a
// caller of fleet.Summarize holds a fleet.Summary without writing it), so
// it needs no kept entry. And an exported name must not name an unexported
// type of its package in its API: a reader could hold the value but not
// name its type (revive's unexported-return, and the same for fields).

// apiPart is one place of an exported name's API: a function's signature,
// a method's, a field's type, a variable's declared type, the underlying
// type of a type that is not a struct or an interface.
type apiPart struct {
	label string   // "internal/x.Summary.Ended": the name, and the field or method
	expr  ast.Expr // the type expression at that place
}

// addAPI adds to api the parts of f's exported top-level names (methods
// on exported types included), keyed "internal/x.Name", and to types every
// type f declares at top level, exported or not.
func addAPI(dir string, f *ast.File, api map[string][]apiPart, types map[string]bool) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil {
				key := dir + "." + d.Name.Name
				api[key] = append(api[key], apiPart{key, d.Type})
			} else if recv := receiverType(d.Recv); ast.IsExported(recv) {
				key := dir + "." + recv
				api[key] = append(api[key], apiPart{key + "." + d.Name.Name, d.Type})
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch spec := spec.(type) {
				case *ast.TypeSpec:
					types[dir+"."+spec.Name.Name] = true
					if spec.Name.IsExported() {
						key := dir + "." + spec.Name.Name
						api[key] = append(api[key], typeParts(key, spec.Type)...)
					}
				case *ast.ValueSpec:
					if spec.Type == nil || d.Tok != token.VAR {
						continue // a constant, or a variable whose type only go/types could tell
					}
					for _, n := range spec.Names {
						if n.IsExported() {
							key := dir + "." + n.Name
							api[key] = append(api[key], apiPart{key, spec.Type})
						}
					}
				}
			}
		}
	}
}

// receiverType is the name of a method's receiver type: T of (T), (*T),
// (*T[P]).
func receiverType(recv *ast.FieldList) string {
	if recv == nil || len(recv.List) != 1 {
		return ""
	}
	expr := recv.List[0].Type
	for {
		switch e := expr.(type) {
		case *ast.StarExpr:
			expr = e.X
		case *ast.ParenExpr:
			expr = e.X
		case *ast.IndexExpr:
			expr = e.X
		case *ast.IndexListExpr:
			expr = e.X
		case *ast.Ident:
			return e.Name
		default:
			return ""
		}
	}
}

// typeParts splits a type declaration's API by place: a struct's exported
// fields, an interface's exported methods and embedded types, each its own
// part; any other type is one part, itself.
func typeParts(key string, expr ast.Expr) []apiPart {
	var fields *ast.FieldList
	switch t := expr.(type) {
	case *ast.StructType:
		fields = t.Fields
	case *ast.InterfaceType:
		fields = t.Methods
	default:
		return []apiPart{{key, expr}}
	}
	var parts []apiPart
	for _, field := range fields.List {
		if name, ok := visibleField(field); ok {
			parts = append(parts, apiPart{key + "." + name, field.Type})
		}
	}
	return parts
}

// visibleField reports whether a field (or an interface's method) is part
// of the API, and by what name a caller writes it: an exported name, or an
// embedded type whose name is exported (an interface's union of types, with
// no name, counts too).
func visibleField(field *ast.Field) (string, bool) {
	for _, n := range field.Names {
		if n.IsExported() {
			return n.Name, true
		}
	}
	if len(field.Names) > 0 {
		return "", false
	}
	name := receiverType(&ast.FieldList{List: []*ast.Field{field}})
	if sel, ok := field.Type.(*ast.SelectorExpr); ok {
		name = sel.Sel.Name
	} else if star, ok := field.Type.(*ast.StarExpr); ok {
		if sel, ok := star.X.(*ast.SelectorExpr); ok {
			name = sel.Sel.Name
		}
	}
	return name, name == "" || ast.IsExported(name)
}

// typeNames calls visit for every type of the package itself (an
// unqualified identifier) that expr names a caller can reach: through
// pointers, slices, arrays, maps, channels, functions' parameters and
// results, and the exported fields and methods of a struct or interface
// written in place. pkg.Name is another package's: usesFrom sees it.
func typeNames(expr ast.Expr, visit func(name string)) {
	switch e := expr.(type) {
	case *ast.Ident:
		// A type parameter is declared in a field list of the same file;
		// the package's own types are TypeSpecs, or in another file (nil).
		if e.Obj == nil || e.Obj.Kind != ast.Typ || isTypeSpec(e.Obj.Decl) {
			visit(e.Name)
		}
	case *ast.StarExpr:
		typeNames(e.X, visit)
	case *ast.ParenExpr:
		typeNames(e.X, visit)
	case *ast.ArrayType:
		typeNames(e.Elt, visit)
	case *ast.Ellipsis:
		typeNames(e.Elt, visit)
	case *ast.MapType:
		typeNames(e.Key, visit)
		typeNames(e.Value, visit)
	case *ast.ChanType:
		typeNames(e.Value, visit)
	case *ast.IndexExpr:
		typeNames(e.X, visit)
		typeNames(e.Index, visit)
	case *ast.IndexListExpr:
		typeNames(e.X, visit)
		for _, index := range e.Indices {
			typeNames(index, visit)
		}
	case *ast.FuncType:
		for _, list := range []*ast.FieldList{e.Params, e.Results} {
			if list != nil {
				for _, field := range list.List {
					typeNames(field.Type, visit)
				}
			}
		}
	case *ast.StructType, *ast.InterfaceType:
		for _, part := range typeParts("", e) {
			typeNames(part.expr, visit)
		}
	}
}

func isTypeSpec(decl any) bool {
	_, ok := decl.(*ast.TypeSpec)
	return ok
}

// usedThroughAPI follows the API of every name used outside, and of every
// exported type that API names, in turn: it returns the exported types so
// reached that no other folder names itself, each with the place that
// first named it.
func usedThroughAPI(s exportScan) map[string]string {
	reached := map[string]string{}
	var queue []string
	for name := range s.usedOutside {
		if s.declared[name] {
			queue = append(queue, name)
		}
	}
	slices.Sort(queue) // the place reported first is the same every run
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		dir := packageOf(name)
		for _, part := range s.api[name] {
			typeNames(part.expr, func(t string) {
				full := dir + "." + t
				if !s.declared[full] || s.usedOutside[full] || reached[full] != "" {
					return
				}
				reached[full] = part.label
				queue = append(queue, full)
			})
		}
	}
	return reached
}

// unexportedInAPI are the places where an exported name of internal/ names
// an unexported type of its own package.
func unexportedInAPI(s exportScan) []string {
	var problems []string
	for name := range s.declared {
		dir := packageOf(name)
		for _, part := range s.api[name] {
			typeNames(part.expr, func(t string) {
				if !ast.IsExported(t) && s.types[dir+"."+t] {
					problems = append(problems, fmt.Sprintf("%s names %s, an unexported type of its package: a reader cannot name it; export the type, or unexport the name", part.label, t))
				}
			})
		}
	}
	return problems
}

// packageOf is the folder part of "internal/x.Name".
func packageOf(name string) string {
	for i := len(name) - 1; i >= 0 && name[i] != '/'; i-- {
		if name[i] == '.' {
			return name[:i]
		}
	}
	return name
}
