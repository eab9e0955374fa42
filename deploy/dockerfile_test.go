package deploy_test

import (
	"bufio"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/parser"
)

// dockerStage is one FROM … of a Dockerfile and its instructions.
type dockerStage struct {
	image, name  string
	instructions []*parser.Node
}

// dockerfile is a Dockerfile as BuildKit parses it: the ARGs before the first
// FROM, then the stages.
type dockerfile struct {
	globalArgs map[string]string
	stages     []dockerStage
}

func parseDockerfile(t *testing.T, text string) dockerfile {
	t.Helper()
	res, err := parser.Parse(strings.NewReader(text))
	if err != nil {
		t.Fatalf("Dockerfile: %v", err)
	}
	for _, w := range res.Warnings {
		t.Errorf("Dockerfile: BuildKit warns: %s", w.Short)
	}
	df := dockerfile{globalArgs: map[string]string{}}
	for _, n := range res.AST.Children {
		switch strings.ToLower(n.Value) {
		case "from":
			st := dockerStage{image: words(n)[0]}
			if w := words(n); len(w) == 3 && strings.EqualFold(w[1], "as") {
				st.name = w[2]
			}
			df.stages = append(df.stages, st)
		case "arg":
			if len(df.stages) == 0 {
				name, value, _ := strings.Cut(words(n)[0], "=")
				df.globalArgs[name] = value
				continue
			}
			fallthrough
		default:
			last := &df.stages[len(df.stages)-1]
			last.instructions = append(last.instructions, n)
		}
	}
	return df
}

// words are an instruction's arguments (a JSON form's elements).
func words(n *parser.Node) []string {
	var w []string
	for a := n.Next; a != nil; a = a.Next {
		w = append(w, a.Value)
	}
	return w
}

func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := parseDockerfile(t, string(b))
	checkDockerfile(df, makefileCLIVersion(t), goModVersion(t)).report(t, "deploy/Dockerfile")

	ignore, err := os.ReadFile("Dockerfile.dockerignore")
	if err != nil {
		t.Fatalf("%v: without it the build context holds .cache (the installed CLIs, hundreds of MB)", err)
	}
	for _, want := range []string{".cache", ".git"} {
		if !slices.Contains(strings.Fields(string(ignore)), want) {
			t.Errorf("Dockerfile.dockerignore does not leave out %s", want)
		}
	}
}

// checkDockerfile: multi-stage, the CLI pinned to the version the project
// tests (cli; "" leaves that out) and installed in the runtime stage, Go as
// go.mod says, a non-root user, and malarun as PID 1 (exec-form ENTRYPOINT:
// the shell form would make /bin/sh PID 1, and sh drops the SIGTERM).
func checkDockerfile(df dockerfile, cli, goVersion string) (p problems) {
	if len(df.stages) < 2 {
		p.add("%d stages: build malarun in one, run it in another (no Go toolchain in the image)", len(df.stages))
		return p
	}
	if got, ok := df.globalArgs["CLAUDE_CODE_VERSION"]; !ok {
		p.add("no ARG CLAUDE_CODE_VERSION before the first FROM")
	} else if cli != "" && got != cli {
		p.add("ARG CLAUDE_CODE_VERSION=%s, but the Makefile's current version is %s", got, cli)
	}
	if got := df.globalArgs["GO_VERSION"]; goVersion != "" && got != goVersion {
		p.add("ARG GO_VERSION=%s, but go.mod says go %s", got, goVersion)
	}
	rt := df.stages[len(df.stages)-1]
	if !strings.HasPrefix(rt.image, "node:") {
		p.add("the runtime stage is FROM %s: the CLI needs Node", rt.image)
	}
	var entrypoint *parser.Node
	argDeclared, installed, copied := false, false, false
	user := ""
	install := regexp.MustCompile(`@anthropic-ai/claude-code@\$\{?CLAUDE_CODE_VERSION\}?\b`)
	for _, n := range rt.instructions {
		switch strings.ToLower(n.Value) {
		case "arg":
			if name, _, _ := strings.Cut(words(n)[0], "="); name == "CLAUDE_CODE_VERSION" {
				argDeclared = true
			}
		case "run":
			if install.MatchString(strings.Join(words(n), " ")) {
				installed = true
			}
		case "copy":
			if slices.ContainsFunc(n.Flags, func(f string) bool { return strings.HasPrefix(f, "--from=") }) &&
				slices.ContainsFunc(words(n), func(w string) bool { return strings.HasSuffix(w, "/malarun") }) {
				copied = true
			}
		case "user":
			user = words(n)[0]
		case "entrypoint":
			entrypoint = n
		}
	}
	if !argDeclared {
		p.add("the runtime stage does not declare ARG CLAUDE_CODE_VERSION: the global value is not visible in a stage that does not")
	}
	if !installed {
		p.add("the runtime stage does not install @anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}")
	}
	if !copied {
		p.add("the runtime stage does not copy malarun from the build stage")
	}
	if name, _, _ := strings.Cut(user, ":"); user == "" || name == "root" || name == "0" {
		p.add("USER %q: the image must not run as root", user)
	}
	switch {
	case entrypoint == nil:
		p.add("no ENTRYPOINT")
	case !entrypoint.Attributes["json"]:
		p.add("ENTRYPOINT %s is in shell form: /bin/sh would be PID 1, not malarun", strings.Join(words(entrypoint), " "))
	case len(words(entrypoint)) == 0 || words(entrypoint)[0] != "malarun":
		p.add("ENTRYPOINT %q does not run malarun", words(entrypoint))
	}
	return p
}

// makefileCLIVersion is the current CLI version the Makefile pins: the last
// of CLAUDE_CODE_VERSIONS.
func makefileCLIVersion(t *testing.T) string {
	t.Helper()
	f, err := os.Open("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":=")
		if ok && strings.TrimSpace(name) == "CLAUDE_CODE_VERSIONS" {
			v := strings.Fields(value)
			if len(v) == 0 {
				t.Fatal("Makefile: CLAUDE_CODE_VERSIONS is empty")
			}
			return v[len(v)-1]
		}
	}
	t.Fatal("Makefile: no CLAUDE_CODE_VERSIONS line")
	return ""
}

// goModVersion is malarun's go directive.
func goModVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("../go.mod has no go directive")
	}
	return string(m[1])
}

func TestDockerfileChecksCatch(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	good := string(b)
	tests := []struct{ name, old, new, cli, want string }{
		{"another CLI version", "", "", "2.1.400", "but the Makefile's current version is 2.1.400"},
		{"shell form", `ENTRYPOINT ["malarun"]`, "ENTRYPOINT malarun", "", "shell form"},
		{"through a shell", `ENTRYPOINT ["malarun"]`, `ENTRYPOINT ["sh", "-c", "malarun"]`, "", `does not run malarun`},
		{"root", "USER 10001:10001", "USER root", "", `USER "root"`},
		{"no user", "USER 10001:10001\n", "", "", `USER ""`},
		{"stage without the ARG", "AS runtime\nARG CLAUDE_CODE_VERSION\n", "AS runtime\n", "", "does not declare ARG CLAUDE_CODE_VERSION"},
		{"CLI unpinned", `"@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}"`, "@anthropic-ai/claude-code", "", "does not install"},
		{"go behind go.mod", "ARG GO_VERSION=1.26.8", "ARG GO_VERSION=1.25", "", "ARG GO_VERSION=1.25"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(good, tt.old) {
				t.Fatalf("the Dockerfile has no %q to break", tt.old)
			}
			df := parseDockerfile(t, strings.Replace(good, tt.old, tt.new, 1))
			wantProblem(t, checkDockerfile(df, tt.cli, "1.26.8"), tt.want)
		})
	}
}
