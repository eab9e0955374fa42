// Package schemacheck validates JSON against the project's schemas
// (docs/report.schema.json, docs/show.schema.json) in tests: only the
// keywords they use, and any other keyword is an error, so a schema cannot
// drift beyond what is checked. Test support only, like internal/testing/testchild.
package schemacheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// Validate checks v (decoded with UseNumber) against a JSON Schema, for
// the keywords the project's schemas use; any other keyword is an error,
// so the schema cannot drift beyond what this checker enforces.
func Validate(schema map[string]any, v any, path string) []string {
	return validate(schema, schema, v, path)
}

// validate checks v against schema, a part of root (where "$ref":
// "#/$defs/name" is looked up).
func validate(root, schema map[string]any, v any, path string) []string {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, path+": "+fmt.Sprintf(format, args...)) }
	for k, s := range schema {
		switch k {
		case "$schema", "$id", "title", "description", "$defs":
		case "$ref":
			name, ok := strings.CutPrefix(s.(string), "#/$defs/")
			defs, _ := root["$defs"].(map[string]any)
			def, found := defs[name].(map[string]any)
			if !ok || !found {
				fail("$ref %v is not one of this schema's $defs", s)
				continue
			}
			errs = append(errs, validate(root, def, v, path)...)
		case "type":
			if !hasType(v, s.(string)) {
				fail("%v is not of type %s", v, s)
			}
		case "const":
			if fmt.Sprint(v) != fmt.Sprint(s) {
				fail("%v, want %v", v, s)
			}
		case "enum":
			if !slices.ContainsFunc(s.([]any), func(e any) bool { return e == v }) {
				fail("%v is not one of %v", v, s)
			}
		case "minimum", "maximum":
			n, ok := v.(json.Number)
			if !ok {
				fail("%v is not a number", v)
				break
			}
			f, _ := n.Float64()
			lim, _ := s.(json.Number).Float64()
			if k == "minimum" && f < lim || k == "maximum" && f > lim {
				fail("%v is out of range (%s %v)", v, k, lim)
			}
		case "format":
			if s != "date-time" {
				fail("unknown format %v", s)
			} else if str, ok := v.(string); !ok {
				fail("%v is not a string", v)
			} else if _, err := time.Parse(time.RFC3339Nano, str); err != nil {
				fail("%q is not a date-time: %v", str, err)
			}
		case "required":
			obj, _ := v.(map[string]any)
			for _, r := range s.([]any) {
				if _, ok := obj[r.(string)]; !ok {
					fail("lacks %q", r)
				}
			}
		case "properties":
			obj, _ := v.(map[string]any)
			for name, sub := range s.(map[string]any) {
				if pv, ok := obj[name]; ok {
					errs = append(errs, validate(root, sub.(map[string]any), pv, path+"."+name)...)
				}
			}
		case "additionalProperties":
			// false: no property but those named; a schema: each property
			// not named follows it (a map such as hangs by phase).
			sub, isSchema := s.(map[string]any)
			if s != false && !isSchema {
				fail("additionalProperties is false or a schema")
				break
			}
			props, _ := schema["properties"].(map[string]any)
			obj, _ := v.(map[string]any)
			for name, pv := range obj {
				if _, ok := props[name]; ok {
					continue
				}
				if !isSchema {
					fail("unexpected property %q", name)
					continue
				}
				errs = append(errs, validate(root, sub, pv, path+"."+name)...)
			}
		case "items":
			arr, _ := v.([]any)
			for i, item := range arr {
				errs = append(errs, validate(root, s.(map[string]any), item, fmt.Sprintf("%s[%d]", path, i))...)
			}
		default:
			fail("the checker does not know the keyword %q", k)
		}
	}
	return errs
}

func hasType(v any, typ string) bool {
	switch typ {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		_, err := n.Int64()
		return err == nil
	}
	return false
}

// Load reads a schema file, its numbers kept as json.Number (as Validate
// compares them).
func Load(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var schema map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&schema); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return schema, nil
}

// Check decodes one JSON value from data and validates it.
func Check(schema map[string]any, data []byte, name string) ([]string, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not one JSON value: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return Validate(schema, v, name), nil
}
