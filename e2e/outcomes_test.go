package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/malarun/malarun/internal/testing/fakeapi"
	"github.com/malarun/malarun/internal/ui"
)

// How a run ended, read from the CLI's own fields (docs/design.md §D36), on
// each pinned CLI.

func (e *env) report(r result) ui.Report {
	e.t.Helper()
	var rep ui.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		e.t.Fatalf("the --json report does not decode: %v\n%s", err, r.stdout)
	}
	return rep
}

// A prompt of /clear never reaches the model (§F38): both CLIs say success
// with num_turns 0. malarun sends it again and ends the run, exit 3,
// never 0; the API got no request.
func TestRealCLISlashPromptIsNoSuccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakeapi.Text("Never asked."))
	e.task = "/clear"
	r := e.run(append(retryFlags, "--json")...)
	r.wantCode(t, 3)
	rep := e.report(r)
	if rep.Outcome != "retries_exhausted" || len(rep.Attempts) != 3 || !strings.Contains(rep.Reason, "the model never saw the prompt") {
		t.Fatalf("report: %s, %d attempts, %q", rep.Outcome, len(rep.Attempts), rep.Reason)
	}
	for _, a := range rep.Attempts {
		if a.Outcome != "prompt-lost" || len(a.Results) != 1 || a.Results[0].NumTurns == nil || *a.Results[0].NumTurns != 0 {
			t.Errorf("attempt %d: %s %+v", a.N, a.Outcome, a.Results)
		}
	}
	if n := len(e.api.ConversationRequests()); n != 0 {
		t.Errorf("%d conversation requests: /clear never reaches the model", n)
	}
}

// A configuration file of claude's that does not parse stops the run at
// once, exit 1, naming the file: 2.1.332 says so in a result
// (config_file_invalid), 2.1.197 on stderr, which malarun quotes.
func TestRealCLIConfigFileThatDoesNotParseStops(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakeapi.Text("Never asked."))
	config := filepath.Join(e.home, ".claude.json")
	if err := os.WriteFile(config, []byte(`{"numStartups": 3,`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := e.run(append(retryFlags, "--json")...)
	r.wantCode(t, 1)
	rep := e.report(r)
	want := "claude's configuration file " + config + " is not valid JSON"
	if e2e.claudeVersion == "2.1.197" {
		want = "Configuration error in " + config
	}
	if rep.Outcome != "error_result" || len(rep.Attempts) != 1 || !strings.Contains(rep.Reason, want) {
		t.Errorf("report: %s, %d attempts, %q; want it to say %q", rep.Outcome, len(rep.Attempts), rep.Reason, want)
	}
}

// A proxy variable that is not a URL: 2.1.332 names it in a result only
// because malarun set CLAUDE_CODE_STARTUP_FAILURE_RESULTS for it; 2.1.197
// exits 0 having said nothing, which malarun names too. Exit 1 at once.
func TestRealCLIInvalidProxyStops(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakeapi.Text("Never asked."))
	e.extraEnv = append(e.extraEnv, "HTTPS_PROXY=not-a-url")
	r := e.run(append(retryFlags, "--json")...)
	r.wantCode(t, 1)
	rep := e.report(r)
	want := `(proxy_invalid): a proxy setting`
	if e2e.claudeVersion == "2.1.197" {
		want = "exited with code 0 before its first line, saying nothing"
	}
	if len(rep.Attempts) != 1 || !strings.Contains(rep.Reason, want) || !strings.Contains(rep.Reason, "HTTPS_PROXY") {
		t.Errorf("report: %d attempts, %q; want it to say %q and name HTTPS_PROXY", len(rep.Attempts), rep.Reason, want)
	}
}

// Set by the user, the variable stays as they set it: 2.1.332 then ends
// with stderr alone, an exit before the first line.
func TestRealCLIStartupResultsVariableIsTheUsers(t *testing.T) {
	requireCLI(t, "2.1.332")
	t.Parallel()
	e := newEnv(t, fakeapi.Text("Never asked."))
	e.extraEnv = append(e.extraEnv, "HTTPS_PROXY=not-a-url", "CLAUDE_CODE_STARTUP_FAILURE_RESULTS=0")
	r := e.run(append(retryFlags, "--json")...)
	r.wantCode(t, 1)
	if rep := e.report(r); rep.Attempts[0].Outcome != "early-exit" || !strings.Contains(rep.Reason, "Invalid proxy URL in HTTPS_PROXY") {
		t.Errorf("report: %s %q", rep.Attempts[0].Outcome, rep.Reason)
	}
}

// --dangerously-skip-permissions as root (the tests run as root; §F11):
// 2.1.332's bypass_root, 2.1.197's stderr. Exit 1 at once, naming the flag.
func TestRealCLIBypassAsRootStops(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("SKIPPED: the CLI refuses --dangerously-skip-permissions only as root, and this test does not run as root")
	}
	t.Parallel()
	e := newEnv(t, fakeapi.Text("Never asked."))
	e.args = []string{"--dangerously-skip-permissions"}
	r := e.run(append(retryFlags, "--json")...)
	r.wantCode(t, 1)
	rep := e.report(r)
	if len(rep.Attempts) != 1 || !strings.Contains(rep.Reason, "--dangerously-skip-permissions") || !strings.Contains(rep.Reason, "root") {
		t.Errorf("report: %d attempts, %q", len(rep.Attempts), rep.Reason)
	}
}

// A request the API never answers (no response headers), then an answer:
// 2.1.332, its first-byte window armed, asks again with an api_retry that
// says no_response; malarun counts it and its cost in the report, the
// record and the timeline, and the run succeeds.
func TestRealCLIRequestNeverAnsweredIsCounted(t *testing.T) {
	requireCLI(t, "2.1.332")
	t.Parallel()
	e := newEnv(t, fakeapi.NoAnswer(), fakeapi.Text("Answered after the retry."))
	// The CLI arms the window only with its byte watchdog on (a user's
	// value wins over malarun's 0) and for Anthropic's address, or one it
	// is told to take for it (§F37).
	e.extraEnv = append(e.extraEnv, "_CLAUDE_CODE_ASSUME_FIRST_PARTY_BASE_URL=1", "CLAUDE_STREAM_FIRST_BYTE_TIMEOUT_MS=10000", "CLAUDE_ENABLE_BYTE_WATCHDOG=1")
	r := e.run("--json")
	r.wantCode(t, 0)
	rep := e.report(r)
	n := rep.NoResponse
	if n == nil || n.Retries != 1 || n.WaitedMS < 10000 || n.MS < n.WaitedMS || rep.Attempts[0].NoResponse == nil {
		t.Fatalf("report: no_response %+v, attempt %+v", n, rep.Attempts[0])
	}
	rec := e.record()
	if rec.NoResponse.Retries != 1 || rec.NoResponse.WaitedMS != n.WaitedMS || rec.NoResponse.MS != n.MS {
		t.Errorf("record: %+v, report %+v", rec.NoResponse, n)
	}
	tl, err := os.ReadFile(filepath.Join(rep.RunDir, "timeline.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(tl), `"event":"api_retry"`) || !strings.Contains(string(tl), `"no_response":{"retries":1,"waited_ms":`) {
		t.Errorf("the timeline does not say it:\n%s", tl)
	}
	t.Logf("a request never answered cost %d ms (claude waited %d ms)", n.MS, n.WaitedMS)
}

// The prompt is found in the CLI's own session file (§F38), escaped as the
// CLI escapes it, for a first attempt and for a resumed one: a success
// stays a success. Only a success is looked at.
func TestRealCLIPromptIsSeenInItsSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakeapi.Text("Done."))
	e.task = "\n  Fix \"the\" test:\r\n\tsee ci.log — it fails ✓ \x1b[0m\u2028 and report.\n"
	r := e.run(append(retryFlags, "--log-level", "debug")...)
	r.wantCode(t, 0)
	if n, seen := r.logCount("attempt started"), strings.Count(r.stderr, `"prompt":"seen"`); n != 1 || seen != 1 {
		t.Errorf("%d attempts, the prompt seen in %d: want 1 and 1:\n%s", n, seen, r.stderr)
	}

	e = newEnv(t, fakeapi.Bash("echo step-one"), fakeapi.Stall(), fakeapi.Text("Resumed and done."))
	r = e.run(append(retryFlags, "--log-level", "debug")...)
	r.wantCode(t, 0)
	if n, seen := r.logCount("attempt started"), strings.Count(r.stderr, `"prompt":"seen"`); n != 2 || seen != 1 {
		t.Errorf("%d attempts (a stall, then a resume), the resume prompt seen in %d: want 2 and 1:\n%s", n, seen, r.stderr)
	}
}
