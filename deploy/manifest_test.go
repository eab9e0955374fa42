package deploy_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// yamlDocs splits a YAML file into its documents, leaving out the empty ones.
func yamlDocs(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var docs [][]byte
	for _, d := range regexp.MustCompile(`(?m)^---[ \t]*$`).Split(string(b), -1) {
		var v any
		if err := yaml.Unmarshal([]byte(d), &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if v != nil {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}

// decodeStrict decodes one document into its typed object as the API
// server does with strict field validation: a key given twice, a field the
// type does not have, or one in the wrong case (subpathExpr) is an error, so
// a misspelt field cannot pass as "not set". (sigs.k8s.io/yaml's own
// UnmarshalStrict goes through encoding/json, which matches field names
// whatever their case.)
func decodeStrict(t *testing.T, name string, doc []byte, into any) {
	t.Helper()
	if err := unmarshalStrict(doc, into); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func unmarshalStrict(doc []byte, into any) error {
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(j, into)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

// kindOf reads a document's apiVersion and kind.
func kindOf(t *testing.T, name string, doc []byte) string {
	t.Helper()
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return tm.APIVersion + " " + tm.Kind
}

// malarunConfig is a malarun.yaml of a recipe, each value as text.
type malarunConfig map[string]string

func parseConfig(text string) (malarunConfig, error) {
	var m map[string]any
	if err := yaml.UnmarshalStrict([]byte(text), &m); err != nil {
		return nil, err
	}
	c := malarunConfig{}
	for k, v := range m {
		c[k] = fmt.Sprint(v)
	}
	return c, nil
}

// duration is key's value, or malarun's default for it.
func (c malarunConfig) duration(key string) (time.Duration, error) {
	v, ok := c[key]
	if !ok {
		if v, ok = deploy.keys[key]; !ok {
			return 0, fmt.Errorf("%s: not set, and malarun has no such key", key)
		}
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %v", key, err)
	}
	return d, nil
}

// under reports whether path is dir or inside it.
func under(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// problems collects what a check found; a check returns them rather than
// failing, so that tests can show each one catches what it should.
type problems []string

func (p *problems) add(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// report fails t with every problem.
func (p problems) report(t *testing.T, what string) {
	t.Helper()
	for _, s := range p {
		t.Errorf("%s: %s", what, s)
	}
}

// wantProblem: a broken copy of a recipe must be caught, with a problem
// that says what is wrong.
func wantProblem(t *testing.T, got problems, want string) {
	t.Helper()
	for _, s := range got {
		if strings.Contains(s, want) {
			return
		}
	}
	t.Errorf("no problem mentions %q; got %q", want, got)
}
