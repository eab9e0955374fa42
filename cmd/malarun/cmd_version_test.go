package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

func TestVersionCommand(t *testing.T) {
	o := newCLI(t).run("version")
	if o.code != 0 || o.calls != 0 {
		t.Fatalf("code %d, calls %d, stderr %q", o.code, o.calls, o.stderr)
	}
	if !strings.HasPrefix(o.stdout, "malarun ") || !strings.Contains(o.stdout, runtime.Version()) || !strings.HasSuffix(o.stdout, "\n") {
		t.Errorf("version output %q", o.stdout)
	}
	newCLI(t).run("version", "extra").wantUsage(t, `unknown command "extra"`)
}

// --version is `malarun version`, text and JSON, and never starts a run,
// whatever else the line says.
func TestVersionFlag(t *testing.T) {
	c := newCLI(t)
	text, jsonDoc := c.run("version"), c.run("version", "--json")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--version"}, text.stdout},
		{[]string{"--version", "--json"}, jsonDoc.stdout},
		{[]string{"--json", "--version"}, jsonDoc.stdout},
		{[]string{"issue-1", "--prompt", c.prompt(), "--version"}, text.stdout},
	} {
		o := c.run(tt.args...)
		if o.code != 0 || o.calls != 0 || o.stdout != tt.want || o.stderr != "" {
			t.Errorf("malarun %s: code %d, %d runs, stdout %q, stderr %q; want 0, 0, %q, nothing",
				strings.Join(tt.args, " "), o.code, o.calls, o.stdout, o.stderr, tt.want)
		}
	}
}

// The JSON document is a contract: exactly these keys, with these types.
func TestVersionJSON(t *testing.T) {
	o := newCLI(t).run("version", "--json")
	if o.code != 0 {
		t.Fatalf("code %d, stderr %q", o.code, o.stderr)
	}
	var keys map[string]any
	if err := json.Unmarshal([]byte(o.stdout), &keys); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, o.stdout)
	}
	got := slices.Sorted(maps.Keys(keys))
	if want := []string{"arch", "commit", "go", "modified", "os", "version"}; !slices.Equal(got, want) {
		t.Errorf("keys %q, want %q", got, want)
	}
	var v buildVersion
	dec := json.NewDecoder(strings.NewReader(o.stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if v.Go != runtime.Version() || v.OS != runtime.GOOS || v.Arch != runtime.GOARCH || v.Version == "" {
		t.Errorf("document %+v", v)
	}

	info := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"},
		}}, true
	}
	var out bytes.Buffer
	if err := runVersion(t.Context(), versionOptions{version: "v1.2.3", buildInfo: info, json: true}, &deps{stdout: &out}); err != nil {
		t.Fatal(err)
	}
	want := `{
  "version": "v1.2.3",
  "commit": "0123456789abcdef0123",
  "modified": true,
  "go": "` + runtime.Version() + `",
  "os": "` + runtime.GOOS + `",
  "arch": "` + runtime.GOARCH + `"
}
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

func TestVersionString(t *testing.T) {
	info := func(mainVersion string, settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Main: debug.Module{Version: mainVersion}, Settings: settings}, true
		}
	}
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "0123456789abcdef0123"}
	dirty := debug.BuildSetting{Key: "vcs.modified", Value: "true"}
	tail := " " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
	tests := []struct {
		name string
		opts versionOptions
		want string
	}{
		{"no build info", versionOptions{version: "dev", buildInfo: func() (*debug.BuildInfo, bool) { return nil, false }}, "malarun dev" + tail},
		{"ldflags", versionOptions{version: "v1.2.3", buildInfo: info("(devel)", rev)}, "malarun v1.2.3 (0123456789ab)" + tail},
		{"modified", versionOptions{version: "dev", buildInfo: info("(devel)", rev, dirty)}, "malarun dev (0123456789ab, modified)" + tail},
		{"go install module@version", versionOptions{version: "dev", buildInfo: info("v0.4.0")}, "malarun v0.4.0" + tail},
		{"ldflags win over module version", versionOptions{version: "v9", buildInfo: info("v0.4.0")}, "malarun v9" + tail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := readVersion(tt.opts).String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
