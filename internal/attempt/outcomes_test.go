package attempt

import (
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/environ"
	"github.com/malarun/malarun/internal/stream"
)

// startupResult is the zeroed result 2.1.332 writes when it refuses to
// start (docs/design.md §F37), with no init line before it.
func startupResult(reason, errText string) *stream.Event {
	return &stream.Event{Type: "result", Subtype: "error_during_execution", IsError: true, NumTurns: 0, HasNumTurns: true,
		Errors: []string{errText}, StartupFailureReason: reason, ResultIndex: 0, HasResultIndex: true}
}

// Every start-up failure cause 2.1.332 lists is decided: a person must fix
// it (error-result, or auth for a sign-in), or it can pass (startup-failed:
// tried again). The message names what to fix.
func TestEveryStartupFailureCauseIsDecided(t *testing.T) {
	cases := []struct {
		reason string
		want   Ending
		says   string
	}{
		{"org_pin_api_key_conflict", Auth, "ANTHROPIC_API_KEY"},
		{"provider_not_allowed", ErrorResult, "allowedProviders"},
		{"org_verify_failed", StartupFailed, "could not be verified"},
		{"org_pin_mismatch", Auth, "pin"},
		{"managed_settings_invalid", ErrorResult, "managed policy settings"},
		{"remote_settings_required_unavailable", StartupFailed, "could not be loaded"},
		{"gateway_signin_required", Auth, "sign in again"},
		{"gateway_access_denied", Auth, "Cloud gateway"},
		{"proxy_invalid", ErrorResult, "HTTPS_PROXY"},
		{"temp_dir_unusable", ErrorResult, "CLAUDE_CODE_TMPDIR"},
		{"cwd_unavailable", ErrorResult, "working directory"},
		{"shell_tool_missing", ErrorResult, "shell tool"},
		{"session_held_by_background", StartupFailed, "background session"},
		{"worktree_resume_refused", ErrorResult, "worktree"},
		{"worktree_unverified", StartupFailed, "worktree"},
		{"cli_version_too_old", ErrorResult, "upgrade it"},
		{"bypass_root", ErrorResult, "--dangerously-skip-permissions"},
		{"org_config_required_unavailable", StartupFailed, "policy"},
		{"org_config_refused", Auth, "sign in again"},
		{"sandbox_required_unavailable", ErrorResult, "sandbox"},
		{"initialize_not_first", ErrorResult, "--await-initialize"},
		{"config_file_invalid", ErrorResult, "not valid JSON"},
		{"managed_settings_not_delivered", ErrorResult, "--managed-settings-in-initialize"},
		{"initialize_fields_not_delivered", ErrorResult, "--initialize-fields"},
		{"sideload_flags_disabled", ErrorResult, "--mcp-config"},
	}
	if len(cases) != len(startupCauses) {
		t.Errorf("%d cases for %d known causes", len(cases), len(startupCauses))
	}
	for _, c := range cases {
		r := startupResult(c.reason, "claude's own words\nand more")
		got, why := Classify(played(*r))
		if got != c.want || !strings.Contains(why, c.says) || !strings.Contains(why, c.reason) {
			t.Errorf("%s: %v %q, want %v saying %q", c.reason, got, why, c.want, c.says)
		}
		if UnknownResult(r) != "" {
			t.Errorf("%s is reported as unknown", c.reason)
		}
		if c.reason != "config_file_invalid" && c.want != StartupFailed && !strings.Contains(why, "claude said: claude's own words") {
			t.Errorf("%s: the message %q does not quote claude's first line", c.reason, why)
		}
	}
	// A cause a newer CLI adds: final, reported as it came, and warned about.
	r := startupResult("quantum_refusal", "no")
	if got, why := Classify(played(*r)); got != ErrorResult || !strings.Contains(why, "quantum_refusal") {
		t.Errorf("unknown cause: %v %q", got, why)
	}
	if u := UnknownResult(r); !strings.Contains(u, "quantum_refusal") {
		t.Errorf("unknown cause not warned about: %q", u)
	}
}

// A configuration file that does not parse is named from the result's
// own field, never from the text of errors, with the backup claude names.
func TestAConfigFileThatDoesNotParseIsNamed(t *testing.T) {
	r := startupResult("config_file_invalid", "Configuration error in /elsewhere: ...")
	r.InvalidConfigFile = stream.ConfigFile{Path: "/home/u/.claude.json", IsGlobal: true, BackupPath: "/home/u/.claude/backups/.claude.json.backup.1"}
	_, why := Classify(played(*r))
	want := "claude refused to start (config_file_invalid): claude's configuration file /home/u/.claude.json is not valid JSON: fix it, or move it aside to start with claude's defaults (claude names a backup: /home/u/.claude/backups/.claude.json.backup.1; check that it parses before copying it over)"
	if why != want {
		t.Errorf("reason\n %q\nwant\n %q", why, want)
	}
	r.InvalidConfigFile = stream.ConfigFile{Path: "/p", PathTruncated: true}
	if _, why := Classify(played(*r)); !strings.Contains(why, "/p… is not valid JSON") || strings.Contains(why, "backup") {
		t.Errorf("a cut path: %q", why)
	}
	r.InvalidConfigFile = stream.ConfigFile{}
	if _, why := Classify(played(*r)); !strings.Contains(why, "claude did not say which") {
		t.Errorf("no path: %q", why)
	}
}

// A success whose turn made no model call never reached the model
// (docs/design.md §F38): not a success, whatever claude answered itself.
func TestASuccessWithoutTheModelIsALostPrompt(t *testing.T) {
	ok := func(turns int, has bool, text string) []stream.Event {
		return []stream.Event{{Type: "system", Subtype: "init"}, {Type: "result", Subtype: "success", NumTurns: turns, HasNumTurns: has, Result: text}}
	}
	for _, c := range []struct {
		name string
		log  []stream.Event
		want Ending
		says string
	}{
		{"/clear: num_turns 0, no text", ok(0, true, ""), PromptLost, "the model never saw the prompt"},
		{"an unknown command (2.1.197)", ok(0, true, "Unknown command: /nosuchcommand"), PromptLost, "claude answered by itself: Unknown command: /nosuchcommand"},
		{"a model turn", ok(1, true, "done"), Success, "claude reported success"},
		{"a CLI that does not count", ok(0, false, ""), Success, "claude reported success"},
	} {
		got, why := Classify(played(c.log...))
		if got != c.want || !strings.Contains(why, c.says) {
			t.Errorf("%s: %v %q, want %v saying %q", c.name, got, why, c.want, c.says)
		}
	}
	// An error result with num_turns 0 is decided by the result table.
	if got, _ := Classify(played(stream.Event{Type: "result", Subtype: "error_during_execution", IsError: true, HasNumTurns: true, TerminalReason: "completed"})); got != ErrorResult {
		t.Errorf("an error result without a model turn: %v", got)
	}
}

// A gap in result_index counts the results lost; a process numbers its
// own from 0, and a lower or repeated index is no gap.
func TestResultIndexGaps(t *testing.T) {
	res := func(i int) stream.Event {
		return stream.Event{Type: "result", Subtype: "success", ResultIndex: i, HasResultIndex: true, NumTurns: 1, HasNumTurns: true}
	}
	for _, c := range []struct {
		name    string
		indexes []int
		lost    int
	}{
		{"none", []int{0, 1, 2}, 0},
		{"the first lost", []int{1}, 1},
		{"two in the middle", []int{0, 3}, 2},
		{"repeated and lower", []int{0, 1, 1, 0, 2}, 0},
		{"absurd", []int{stream.MaxCount}, stream.MaxCount},
	} {
		log := NewLog("s")
		for _, i := range c.indexes {
			log.Observe(res(i))
		}
		if log.ResultsLost != c.lost {
			t.Errorf("%s: %d lost, want %d", c.name, log.ResultsLost, c.lost)
		}
		if last := log.Results[len(log.Results)-1]; !last.HasIndex || last.Index != c.indexes[len(c.indexes)-1] {
			t.Errorf("%s: last result %+v", c.name, last)
		}
	}
	// A CLI that does not number its results (2.1.197) loses none.
	log := NewLog("s")
	log.Observe(stream.Event{Type: "result", Subtype: "success"})
	if log.ResultsLost != 0 || log.Results[0].HasIndex {
		t.Errorf("unnumbered: %+v", log)
	}
	// The last result still decides: a gap does not change the outcome.
	if got, _ := Classify(played(stream.Event{Type: "system", Subtype: "init"}, res(1))); got != Success {
		t.Errorf("a success after a lost result: %v", got)
	}
}

// resume_reason is kept: the last one a result carried.
func TestResumeReasonIsKept(t *testing.T) {
	log := NewLog("s")
	log.Observe(stream.Event{Type: "result", Subtype: "success", ResumeReason: "interrupted_turn"})
	log.Observe(stream.Event{Type: "result", Subtype: "success"})
	if log.ResumeReason != "interrupted_turn" || log.Results[0].ResumeReason != "interrupted_turn" || log.Results[1].ResumeReason != "" {
		t.Errorf("resume reason %q, results %+v", log.ResumeReason, log.Results)
	}
}

// A 401 at the first request is no retry of claude's: the words say so.
func TestRefusedCredentialsAreNoRetry(t *testing.T) {
	first := &stream.Event{Type: "system", Subtype: "api_retry", Attempt: 1, MaxRetries: 10, ErrorStatus: 401, Error: "authentication_failed"}
	if !RefusedCredentials(first) || RefusedCredentials(&stream.Event{Type: "system", Subtype: "api_retry", ErrorStatus: 529}) {
		t.Error("RefusedCredentials")
	}
	why := authReason(first)
	if want := "the API answered 401 authentication_failed at claude's first request (malarun stops claude there); check ANTHROPIC_API_KEY or the CLI's login"; why != want {
		t.Errorf("reason\n %q\nwant\n %q", why, want)
	}
	later := *first
	later.Attempt, later.ErrorStatus = 3, 0
	if why := authReason(&later); !strings.Contains(why, "refused claude's credentials authentication_failed after claude had sent the request 3 times") || strings.Contains(why, "retry 3") {
		t.Errorf("a later refusal: %q", why)
	}
}

// The requests never answered and their cost: claude's wait, and from the
// retry's line to the next line of progress (a ping or a status is none).
func TestNoResponsesCountTheirCost(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	retry := &stream.Event{Type: "system", Subtype: "api_retry", NoResponse: true, NoResponseWaitedMS: 180000}
	var n NoResponses
	n.Observe(&stream.Event{Type: "system", Subtype: "api_retry", ErrorStatus: 529}, t0) // not one
	n.Observe(retry, t0.Add(time.Second))
	n.Observe(&stream.Event{Type: "stream_event", StreamEventType: "ping"}, t0.Add(2*time.Second))
	n.Observe(&stream.Event{Type: "system", Subtype: "status"}, t0.Add(3*time.Second))
	n.Observe(&stream.Event{Type: "stream_event", StreamEventType: "message_start"}, t0.Add(4*time.Second))
	n.Observe(&stream.Event{Type: "assistant"}, t0.Add(9*time.Second))
	if n.Retries != 1 || n.Waited != 180*time.Second || n.Cost != 183*time.Second {
		t.Errorf("one retry answered 3s later: %+v", n)
	}
	// Two in a row, the second never answered before the attempt ended.
	n.Observe(retry, t0.Add(10*time.Second))
	n.Observe(retry, t0.Add(12*time.Second))
	n.End(t0.Add(20 * time.Second))
	if n.Retries != 3 || n.Waited != 540*time.Second || n.Cost != 183*time.Second+2*time.Second+8*time.Second+360*time.Second {
		t.Errorf("three retries: %+v", n)
	}
	n.End(t0.Add(time.Hour)) // nothing waits
	if n.Cost != 553*time.Second {
		t.Errorf("End twice: %+v", n)
	}
}

// played is an attempt whose CLI printed evs and exited (code 0, or 1
// after an error result, as the pinned CLIs do), its machine and log fed
// as the driver feeds them.
func played(evs ...stream.Event) Ended {
	m, log := New(defaults, t0), NewLog("s")
	code := 0
	for i, ev := range evs {
		log.Observe(ev)
		m.Step(Input{Kind: Line, Event: ev}, t0.Add(time.Duration(i)*time.Second))
		if ev.Type == "result" && ev.IsError {
			code = 1
		}
	}
	m.Step(Input{Kind: StreamEnd}, t0.Add(time.Minute))
	return Ended{Machine: m, Log: log, Exit: Exit{Code: code}}
}

// malarun asks 2.1.332 to say why it refused to start, unless claude's
// environment sets the variable itself (an empty value is unset).
func TestStartupEnv(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want string
	}{
		{[]string{"HOME=/h"}, "1"},
		{[]string{"CLAUDE_CODE_STARTUP_FAILURE_RESULTS=0"}, "0"},
		{[]string{"CLAUDE_CODE_STARTUP_FAILURE_RESULTS=  "}, "1"},
		{[]string{"CLAUDE_CODE_STARTUP_FAILURE_RESULTS=false"}, "false"},
	} {
		got, _ := environ.Lookup(StartupEnv(c.env), startupVar)
		if got != c.want {
			t.Errorf("%q: %s=%q, want %q", c.env, startupVar, got, c.want)
		}
	}
}
