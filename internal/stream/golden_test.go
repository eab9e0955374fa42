package stream

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.golden from the decoder's output")

// goldenPath is testdata/golden/NAME.golden, or testdata/golden/VERSION/NAME.golden
// for a transcript of a version's folder.
func goldenPath(transcript string) string {
	name := strings.TrimSuffix(filepath.Base(transcript), ".jsonl") + ".golden"
	if dir := filepath.Base(filepath.Dir(transcript)); dir != "" && dir[0] >= '0' && dir[0] <= '9' {
		return filepath.Join("testdata", "golden", dir, name)
	}
	return filepath.Join("testdata", "golden", name)
}

func TestGolden(t *testing.T) {
	for _, path := range transcripts(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			var got bytes.Buffer
			for _, ev := range decodeFile(t, path) {
				got.Write(renderEvent(ev))
				got.WriteByte('\n')
			}
			golden := goldenPath(path)
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("decoding %s differs from %s:\n got:\n%s\nwant:\n%s", path, golden, got.Bytes(), want)
			}
		})
	}
}

// TestTranscriptFacts pins, independently of the golden files, the facts the
// supervisor relies on (docs/design.md §F4, §F5, §F7, §F10, §F15), so a
// careless -update cannot bless a regression.
func TestTranscriptFacts(t *testing.T) {
	dir := "../../testdata/transcripts"
	load := func(name string) []Event { return decodeFile(t, filepath.Join(dir, name)) }
	check := func(name string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %#v, want %#v", name, got, want)
		}
	}

	evs := load("text-success.jsonl")
	check("text-success lines", len(evs), 3)
	check("init", [3]string{evs[0].Type, evs[0].Subtype, evs[0].Model}, [3]string{"system", "init", "claude-opus-4-8[1m]"})
	check("init session", evs[0].SessionID, "4ff18c41-0db8-4141-8ca3-59af0fe7a255")
	check("assistant usage", evs[1].Usage, Tokens{InputTokens: 150000, OutputTokens: 1, CacheReadInputTokens: 1000})
	check("assistant occupancy", evs[1].Usage.Occupancy(), int64(151001))
	check("assistant texts", evs[1].Texts, []string{"Hello from mock"})
	check("assistant model", evs[1].Model, "claude-opus-4-8")
	r := evs[2]
	check("result", [3]string{r.Type, r.Subtype, r.TerminalReason}, [3]string{"result", "success", "completed"})
	check("result cost", r.TotalCostUSD, 0.750625)
	check("result window", r.ContextWindow, int64(1000000))
	check("result usage", r.Usage, Tokens{InputTokens: 150000, OutputTokens: 5, CacheReadInputTokens: 1000})
	check("result text", [2]any{r.Result, r.IsError}, [2]any{"Hello from mock", false})

	evs = load("tool-use-success.jsonl")
	check("tool use", evs[1].ToolUses, []ToolUse{{ID: "toolu_1", Name: "Bash", Input: `{"command":"echo hello-from-tool","description":"harness step"}`}})
	check("tool result (type after tool_use_id)", evs[2].ToolResults, []string{"toolu_1"})
	check("tool result line type", evs[2].Type, "user")

	evs = load("tool-use-sigterm.jsonl")
	check("sigterm tool use", evs[1].ToolUses[0].Input, `{"command":"echo side-effect >> effects.txt; sleep 30; echo done","description":"write"}`)
	check("sigterm tool result", evs[5].ToolResults, []string{"toolu_3"})
	check("sigterm last line", len(evs), 6)

	evs = load("prompt-too-long.jsonl")
	check("synthetic model", evs[1].Model, "<synthetic>")
	check("assistant error", evs[1].Error, "invalid_request")
	r = evs[2]
	check("ptl result", [2]any{r.Subtype, r.IsError}, [2]any{"success", true})
	check("ptl api_error_status", r.APIErrorStatus, 400)
	check("ptl terminal_reason", r.TerminalReason, "prompt_too_long")
	check("ptl result text", strings.HasPrefix(r.Result, "Prompt is too long · the request is ~210000 tokens"), true)
	check("ptl window (empty modelUsage)", r.ContextWindow, int64(0))

	evs = load("auth-failed-api-retry.jsonl")
	check("auth lines", len(evs), 5)
	for i, ev := range evs[1:] {
		check("api_retry", [4]any{ev.Subtype, ev.Attempt, ev.MaxRetries, ev.ErrorStatus}, [4]any{"api_retry", i + 1, 10, 401})
		check("api_retry error", ev.Error, "authentication_failed")
	}
	check("retry delay", evs[1].RetryDelayMS, 534.7949237943786)

	evs = load("resume-not-found.jsonl")
	check("resume errors", evs[0].Errors, []string{"No conversation found with session ID: 11111111-2222-3333-4444-555555555555"})
	check("resume result", [2]any{evs[0].Subtype, evs[0].IsError}, [2]any{"error_during_execution", true})

	evs = load("partial-messages.jsonl")
	var types []string
	for _, ev := range evs {
		if ev.Type == "stream_event" {
			types = append(types, ev.StreamEventType)
		}
	}
	check("stream events", types, []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"})
	check("stream_event has no usage", evs[2].HasUsage, false)

	check("session-id-in-use is empty", len(load("session-id-in-use.jsonl")), 0)
	check("2.1.197 version", load("text-success.jsonl")[0].ClaudeCodeVersion, "2.1.197")

	// 2.1.197 reports a foreground Bash call as a task too: task lines alone
	// do not mean that something runs in the background.
	evs = load("tool-use-sigterm.jsonl")
	check("foreground tool", evs[1].ToolUses[0].Background, false)
	check("foreground task", [3]string{evs[2].Subtype, evs[2].TaskID, evs[2].ToolUseID}, [3]string{"task_started", "bc5ttgzp7", "toolu_3"})
	check("foreground task stopped", [2]string{evs[3].Subtype, evs[3].Status}, [2]string{"task_notification", "stopped"})

	// docs/design.md §F17: a background task outlives the first result.
	evs = load("background-task-2.1.330.jsonl")
	check("bg init version", [2]string{evs[0].Subtype, evs[0].ClaudeCodeVersion}, [2]string{"init", "2.1.330"})
	check("bg tool use", [3]any{evs[1].ToolUses[0].ID, evs[1].ToolUses[0].Name, evs[1].ToolUses[0].Background}, [3]any{"toolu_1", "Bash", true})
	byType := func(typ, subtype string) []Event {
		var out []Event
		for _, ev := range evs {
			if ev.Type == typ && (subtype == "" || ev.Subtype == subtype) {
				out = append(out, ev)
			}
		}
		return out
	}
	results := byType("result", "")
	check("bg results", len(results), 2)
	check("bg first result origin", results[0].OriginKind, "")
	check("bg second result origin", results[1].OriginKind, "task-notification")
	check("bg second result text", results[1].Result, "The background build finished: BUILD-OK.")
	// §F37: a process numbers its results; the second says 1.
	check("bg result_index", [4]any{results[0].HasResultIndex, results[0].ResultIndex, results[1].HasResultIndex, results[1].ResultIndex},
		[4]any{true, 0, true, 1})
	check("bg num_turns", [2]int{results[0].NumTurns, results[1].NumTurns}, [2]int{2, 1})
	// 2.1.330: a later result's usage counts only the turns since the
	// previous result (modelUsage holds the total), while total_cost_usd is
	// the session's so far: summing costs over results counts twice.
	check("bg result usage per turn", [2]Tokens{results[0].Usage, results[1].Usage},
		[2]Tokens{{InputTokens: 2000, OutputTokens: 20}, {InputTokens: 1000, OutputTokens: 10}})
	check("bg result cost cumulative", [2]float64{results[0].TotalCostUSD, results[1].TotalCostUSD}, [2]float64{0.0084, 0.0126})
	started, done := byType("system", "task_started"), byType("system", "task_notification")
	check("bg one task started and done", [2]int{len(started), len(done)}, [2]int{1, 1})
	check("bg task ids", [2]string{started[0].TaskID, done[0].TaskID}, [2]string{"bvga3a558", "bvga3a558"})
	check("bg task started by the tool use", [2]string{started[0].ToolUseID, done[0].ToolUseID}, [2]string{"toolu_1", "toolu_1"})
	check("bg task type", [2]string{started[0].TaskType, started[0].Description}, [2]string{"local_bash", "Run the build in the background"})
	check("bg task done", done[0].Status, "completed")
	check("bg task output", strings.HasSuffix(done[0].OutputFile, "/tasks/bvga3a558.output"), true)
	check("bg task summary", done[0].Summary, `Background command "Run the build in the background" completed (exit code 0)`)
	updated := byType("system", "task_updated")
	check("bg task updated", [2]any{len(updated), updated[0].Status}, [2]any{1, "completed"})
	snaps := byType("system", "background_tasks_changed")
	check("bg snapshots", len(snaps), 2)
	check("bg snapshot running", [2]any{snaps[0].HasTasks, snaps[0].Tasks},
		[2]any{true, []Task{{ID: "bvga3a558", Type: "local_bash", Description: "Run the build in the background"}}})
	check("bg snapshot empty", [2]any{snaps[1].HasTasks, len(snaps[1].Tasks)}, [2]any{true, 0})
	// The order a supervisor sees: the task starts before the first result
	// and ends after it, and the second result comes after the snapshot
	// that empties the task list.
	check("bg order", started[0].Line < results[0].Line && results[0].Line < done[0].Line &&
		done[0].Line < snaps[1].Line && snaps[1].Line < results[1].Line, true)
	check("bg second init", len(byType("system", "init")), 2)

	// docs/design.md §F19: a subscription limit through OAuth.
	evs = load("usage-limit-oauth-2.1.330.jsonl")
	check("oauth version", evs[0].ClaudeCodeVersion, "2.1.330")
	rl := evs[1]
	check("oauth rate limit", [4]any{rl.Type, rl.RateLimitStatus, rl.RateLimitType, rl.ResetsAt},
		[4]any{"rate_limit_event", "rejected", "five_hour", int64(1795363511)})
	check("oauth no error code", rl.RateLimitErrorCode, "")
	r = evs[len(evs)-1]
	check("oauth result", [4]any{r.IsError, r.APIErrorStatus, r.TerminalReason, r.Result},
		[4]any{true, 429, "api_error", "You've hit your 5-hour limit · resets 4:05pm (UTC)"})
	check("oauth result origin", r.OriginKind, "")

	// 2.1.197 prints the same event; its result says "session limit" and
	// terminal_reason completed (the 429 is in api_error_status).
	evs = load("usage-limit-oauth-2.1.197.jsonl")
	check("oauth 2.1.197 version", evs[0].ClaudeCodeVersion, "2.1.197")
	rl = evs[1]
	check("oauth 2.1.197 rate limit", [4]any{rl.Type, rl.RateLimitStatus, rl.RateLimitType, rl.ResetsAt},
		[4]any{"rate_limit_event", "rejected", "five_hour", int64(1795383032)})
	r = evs[len(evs)-1]
	check("oauth 2.1.197 result", [4]any{r.IsError, r.APIErrorStatus, r.TerminalReason, r.Result},
		[4]any{true, 429, "completed", "You've hit your session limit · resets 9:30pm (UTC)"})

	// Hooks (§F27): started and response lines, paired by hook_id; the
	// PostToolUse hook exited 1 (outcome error); SessionStart's lines come
	// before init.
	for _, name := range []string{"hooks-2.1.330.jsonl", "hooks-2.1.197.jsonl"} {
		var hooks []string
		for _, ev := range load(name) {
			if ev.Type == "system" && strings.HasPrefix(ev.Subtype, "hook_") && ev.Subtype != "hook_progress" {
				hooks = append(hooks, fmt.Sprintf("%s %s/%s %s %d %v", ev.Subtype, ev.HookEvent, ev.HookName, ev.HookOutcome, ev.HookExitCode, ev.HookID != ""))
			}
		}
		check(name+" hooks", hooks, []string{
			"hook_started SessionStart/SessionStart:startup  0 true", "hook_response SessionStart/SessionStart:startup success 0 true",
			"hook_started PreToolUse/PreToolUse:Bash  0 true", "hook_response PreToolUse/PreToolUse:Bash success 0 true",
			"hook_started PostToolUse/PostToolUse:Bash  0 true", "hook_response PostToolUse/PostToolUse:Bash error 1 true",
			"hook_started Stop/Stop  0 true", "hook_response Stop/Stop success 0 true",
		})
		check(name+" first line", load(name)[0].Subtype, "hook_started")
	}

	// §F37: 2.1.332's start-up failures, one result line each, no init.
	for name, reason := range map[string]string{"startup-config-invalid": "config_file_invalid", "startup-proxy-invalid": "proxy_invalid",
		"startup-bypass-root": "bypass_root", "startup-tmpdir-unusable": "temp_dir_unusable"} {
		evs := load("2.1.332/" + name + ".jsonl")
		check(name+" lines", len(evs), 1)
		r := evs[0]
		check(name, [6]any{r.Subtype, r.IsError, r.StartupFailureReason, r.HasNumTurns, r.NumTurns, r.HasResultIndex},
			[6]any{"error_during_execution", true, reason, true, 0, true})
		check(name+" errors", len(r.Errors), 1)
		check(name+" 2.1.197 prints nothing", len(load("2.1.197/"+name+".jsonl")), 0)
	}
	check("config file", load("2.1.332/startup-config-invalid.jsonl")[0].InvalidConfigFile, ConfigFile{Path: "/home/user/.claude.json", IsGlobal: true})
	// §F37: a request never answered, asked again once.
	evs = load("2.1.332/no-response.jsonl")
	check("no_response", [5]any{evs[1].Subtype, evs[1].NoResponse, evs[1].NoResponseWaitedMS, evs[1].NoResponseRetryWaitMS, evs[1].MaxRetries},
		[5]any{"api_retry", true, 12000.0, 599000.0, 1})
	check("answered after it", [2]any{evs[3].Subtype, evs[3].NumTurns}, [2]any{"success", 1})
	evs = load("2.1.332/no-response-twice.jsonl")
	r = evs[len(evs)-1]
	check("never answered", [4]any{r.IsError, r.TerminalReason, r.APIError, evs[1].NoResponseRetryWaitMS}, [4]any{true, "api_error", "no_response", 19000.0})
	// §F38: /clear is a success without a model turn on both versions.
	for _, v := range []string{"2.1.332", "2.1.197"} {
		evs = load(v + "/prompt-slash-clear.jsonl")
		r = evs[len(evs)-1]
		check(v+" /clear", [5]any{r.Type, r.Subtype, r.IsError, r.HasNumTurns, r.NumTurns}, [5]any{"result", "success", false, true, 0})
		check(v+" /clear's result is empty", r.Result, "")
	}
	check("2.1.332 /clear resets the conversation", load("2.1.332/prompt-slash-clear.jsonl")[0].Type, "conversation_reset")

	// MCP servers (§F28): the init line lists each with its status.
	for _, name := range []string{"mcp-failed-2.1.330.jsonl", "mcp-failed-2.1.197.jsonl"} {
		check(name, load(name)[0].MCPServers, []MCPServer{{"broken", "failed"}, {"notthere", "failed"}})
	}

	for _, path := range transcripts(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		for _, ev := range decodeFile(t, path) {
			if ev.Line < 1 || int(ev.Line) > len(lines) || ev.Bytes != int64(len(lines[ev.Line-1])) {
				t.Errorf("%s: event line %d has %d bytes, want the line's length", path, ev.Line, ev.Bytes)
			}
		}
	}
}
