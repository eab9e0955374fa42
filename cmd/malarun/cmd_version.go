package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3". It is
// the package's one global variable: the linker can only set a package-level
// string.
var version = "dev"

type versionOptions struct {
	version   string
	buildInfo func() (*debug.BuildInfo, bool)
}

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print malarun's version, commit and Go version",
		Example: "  malarun version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runVersion(cmd.Context(), versionOptions{version: version, buildInfo: debug.ReadBuildInfo}, a.deps)
		},
	}
}

func runVersion(_ context.Context, opts versionOptions, d *deps) error {
	_, err := fmt.Fprintln(d.stdout, versionString(opts))
	return err
}

// versionString is "malarun <version> (<commit>[, modified]) <go> <os>/<arch>".
func versionString(opts versionOptions) string {
	v, rev, modified := opts.version, "", false
	if info, ok := opts.buildInfo(); ok {
		// `go install module@vX` records the module version; a plain build says (devel).
		if v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	s := "malarun " + v
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if modified {
			rev += ", modified"
		}
		s += " (" + rev + ")"
	}
	return s + " " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}
