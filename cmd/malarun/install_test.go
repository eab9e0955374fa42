package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// installTestVersion is the version the fake module proxy serves: any
// valid v0 or v1 version would do.
const installTestVersion = "v0.42.1"

// What a Go user gets from `go install
// github.com/malarun/malarun/cmd/malarun@vX.Y.Z`: a malarun that says
// vX.Y.Z, not dev (it has no -X main.version: the module version comes
// from the build info). The module is served at installTestVersion by a
// module proxy in a folder, with its dependencies from the module
// cache's download folder, so the test needs no network, only what `go mod
// download` fetched.
//
// About 75 s on 2 cores with a cold build cache, 2 s with a warm one:
// -trimpath keeps the packages' file paths (the fresh module cache in a
// temporary folder) out of the build cache's keys, so a second run reuses
// the first one's packages.
func TestGoInstallReportsModuleVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("!!! SKIPPING TestGoInstallReportsModuleVersion under -short: it builds malarun with go install from a module proxy (about 75 s with a cold build cache) !!!")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go is not on PATH: %v", err)
	}
	var goEnv struct{ GOMODCACHE, GOCACHE, GOMOD string }
	if err := json.Unmarshal(goOutput(t, goBin, "", nil, "env", "-json", "GOMODCACHE", "GOCACHE", "GOMOD"), &goEnv); err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(goEnv.GOMOD)
	modPath := strings.TrimSpace(string(goOutput(t, goBin, root, nil, "list", "-m")))

	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy")
	writeModuleProxy(t, proxy, modPath, installTestVersion, root, moduleBuildFiles(t, goBin, root, modPath))

	// Only the variables set here: none of the user's go env file
	// (GOENV=off), GOFLAGS, GOPRIVATE or GONOPROXY (which would send the
	// go command to the network), and no toolchain download.
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GO") })
	env = append(env,
		"GOENV=off",
		"GOPROXY="+fileURL(proxy)+","+fileURL(filepath.Join(goEnv.GOMODCACHE, "cache", "download")),
		"GOSUMDB=off", // the fake version is in no checksum database
		"GOMODCACHE="+filepath.Join(tmp, "modcache"),
		"GOCACHE="+goEnv.GOCACHE,
		"GOPATH="+filepath.Join(tmp, "gopath"),
		"GOBIN="+filepath.Join(tmp, "bin"),
		// -modcacherw: t.TempDir can remove the module cache afterwards.
		"GOFLAGS=-modcacherw -trimpath",
		"GOTOOLCHAIN=local",
		"GOWORK=off",
	)
	start := time.Now()
	goOutput(t, goBin, tmp, env, "install", modPath+"/cmd/malarun@"+installTestVersion)
	t.Logf("go install %s/cmd/malarun@%s took %s", modPath, installTestVersion, time.Since(start).Round(time.Second))

	bin := filepath.Join(tmp, "bin", "malarun")
	text := string(goOutput(t, bin, tmp, nil, "version"))
	if want := "malarun " + installTestVersion + " " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"; text != want {
		t.Errorf("malarun version: %q, want %q", text, want)
	}
	if flag := string(goOutput(t, bin, tmp, nil, "--version")); flag != text {
		t.Errorf("malarun --version: %q, want %q", flag, text)
	}
	var v buildVersion
	if err := json.Unmarshal(goOutput(t, bin, tmp, nil, "version", "--json"), &v); err != nil {
		t.Fatal(err)
	}
	// A build from a module zip records no commit.
	if want := (buildVersion{Version: installTestVersion, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}); v != want {
		t.Errorf("malarun version --json: %+v, want %+v", v, want)
	}
}

// goOutput runs name with args in dir and returns its stdout; env nil is
// the test's environment.
func goOutput(t *testing.T, name, dir string, env []string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes()
}

func fileURL(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// moduleBuildFiles lists, relative to root, the files of the module that
// building cmd/malarun reads here: go.mod, go.sum and the Go and embedded
// files of its packages. Only those: the module's other folders hold
// modules of their own (deploy, tools/bench), which a module zip may not.
func moduleBuildFiles(t *testing.T, goBin, root, modPath string) []string {
	t.Helper()
	out := goOutput(t, goBin, root, nil, "list", "-deps",
		"-json=Dir,Module,GoFiles,CgoFiles,CFiles,HFiles,SFiles,SysoFiles,EmbedFiles", "./cmd/malarun")
	files := []string{"go.mod", "go.sum"}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			Dir                                                              string
			Module                                                           *struct{ Path string }
			GoFiles, CgoFiles, CFiles, HFiles, SFiles, SysoFiles, EmbedFiles []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if p.Module == nil || p.Module.Path != modPath {
			continue
		}
		for _, f := range slices.Concat(p.GoFiles, p.CgoFiles, p.CFiles, p.HFiles, p.SFiles, p.SysoFiles, p.EmbedFiles) {
			rel, err := filepath.Rel(root, filepath.Join(p.Dir, f))
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, filepath.ToSlash(rel))
		}
	}
	slices.Sort(files)
	return slices.Compact(files)
}

// writeModuleProxy lays out a GOPROXY folder serving files of root as
// modPath at version (the go command's proxy protocol: list, .info, .mod,
// .zip). The zip follows the module zip rules: every path under
// "modPath@version/", regular files only, no directory entries.
func writeModuleProxy(t *testing.T, proxy, modPath, version, root string, files []string) {
	t.Helper()
	if strings.ToLower(modPath) != modPath {
		t.Fatalf("module path %q needs case-encoding in the proxy, which this test does not do", modPath)
	}
	dir := filepath.Join(proxy, filepath.FromSlash(modPath), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	goMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	for _, f := range files {
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		if !fi.Mode().IsRegular() {
			t.Fatalf("%s is not a regular file: a module zip holds only those", f)
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create(modPath + "@" + version + "/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	info, err := json.Marshal(map[string]string{"Version": version, "Time": "2026-01-01T00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"list": []byte(version + "\n"), version + ".info": info, version + ".mod": goMod, version + ".zip": zipped.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
