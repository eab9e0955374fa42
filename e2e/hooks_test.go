package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/malarun/malarun/internal/testing/fakeapi"
)

// writeHooks puts hooks (the "hooks" object of settings.json) into the
// working folder's project settings, where the CLI reads them.
func writeHooks(t *testing.T, work, hooks string) {
	t.Helper()
	dir := filepath.Join(work, ".claude")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{"hooks":`+hooks+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
}

// giveFailedMCPServer passes claude an MCP server named name whose command
// fails at once: the CLI lists it failed and runs without it (§F28).
func giveFailedMCPServer(t *testing.T, e *env, name string) {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers":{"`+name+`":{"command":"/bin/false","args":[]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e.args = []string{"--mcp-config", cfg}
}

// A Stop hook that runs the project's checks for 10 s, with idle_timeout
// 4 s: the hook is work (§F27), it runs once, and the run succeeds in one
// attempt. Before, malarun killed the tree at every try.
func TestRealCLIStopHookLongerThanIdleTimeout(t *testing.T) {
	e := newEnvAlone(t, fakeapi.Text("Done."))
	runs := filepath.Join(t.TempDir(), "hook-runs")
	writeHooks(t, e.work, `{"Stop":[{"hooks":[{"type":"command","command":"echo run >> `+runs+`; sleep 10"}]}]}`)
	r := e.run("--idle-timeout", "4s", "--kill-grace", "1s", "--backoff", "0s", "--events", "-")
	r.wantCode(t, 0)
	if r.stdout != "Done.\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	if b, _ := os.ReadFile(runs); string(b) != "run\n" {
		t.Errorf("the Stop hook ran %d times, want once", strings.Count(string(b), "run"))
	}
	if n := len(e.api.ConversationRequests()); n != 1 {
		t.Errorf("%d conversation requests, want 1 (no resume)", n)
	}
	for _, want := range []string{`"event":"hook_started"`, `"hook":"Stop"`, `"event":"hook_finished"`} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("events lack %s:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, `"event":"hang_detected"`) {
		t.Errorf("the hook was taken for a hang:\n%s", r.stderr)
	}
	// malarun show tells the hook, with how long it ran.
	if out, stderr, code := e.show(); code != 0 || !strings.Contains(out, "hook Stop  success, 1") {
		t.Errorf("show: exit %d, no Stop hook item:\n%s\n%s", code, out, stderr)
	}
}

// Hooks around a tool call and one that fails: the failure is named on
// stderr, and the run goes on as the CLI decides.
func TestRealCLIFailedHookIsReported(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakeapi.Bash("echo hi"), fakeapi.Text("Done."))
	writeHooks(t, e.work, `{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"true"}]}],`+
		`"PostToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"echo broken >&2; exit 1"}]}]}`)
	r := e.run()
	r.wantCode(t, 0)
	if !strings.Contains(r.stderr, "a hook of claude's did not succeed") || !strings.Contains(r.stderr, `"hook":"PostToolUse:Bash"`) {
		t.Errorf("the failed PostToolUse hook is not reported:\n%s", r.stderr)
	}
	if strings.Count(r.stderr, "did not succeed") != 1 {
		t.Errorf("want exactly one failed hook reported:\n%s", r.stderr)
	}
}

// An MCP server that fails to start: the CLI runs without its tools, and
// malarun names it on stderr and in the report (§F28).
func TestRealCLIFailedMCPServerIsNamed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakeapi.Text("Done without tools."))
	giveFailedMCPServer(t, e, "broken-tools")
	r := e.run("--json")
	r.wantCode(t, 0)
	if !strings.Contains(r.stderr, `"mcp_server":"broken-tools","status":"failed"`) {
		t.Errorf("no warning naming the server:\n%s", r.stderr)
	}
	if !strings.Contains(r.stdout, `"mcp_servers_not_connected": [`) || !strings.Contains(r.stdout, `"name": "broken-tools"`) {
		t.Errorf("the report does not name the server:\n%s", r.stdout)
	}
}
