package supervisor_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// A hang while the model writes a tool call's input gives the next attempts
// twice the room there, up to four times the setting (docs/design.md
// §D30): the run logs it, the record keeps it for a rerun, and each hang's
// reason names the phase, in fake time, at exactly its allowance.
func TestAHangInAToolInputGivesTheRunRoom(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lines := []string{testchild.InitLine,
			`{"type":"system","subtype":"status","status":"requesting","session_id":"` + testchild.SessionID + `"}`,
			`{"type":"stream_event","event":{"type":"message_start","message":{"id":"msg_1"}},"session_id":"` + testchild.SessionID + `","parent_tool_use_id":null}`,
			`{"type":"stream_event","event":{"content_block":{"type":"tool_use","id":"toolu_1","name":"Write","input":{}},"index":0,"type":"content_block_start"},"session_id":"` + testchild.SessionID + `","parent_tool_use_id":null}`}
		// The model writes the same input on every attempt, and never ends
		// it (a session that never talked starts afresh each time).
		h := newHarness(t, testchild.Hang, testchild.EnvLines+"=4", testchild.EnvTranscript+"="+transcriptFile(t, lines...))
		h.cfg.IdleTimeout, h.cfg.ToolInputTimeout, h.cfg.MaxAttempts, h.cfg.MaxIdleRetries = time.Second, 40*time.Second, 4, 5
		rep, err, took := h.run()
		wantKind(t, err, outcome.RetriesExhausted, "no output for 2m40s while writing the input of a Write call (tool_input_timeout ×4")
		// 40s, then twice and four times that, and never more (MaxRoom).
		if want := (40 + 80 + 160 + 160) * time.Second; took != want {
			t.Errorf("took %v, want exactly %v: each hang at its phase's allowance, grown", took, want)
		}
		if r := rep.History[0].Reason; !strings.HasPrefix(r, "no output for 40s while writing the input of a Write call (tool_input_timeout)") {
			t.Errorf("first attempt's reason %q", r)
		}
		if n := strings.Count(h.logs.String(), `"phase":"tool_input","doing":"while writing the input of a Write call","allowed":`); n != 2 {
			t.Errorf("%d logs of room given, want 2 (the third hang gives none: MaxRoom):\n%s", n, h.logs.String())
		}
		e, ok := journal.Read(h.cfg.StateDir, h.cfg.IssueID)
		if !ok || e.Err != nil || e.Record.PhaseRoom["tool_input"] != 2 || len(e.Record.PhaseRoom) != 1 {
			t.Errorf("record phase_room %v (%v)", e.Record.PhaseRoom, e.Err)
		}
		// A rerun continues the stopped run with the room it had.
		h.cfg.MaxAttempts = 1
		if _, err, took := h.run(); took != 160*time.Second {
			t.Errorf("the rerun's hang came after %v (%v), want the grown 2m40s", took, err)
		}
	})
}
