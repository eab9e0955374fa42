package supervisor_test

import (
	"strings"
	"testing"
	"testing/synctest"

	"github.com/malarun/malarun/internal/testing/testchild"
)

// MCP servers the CLI started without are named: one warning per server
// in the run, and the attempt's report lists them (§F28).
func TestMCPServersNotConnectedAreNamed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.Replay, testchild.EnvTranscript+"="+transcripts+"mcp-failed-2.1.330.jsonl")
		rep, err, _ := h.run()
		if err != nil {
			t.Fatal(err)
		}
		logs := h.logs.String()
		for _, name := range []string{"broken", "notthere"} {
			if n := strings.Count(logs, `"mcp_server":"`+name+`","status":"failed","message":"an MCP server claude was given is not connected`); n != 1 {
				t.Errorf("%s: %d warnings, want 1:\n%s", name, n, logs)
			}
		}
		down := rep.History[0].MCPDown
		if len(down) != 2 || down[0].Name != "broken" || down[1].Status != "failed" {
			t.Errorf("report: %+v", down)
		}
		// The record keeps them for malarun status.
		if rec := readRecord(t, h); len(rec.MCPNotConnected) != 2 || rec.MCPNotConnected[1].Name != "notthere" {
			t.Errorf("record: %+v", rec.MCPNotConnected)
		}
	})
}
