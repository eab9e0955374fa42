package attempt

import (
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/environ"
)

// malarun turns the CLI's own stream limits off unless the user set them;
// a user's value wins, with a warning where it gives up sooner than
// malarun would (docs/design.md §D30).
func TestCLIEnv(t *testing.T) {
	lim := Limits{Idle: 3 * time.Minute, Tool: 15 * time.Minute, Text: time.Minute, Thinking: 3 * time.Minute, ToolInput: 15 * time.Minute, Subagent: 90 * time.Second}
	cases := []struct {
		name  string
		env   []string
		want  map[string]string // values in the CLI's environment
		warns []string          // what each warning must name, in order
	}{
		{"nothing set: the stream limits off, the sub-agent's at subagent_timeout", []string{"PATH=/bin"},
			map[string]string{"CLAUDE_ENABLE_STREAM_WATCHDOG": "0", "CLAUDE_ENABLE_BYTE_WATCHDOG": "0", "API_FORCE_IDLE_TIMEOUT": "0",
				"CLAUDE_ASYNC_AGENT_STALL_TIMEOUT_MS": "90000", "PATH": "/bin"}, nil},
		{"the user's sub-agent limit wins", []string{"CLAUDE_ASYNC_AGENT_STALL_TIMEOUT_MS=600000"},
			map[string]string{"CLAUDE_ASYNC_AGENT_STALL_TIMEOUT_MS": "600000"}, nil},
		{"the user's off stays, no warning", []string{"CLAUDE_ENABLE_STREAM_WATCHDOG=false"},
			map[string]string{"CLAUDE_ENABLE_STREAM_WATCHDOG": "false", "CLAUDE_ENABLE_BYTE_WATCHDOG": "0"}, nil},
		{"the user's watchdog on at its 300 s floor: kept, warned", []string{"CLAUDE_ENABLE_STREAM_WATCHDOG=1", "CLAUDE_STREAM_IDLE_TIMEOUT_MS=1000"},
			map[string]string{"CLAUDE_ENABLE_STREAM_WATCHDOG": "1", "CLAUDE_STREAM_IDLE_TIMEOUT_MS": "1000"}, []string{"no event for 5m0s"}},
		{"a watchdog longer than malarun's longest allowance is no threat", []string{"CLAUDE_ENABLE_STREAM_WATCHDOG=on", "CLAUDE_STREAM_IDLE_TIMEOUT_MS=1800000"},
			map[string]string{"CLAUDE_ENABLE_STREAM_WATCHDOG": "on"}, nil},
		{"garbage is the CLI's default: on", []string{"CLAUDE_ENABLE_BYTE_WATCHDOG=maybe"},
			map[string]string{"CLAUDE_ENABLE_BYTE_WATCHDOG": "maybe", "CLAUDE_ENABLE_STREAM_WATCHDOG": "0"}, []string{"no byte for 3m0s"}},
		{"the connection's idle limit kept", []string{"API_FORCE_IDLE_TIMEOUT=1"},
			map[string]string{"API_FORCE_IDLE_TIMEOUT": "1"}, []string{"after 5m0s without a byte"}},
		{"an empty value is unset", []string{"CLAUDE_ENABLE_STREAM_WATCHDOG="},
			map[string]string{"CLAUDE_ENABLE_STREAM_WATCHDOG": "0"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, warns := CLIEnv(c.env, lim)
			for k, v := range c.want {
				if got, ok := environ.Lookup(out, k); !ok || got != v {
					t.Errorf("%s = %q (set %v), want %q", k, got, ok, v)
				}
			}
			if len(warns) != len(c.warns) {
				t.Fatalf("warnings %q, want %d", warns, len(c.warns))
			}
			for i, w := range c.warns {
				if !strings.Contains(warns[i], w) || !strings.Contains(warns[i], "15m0s") {
					t.Errorf("warning %q, want it to name %q and malarun's 15m0s", warns[i], w)
				}
			}
		})
	}
	// The allowance that grew over the run counts, not only the setting.
	grown := lim
	grown.Room[PhaseToolInput] = 2
	if _, warns := CLIEnv([]string{"CLAUDE_ENABLE_STREAM_WATCHDOG=1", "CLAUDE_STREAM_IDLE_TIMEOUT_MS=1800000"}, grown); len(warns) != 1 || !strings.Contains(warns[0], "1h0m0s") {
		t.Errorf("a 30m watchdog against a tool input grown to 1h: %q", warns)
	}
}
