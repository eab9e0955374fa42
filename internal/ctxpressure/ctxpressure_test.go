package ctxpressure

import (
	"regexp"
	"strings"
	"testing"

	"github.com/malarun/malarun/internal/stream"
)

func assistant(in, cacheCreate, cacheRead, out int64) stream.Event {
	return stream.Event{Type: "assistant", HasUsage: true, Usage: stream.Tokens{
		InputTokens: in, CacheCreationInputTokens: cacheCreate, CacheReadInputTokens: cacheRead, OutputTokens: out}}
}

func TestOccupancyFormulaUsesAllFourFields(t *testing.T) {
	m := New(0, 0.9)
	m.Observe(assistant(1200, 500, 170000, 300))
	if got := m.Occupancy(); got != 172000 {
		t.Errorf("occupancy %d, want 172000", got)
	}
	// A result's usage is cumulative over the session: it must not count.
	m.Observe(stream.Event{Type: "result", HasUsage: true, Usage: stream.Tokens{InputTokens: 900000}})
	if got := m.Occupancy(); got != 172000 {
		t.Errorf("after a result, occupancy %d, want 172000", got)
	}
}

// A message whose usage lost a count to the decoder's range check would
// understate the context: the last good measurement stands.
func TestRejectedUsageKeepsTheLastMeasurement(t *testing.T) {
	m := New(0, 0.9)
	m.Observe(assistant(1200, 500, 170000, 300))
	bad := assistant(0, 0, 0, 300)
	bad.Rejected = []stream.Rejected{{Field: "message.usage.cache_read_input_tokens", Raw: "-1"}}
	if o := m.Observe(bad); o.MissingUsage || m.Occupancy() != 172000 {
		t.Errorf("after a rejected count: occupancy %d, %+v; want 172000 kept", m.Occupancy(), o)
	}
	m.Observe(assistant(1000, 0, 0, 0))
	if m.Occupancy() != 1000 {
		t.Errorf("a good message after it: occupancy %d, want 1000", m.Occupancy())
	}
}

func TestThresholds(t *testing.T) {
	for _, c := range []struct {
		tokens int64
		over   bool
	}{{178000, false}, {180000, true}, {182000, true}} { // 89%, 90%, 91% of 200k
		m := New(0, 0.90)
		if o := m.Observe(assistant(c.tokens, 0, 0, 0)); o.Crossed != c.over {
			t.Errorf("%d tokens: crossed %v, want %v", c.tokens, o.Crossed, c.over)
		}
	}
}

func TestSubAgentAndSyntheticMessagesDoNotCount(t *testing.T) {
	m := New(0, 0.9)
	m.Observe(assistant(1000, 0, 0, 0))
	sub := assistant(190000, 0, 0, 0)
	sub.ParentToolUseID = "toolu_1"
	syn := assistant(190000, 0, 0, 0)
	syn.Model = "<synthetic>"
	for _, ev := range []stream.Event{sub, syn} {
		if o := m.Observe(ev); o.Crossed || m.Occupancy() != 1000 {
			t.Errorf("%+v changed occupancy to %d", ev, m.Occupancy())
		}
	}
}

func TestWindowSources(t *testing.T) {
	m := New(0, 0.9)
	if w, src := m.Window(); w != 200000 || src != sourceAssume {
		t.Errorf("no information: %d from %s", w, src)
	}
	m.Observe(stream.Event{Type: "system", Subtype: "init", Model: "claude-opus-4-8[1m]"})
	if w, src := m.Window(); w != 1000000 || src != sourceModel {
		t.Errorf("[1m] model: %d from %s", w, src)
	}
	m.Observe(stream.Event{Type: "result", ContextWindow: 400000})
	if w, src := m.Window(); w != 400000 || src != sourceResult {
		t.Errorf("after a result: %d from %s", w, src)
	}
	m.NewSession()
	if w, _ := m.Window(); w != 400000 {
		t.Errorf("a new session forgot the window learned: %d", w)
	}
	c := New(150000, 0.9)
	c.Observe(stream.Event{Type: "result", ContextWindow: 400000})
	if w, src := c.Window(); w != 150000 || src != sourceConfig {
		t.Errorf("config limit: %d from %s", w, src)
	}
}

func TestMissingUsageWarnsOnceAndDoesNotTrigger(t *testing.T) {
	m := New(0, 0.9)
	ev := stream.Event{Type: "assistant"}
	if o := m.Observe(ev); !o.MissingUsage || o.Crossed {
		t.Errorf("first message without usage: %+v", o)
	}
	if o := m.Observe(ev); o.MissingUsage {
		t.Errorf("warned twice")
	}
}

func TestCompactionResetsUntilNextMessage(t *testing.T) {
	m := New(0, 0.9)
	m.Observe(assistant(190000, 0, 0, 0))
	if o := m.Observe(stream.Event{Type: "system", Subtype: "compact_boundary"}); !o.Compacted || o.Crossed || m.Over() {
		t.Errorf("after compaction: %+v, over %v", o, m.Over())
	}
	if o := m.Observe(assistant(20000, 0, 0, 0)); o.Crossed || m.Occupancy() != 20000 {
		t.Errorf("after the next message: occupancy %d", m.Occupancy())
	}
}

func TestExtractCheckpoint(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"tags", "Here it is.\n<checkpoint>\n## Goal\nFix it\n</checkpoint>\nStopping.", "## Goal\nFix it"},
		{"fenced xml", "```xml\n<checkpoint>\nGoal: X\n</checkpoint>\n```", "Goal: X"},
		{"fenced markdown without tags", "```markdown\n## Goal\nX\n```\n", "## Goal\nX"},
		{"plain fence", "```\n<checkpoint>A</checkpoint>\n```", "A"},
		{"none", "Just a summary.", "Just a summary."},
		{"inline backticks kept", "<checkpoint>run `make test`</checkpoint>", "run `make test`"},
	} {
		if got := ExtractCheckpoint(c.in); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// The checkpoint is found as the regular expressions it replaced found
// it (they cost every malarun's start when compiled at package load).
func FuzzExtractCheckpointAsTheRegexpsDid(f *testing.F) {
	for _, s := range []string{"```xml\n<checkpoint>a</checkpoint>\n```", "  ```go \nx\n```", "<checkpoint>a<checkpoint>b</checkpoint>c</checkpoint>",
		"```\r\n", "text ```inline``` text", "<checkpoint>open only", "```a-b_1\t\n```", "\n\n```\n"} {
		f.Add(s)
	}
	fence := regexp.MustCompile("(?m)^[ \t]*```[A-Za-z0-9_-]*[ \t]*$\n?")
	tags := regexp.MustCompile(`(?s)<checkpoint>(.*?)</checkpoint>`)
	want := func(reply string) string {
		text := fence.ReplaceAllString(reply, "")
		if m := tags.FindStringSubmatch(text); m != nil {
			return strings.TrimSpace(m[1])
		}
		return strings.TrimSpace(text)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		if got, w := ExtractCheckpoint(reply), want(reply); got != w {
			t.Errorf("ExtractCheckpoint(%q) = %q, the regexps gave %q", reply, got, w)
		}
	})
}
