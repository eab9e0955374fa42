package replay

import "testing"

func TestDescribe(t *testing.T) {
	for _, c := range []struct{ tool, input, want string }{
		{"Bash", `{"command":"go test ./...","description":"Run the tests"}`, "go test ./... — Run the tests"},
		{"Bash", `{"description":"Run","command":"echo a\necho b"}`, "echo a ⏎ echo b — Run"},
		{"Bash", `{"command":"for f in *; do echo \"$f\"; do`, `for f in *; do echo "$f"; do…`},
		{"Bash", `{"command":"echo \u00e9\u00`, "echo é…"},
		{"Bash", `{"timeout":5,"command":"x","nested":{"command":"y"}}`, "x"},
		{"Bash", `{"nested":{"command":"y"},"command":"x"}`, "x"},
		{"Read", `{"file_path":"/src/main.go","limit":20}`, "/src/main.go"},
		{"Edit", `{"old_string":"a","file_path":"/a.go","new_string":"b"}`, "/a.go"},
		{"Grep", `{"pattern":"TODO","path":"internal"}`, "TODO — internal"},
		{"Bash", `not json`, ""},
		{"Bash", `{"command":5}`, ""},
		{"Bash", `{"command":["x"],"description":"d"}`, "d"},
		{"mcp__x__y", `{"a":1}`, ""},
	} {
		if got := describe(c.tool, c.input); got != c.want {
			t.Errorf("describe(%s, %s) = %q, want %q", c.tool, c.input, got, c.want)
		}
	}
}
