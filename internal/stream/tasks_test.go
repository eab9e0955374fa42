package stream

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestDecoderTaskFields covers the fields that 2.1.330 added or that the
// supervisor started to rely on with it: background tasks, the result's
// origin, the CLI version and the rate limit error code.
func TestDecoderTaskFields(t *testing.T) {
	bash := func(input string) string {
		return `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"Bash","input":` + input + `}]}}` + "\n"
	}
	bashEvent := func(input string, background bool) []Event {
		return []Event{{Line: 1, Type: "assistant", ToolUses: []ToolUse{{ID: "t", Name: "Bash", Input: input, Background: background}}}}
	}
	longCommand := strings.Repeat("x", 2*MaxInputBytes)
	longKey := strings.Repeat("k", 2*MaxInputBytes)
	runDecoderCases(t, []decoderCase{
		{
			name: "init version",
			in:   `{"type":"system","subtype":"init","claude_code_version":"2.1.330","capabilities":["x"],"session_id":"s"}` + "\n",
			want: []Event{{Line: 1, Type: "system", Subtype: "init", ClaudeCodeVersion: "2.1.330", SessionID: "s"}},
		},
		{
			name: "task lines",
			in: `{"type":"system","subtype":"task_started","task_id":"b1","run_id":"r","tool_use_id":"toolu_1","description":"build","is_backgrounded":true,"task_type":"local_bash"}` + "\n" +
				`{"type":"system","subtype":"task_progress","task_id":"b1","description":"still building","usage":{"total_tokens":5}}` + "\n" +
				`{"type":"system","subtype":"task_updated","task_id":"b1","patch":{"status":"completed","end_time":1795359911221}}` + "\n" +
				`{"status":"failed","type":"system","subtype":"task_notification","task_id":"b1","tool_use_id":"toolu_1","output_file":"/tmp/b1.output","summary":"Background command \"build\" failed"}` + "\n",
			want: []Event{
				{Line: 1, Type: "system", Subtype: "task_started", TaskID: "b1", ToolUseID: "toolu_1", Description: "build", TaskType: "local_bash", Backgrounded: true},
				// usage of a task is not an API call's: HasUsage tells only .usage and .message.usage
				{Line: 2, Type: "system", Subtype: "task_progress", TaskID: "b1", Description: "still building", HasUsage: true},
				{Line: 3, Type: "system", Subtype: "task_updated", TaskID: "b1", Status: "completed"},
				{Line: 4, Type: "system", Subtype: "task_notification", TaskID: "b1", ToolUseID: "toolu_1", Status: "failed",
					OutputFile: "/tmp/b1.output", Summary: `Background command "build" failed`},
			},
		},
		{
			name: "status line",
			in:   `{"type":"system","subtype":"status","status":"requesting","session_id":"s"}` + "\n",
			want: []Event{{Line: 1, Type: "system", Subtype: "status", Status: "requesting", SessionID: "s"}},
		},
		{
			name: "status in a nested object is not the line's",
			in:   `{"type":"system","message":{"status":"x"},"event":{"status":"y"},"x":{"patch":{"status":"z"},"origin":{"kind":"k"}}}` + "\n",
			want: []Event{{Line: 1, Type: "system"}},
		},
		{
			name: "tasks snapshot",
			in: `{"type":"system","subtype":"background_tasks_changed","tasks":[` +
				`{"task_id":"b1","run_id":"r1","task_type":"local_bash","description":"build"},` +
				`{"status":"running","description":"review","task_type":"local_agent","task_id":"a2","extra":{"task_id":"no"}}]}` + "\n" +
				`{"type":"system","subtype":"background_tasks_changed","tasks":[]}` + "\n" +
				`{"type":"system","tasks":null}` + "\n" +
				`{"type":"system","tasks":{"task_id":"x"}}` + "\n" +
				`{"type":"system","tasks":[{"task_id":"old"}],"tasks":[{"task_id":"new"},"odd",7,{}]}` + "\n",
			want: []Event{
				{Line: 1, Type: "system", Subtype: "background_tasks_changed", HasTasks: true, Tasks: []Task{
					{ID: "b1", Type: "local_bash", Description: "build"},
					{ID: "a2", Type: "local_agent", Description: "review", Status: "running"},
				}},
				{Line: 2, Type: "system", Subtype: "background_tasks_changed", HasTasks: true},
				{Line: 3, Type: "system"},
				{Line: 4, Type: "system"},
				{Line: 5, Type: "system", HasTasks: true, Tasks: []Task{{ID: "new"}, {}}},
			},
		},
		{
			name: "result origin",
			in: `{"type":"result","subtype":"success","origin":{"kind":"task-notification","producer":"session-task","runId":"r"},"result":"done"}` + "\n" +
				`{"type":"result","subtype":"success","result":"first"}` + "\n" +
				`{"type":"result","origin":"task-notification"}` + "\n",
			want: []Event{
				{Line: 1, Type: "result", Subtype: "success", OriginKind: "task-notification", Result: "done"},
				{Line: 2, Type: "result", Subtype: "success", Result: "first"},
				{Line: 3, Type: "result"},
			},
		},
		{
			name: "rate limit error code",
			in:   `{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","errorCode":"credits_required","resetsAt":1795363511,"rateLimitType":"five_hour"}}` + "\n",
			want: []Event{{Line: 1, Type: "rate_limit_event", RateLimitStatus: "rejected", RateLimitErrorCode: "credits_required",
				RateLimitType: "five_hour", ResetsAt: 1795363511}},
		},
		{
			name: "background tool use",
			in:   bash(`{"command":"make","run_in_background":true}`),
			want: bashEvent(`{"command":"make","run_in_background":true}`, true),
		},
		{
			name: "foreground tool use",
			in:   bash(`{"command":"make","run_in_background":false}`),
			want: bashEvent(`{"command":"make","run_in_background":false}`, false),
		},
		{
			name: "no run_in_background",
			in:   bash(`{"command":"make"}`),
			want: bashEvent(`{"command":"make"}`, false),
		},
		{
			name: "run_in_background not a bool",
			in:   bash(`{"run_in_background":"true","x":1}`),
			want: bashEvent(`{"run_in_background":"true","x":1}`, false),
		},
		{
			name: "run_in_background nested or as a value",
			in:   bash(`{"opts":{"run_in_background":true},"list":[{"run_in_background":true}],"k":"run_in_background"}`),
			want: bashEvent(`{"opts":{"run_in_background":true},"list":[{"run_in_background":true}],"k":"run_in_background"}`, false),
		},
		{
			name: "run_in_background other case",
			in:   bash(`{"Run_in_background":true,"run_in_backgroundx":true}`),
			want: bashEvent(`{"Run_in_background":true,"run_in_backgroundx":true}`, false),
		},
		{
			name: "run_in_background escaped key",
			in:   bash(`{"run_in_backgroun\u0064":true}`),
			want: bashEvent(`{"run_in_backgroun\u0064":true}`, true),
		},
		{
			name: "run_in_background last duplicate wins",
			in:   bash(`{"run_in_background":false,"run_in_background":true}`) + bash(`{"run_in_background":true,"run_in_background":{}}`),
			want: []Event{
				{Line: 1, Type: "assistant", ToolUses: []ToolUse{{ID: "t", Name: "Bash", Input: `{"run_in_background":false,"run_in_background":true}`, Background: true}}},
				{Line: 2, Type: "assistant", ToolUses: []ToolUse{{ID: "t", Name: "Bash", Input: `{"run_in_background":true,"run_in_background":{}}`}}},
			},
		},
		{
			name: "run_in_background after a command longer than the cap",
			in:   bash(`{"command":"` + longCommand + `","description":"d","run_in_background":true}`),
			want: []Event{{Line: 1, Type: "assistant", ToolUses: []ToolUse{{ID: "t", Name: "Bash",
				Input: (`{"command":"` + longCommand)[:MaxInputBytes], InputTruncated: true, Background: true}}}},
		},
		{
			name: "run_in_background after a key longer than the cap",
			in:   bash(`{"` + longKey + `":1,"run_in_background":true}`),
			want: []Event{{Line: 1, Type: "assistant", ToolUses: []ToolUse{{ID: "t", Name: "Bash",
				Input: (`{"` + longKey)[:MaxInputBytes], InputTruncated: true, Background: true}}}},
		},
		{
			name: "a key that fills the cap exactly",
			// `{"` + key + `"` is MaxInputBytes: the rest of the input is cut.
			in: bash(`{"` + longKey[:MaxInputBytes-3] + `":1}`),
			want: []Event{{Line: 1, Type: "assistant", ToolUses: []ToolUse{{ID: "t", Name: "Bash",
				Input: `{"` + longKey[:MaxInputBytes-3] + `"`, InputTruncated: true}}}},
		},
		{
			name: "background is per tool use",
			in: `{"type":"assistant","message":{"content":[` +
				`{"type":"tool_use","id":"a","name":"Bash","input":{"run_in_background":true}},` +
				`{"type":"tool_use","id":"b","name":"Bash","input":{"command":"ls"}},` +
				`{"input":{"run_in_background":true},"type":"text","text":"not a tool use"}]}}` + "\n",
			want: []Event{{Line: 1, Type: "assistant",
				ToolUses: []ToolUse{
					{ID: "a", Name: "Bash", Input: `{"run_in_background":true}`, Background: true},
					{ID: "b", Name: "Bash", Input: `{"command":"ls"}`},
				},
				Texts: []string{"not a tool use"},
			}},
		},
		{
			name: "input not an object",
			in:   bash(`["run_in_background",true]`) + bash(`"run_in_background"`),
			want: []Event{
				{Line: 1, Type: "assistant", ToolUses: []ToolUse{{ID: "t", Name: "Bash", Input: `["run_in_background",true]`}}},
				{Line: 2, Type: "assistant", ToolUses: []ToolUse{{ID: "t", Name: "Bash", Input: `"run_in_background"`}}},
			},
		},
	})
}

func TestDecoderTaskCaps(t *testing.T) {
	long := strings.Repeat("é", MaxShortBytes) // two bytes each
	var tasks []string
	for i := range MaxListItems + 10 {
		tasks = append(tasks, fmt.Sprintf(`{"task_id":"t%d","description":"%s"}`, i, long))
	}
	in := `{"type":"system","subtype":"task_notification","task_id":"` + long + `","description":"` + long +
		`","summary":"` + long + `","output_file":"` + long + `"}` + "\n" +
		`{"type":"system","subtype":"background_tasks_changed","tasks":[` + strings.Join(tasks, ",") + `]}` + "\n"
	evs := decodeAll(t, strings.NewReader(in))
	if len(evs) != 2 {
		t.Fatalf("got %d events, want 2", len(evs))
	}
	n := evs[0]
	for name, c := range map[string]struct {
		got string
		cap int
	}{
		"task_id":     {n.TaskID, MaxShortBytes},
		"description": {n.Description, MaxInputBytes},
		"summary":     {n.Summary, MaxShortBytes},
		"output_file": {n.OutputFile, MaxShortBytes},
	} {
		if len(c.got) != c.cap || !utf8.ValidString(c.got) || !strings.HasPrefix(long, c.got) {
			t.Errorf("%s: %d bytes (valid UTF-8: %v), want the first %d", name, len(c.got), utf8.ValidString(c.got), c.cap)
		}
	}
	got := evs[1].Tasks
	if len(got) != MaxListItems || got[0].ID != "t0" || got[MaxListItems-1].ID != fmt.Sprintf("t%d", MaxListItems-1) {
		t.Fatalf("tasks: %d kept, want the first %d", len(got), MaxListItems)
	}
	if d := got[0].Description; len(d) != MaxInputBytes || !strings.HasPrefix(long, d) {
		t.Errorf("task description: %d bytes, want %d", len(d), MaxInputBytes)
	}
}
