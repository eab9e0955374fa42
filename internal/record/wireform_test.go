package record_test

import (
	"encoding/json"
	"testing"

	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/stream"
)

// The record keeps the stream's own types for a tool call, a task and an
// MCP server (issue 48): their JSON tags are the file's format, which
// this pins, so a change to the stream's types that would change
// record.json fails here. A call's id and flags and a task's status are
// the stream's alone.
func TestSharedTypesInTheRecordsFile(t *testing.T) {
	r := record.Record{
		InFlight: record.InFlight{
			Running: []stream.ToolUse{{ID: "toolu_1", Name: "Bash", Input: `{"command":"make"}`, InputTruncated: true, Background: true}},
			Tasks: []stream.Task{{ID: "b1", Type: "local_bash", Description: "the build", Command: `{"command":"make"}`,
				ToolUseID: "toolu_1", OutputFile: "/tmp/b1.output", Status: "running"}, {ID: "b2"}},
		},
		MCPNotConnected: []stream.MCPServer{{Name: "github", Status: "failed"}},
	}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]string{
		"running": `[{"name":"Bash","input":"{\"command\":\"make\"}"}]`,
		"tasks": `[{"id":"b1","type":"local_bash","description":"the build","command":"{\"command\":\"make\"}",` +
			`"tool_use_id":"toolu_1","output_file":"/tmp/b1.output"},{"id":"b2"}]`,
		"mcp_servers_not_connected": `[{"name":"github","status":"failed"}]`,
	} {
		if got := string(m[field]); got != want {
			t.Errorf("record.json's %s is\n%s\nwant\n%s", field, got, want)
		}
	}
}
