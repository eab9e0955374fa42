package supervisor_test

import (
	"slices"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/run"
	"github.com/malarun/malarun/internal/supervisor"
)

// validConfig is the default configuration with what a run must be given.
func validConfig() supervisor.Config {
	c := supervisor.DefaultConfig()
	c.IssueID, c.Prompt, c.PromptSource, c.StateDir = "issue-1", []byte("Do it."), "task.md", "/state"
	return c
}

// Each key's check, from the key table, says what is wrong in the words a
// user has always read (a row per kind of check and per key with words
// of its own).
func TestValidateSaysWhatEachKeyAllows(t *testing.T) {
	for _, tc := range []struct {
		set  func(*supervisor.Config)
		want string
	}{
		{func(c *supervisor.Config) { c.ClaudeBin = "" }, "claude_bin is empty: give the path or name of the claude CLI"},
		{func(c *supervisor.Config) { c.StateDir = "" }, "state_dir is empty"},
		{func(c *supervisor.Config) { c.IdleTimeout = 0 }, "idle_timeout is 0s: it must be a positive duration such as 30s or 5m"},
		{func(c *supervisor.Config) { c.SubagentTimeout = -time.Second }, "subagent_timeout is -1s: it must be a positive duration such as 30s or 5m"},
		{func(c *supervisor.Config) { c.BackgroundTimeout = 0 }, "background_timeout is 0s: it must be a positive duration such as 30s or 5m"},
		{func(c *supervisor.Config) { c.SessionTimeout = -time.Minute }, "session_timeout is -1m0s: use 0 to disable it or a positive duration"},
		{func(c *supervisor.Config) { c.LimitWait = -time.Second }, "limit_wait is -1s: use 0 to never wait for a usage limit, or a positive duration"},
		{func(c *supervisor.Config) { c.UnreachableWindow = -time.Second }, "unreachable_window is -1s: use 0 to end the run at the first look, or a positive duration"},
		{func(c *supervisor.Config) { c.MaxAttempts = 0 }, "max_attempts is 0: it must be at least 1"},
		{func(c *supervisor.Config) { c.MaxIdleRetries = -1 }, "max_idle_retries is -1: it must be 0 or more"},
		{func(c *supervisor.Config) { c.MaxReclaims = -2 }, "max_reclaims is -2: it must be 0 or more"},
		{func(c *supervisor.Config) { c.Backoff = []time.Duration{0, -time.Second} }, "backoff entry 2 is -1s: waits cannot be negative"},
		{func(c *supervisor.Config) { c.ContextThreshold = 1.5 }, "context_threshold is 1.5: it must be a fraction above 0 and at most 1, such as 0.9"},
		{func(c *supervisor.Config) { c.ContextThreshold = 0 }, "context_threshold is 0: it must be a fraction above 0 and at most 1, such as 0.9"},
		{func(c *supervisor.Config) { c.ContextLimit = -1 }, "context_limit is -1: use 0 to learn it from the model, or a number of tokens"},
		{func(c *supervisor.Config) { c.MaxContinuations = -1 }, "max_continuations is -1: use 0 for no cap or a positive number"},
		{func(c *supervisor.Config) { c.MaxCostUSD = -0.5 }, "max_cost_usd is -0.5: use 0 for no cap or a positive amount"},
		{func(c *supervisor.Config) { c.PromptChange = "ask" }, `prompt_change is "ask": it must be refuse, resume or start_over`},
	} {
		c := validConfig()
		tc.set(&c)
		if err := c.Validate(); err == nil || err.Error() != tc.want {
			t.Errorf("Validate() = %v, want %q", err, tc.want)
		}
	}
	if err := validConfig().Validate(); err != nil {
		t.Errorf("the defaults: Validate() = %v", err)
	}
	c := validConfig()
	c.SessionTimeout, c.LimitWait, c.UnreachableWindow, c.MaxIdleRetries, c.ContextLimit, c.MaxCostUSD = 0, 0, 0, 0, 0, 0
	if err := c.Validate(); err != nil {
		t.Errorf("0 where 0 turns a key off: Validate() = %v", err)
	}
}

// DefaultConfig is the key table's defaults, and two of them never share
// a list.
func TestDefaultConfigIsTheTablesDefaults(t *testing.T) {
	c := supervisor.DefaultConfig()
	if c.ClaudeBin != "claude" || c.IdleTimeout != supervisor.DefaultIdleTimeout || c.SessionTimeout != supervisor.DefaultSessionTimeout ||
		c.LimitWait != 0 || !c.PartialMessages || c.MaxAttempts != supervisor.DefaultMaxAttempts || c.PromptChange != run.PromptChangeRefuse ||
		c.ContextThreshold != supervisor.DefaultContextThreshold || c.UnreachableWindow != supervisor.DefaultUnreachableWindow ||
		!slices.Equal(c.Backoff, run.DefaultBackoff()) || !slices.Equal(c.SideEffectFreeTools, run.DefaultSideEffectFree()) {
		t.Errorf("DefaultConfig() = %+v", c)
	}
	c.Backoff[0], c.SideEffectFreeTools[0] = time.Hour, "Bash"
	if d := supervisor.DefaultConfig(); d.Backoff[0] != 0 || d.SideEffectFreeTools[0] != "Read" {
		t.Errorf("a changed default list changed the next DefaultConfig: %v %v", d.Backoff, d.SideEffectFreeTools)
	}
	seen := map[string]bool{}
	for _, k := range supervisor.Keys() {
		if seen[k.Name] || k.Name == "" || k.Help == "" || k.Value == nil {
			t.Errorf("key %q: named twice, or without a name, help or value", k.Name)
		}
		seen[k.Name] = true
	}
}
