package main

import (
	"context"
	"encoding/json"
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
	json      bool
}

// buildVersion is what `malarun version --json` prints. Its fields are a
// contract for scripts (an installer checking what it installed): add
// fields if need be, never rename or drop one.
type buildVersion struct {
	// Version is the -X main.version stamp, else the module version `go
	// install module@vX` recorded, else "dev".
	Version string `json:"version"`
	// Commit is the whole VCS revision; "" when the build did not record
	// one (a build from a module zip, or with -buildvcs=false).
	Commit   string `json:"commit"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
}

func newVersionCmd(a *app) *cobra.Command {
	var opts versionOptions
	cmd := &cobra.Command{
		Use:   "version [--json]",
		Short: "Print malarun's version, commit and Go version",
		Long: `version prints malarun's version, the commit it was built from (and whether
the tree had changes), the Go version and the OS/architecture; malarun
--version prints the same line.

--json prints {"version", "commit", "modified", "go", "os", "arch"}: commit is
"" when the build recorded none (go install module@version records the
version, not a commit).`,
		Example: `  malarun version
  malarun version --json | jq -r .version`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.version, opts.buildInfo = version, debug.ReadBuildInfo
			return runVersion(cmd.Context(), opts, a.deps)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the version as JSON")
	return cmd
}

func runVersion(_ context.Context, opts versionOptions, d *deps) error {
	v := readVersion(opts)
	if opts.json {
		enc := json.NewEncoder(d.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	_, err := fmt.Fprintln(d.stdout, v.String())
	return err
}

// readVersion gathers the version from the ldflags stamp and the build info.
func readVersion(opts versionOptions) buildVersion {
	v := buildVersion{Version: opts.version, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	info, ok := opts.buildInfo()
	if !ok {
		return v
	}
	// `go install module@vX` records the module version, and since Go 1.24
	// a build in a git clone the tag or a pseudo-version; else (devel).
	if v.Version == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v.Version = info.Main.Version
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// String is "malarun <version> (<commit>[, modified]) <go> <os>/<arch>".
func (v buildVersion) String() string {
	s := "malarun " + v.Version
	if rev := v.Commit; rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if v.Modified {
			rev += ", modified"
		}
		s += " (" + rev + ")"
	}
	return s + " " + v.Go + " " + v.OS + "/" + v.Arch
}
