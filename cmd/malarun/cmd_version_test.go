package main

import (
	"runtime"
	"runtime/debug"
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
		{"no build info", versionOptions{"dev", func() (*debug.BuildInfo, bool) { return nil, false }}, "malarun dev" + tail},
		{"ldflags", versionOptions{"v1.2.3", info("(devel)", rev)}, "malarun v1.2.3 (0123456789ab)" + tail},
		{"modified", versionOptions{"dev", info("(devel)", rev, dirty)}, "malarun dev (0123456789ab, modified)" + tail},
		{"go install module@version", versionOptions{"dev", info("v0.4.0")}, "malarun v0.4.0" + tail},
		{"ldflags win over module version", versionOptions{"v9", info("v0.4.0")}, "malarun v9" + tail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionString(tt.opts); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
