package supervisor

import (
	"time"

	"github.com/malarun/malarun/internal/configkey"
	"github.com/malarun/malarun/internal/run"
)

// Keys is the key table: every configuration key of a run, in the order
// --help, the man page and docs/configuration.md list them, each with its
// help, default and check (keyvalues.go). A function rather than a package
// variable: no mutable package state.
func Keys() []Key {
	return []Key{
		{Name: configkey.ClaudeBin, Help: "the claude CLI to run: a path, or a name looked up on PATH",
			Value: TextValue{Field: func(c *Config) *string { return &c.ClaudeBin }, Default: "claude",
				Required: true, Hint: "give the path or name of the claude CLI"}},
		{Name: configkey.Cwd, Help: "working directory of claude; empty means malarun's own",
			Value: TextValue{Field: func(c *Config) *string { return &c.Cwd }}},
		StateDirKey(),
		timeout(configkey.IdleTimeout, DefaultIdleTimeout, func(c *Config) *time.Duration { return &c.IdleTimeout },
			"kill an attempt when claude prints nothing for this long while it waits for the API's reply, between the parts of a reply, and wherever no other timeout applies"),
		timeout(configkey.ToolTimeout, defaultToolTimeout, func(c *Config) *time.Duration { return &c.ToolTimeout },
			"replaces idle_timeout while a tool call or a hook is running (tools print nothing)"),
		timeout(configkey.TextTimeout, defaultTextTimeout, func(c *Config) *time.Duration { return &c.TextTimeout },
			"replaces idle_timeout while the model writes text (its chunks flow: a silence there is a stream that died)"),
		timeout(configkey.ThinkingTimeout, defaultThinkingTimeout, func(c *Config) *time.Duration { return &c.ThinkingTimeout },
			"replaces idle_timeout while the model thinks (its thought arrives in bursts minutes apart)"),
		timeout(configkey.ToolInputTimeout, defaultToolInputTimeout, func(c *Config) *time.Duration { return &c.ToolInputTimeout },
			"replaces idle_timeout while the model writes a tool call's input (the API sends it whole, once written: a long file is minutes of silence)"),
		timeout(configkey.FirstByteTimeout, defaultFirstByteTimeout, func(c *Config) *time.Duration { return &c.FirstByteTimeout },
			"replaces idle_timeout between a request and the first event of its reply, for a request of up to 100,000 tokens; a larger request is allowed as much more as it is larger (the model reads it first)"),
		timeout(configkey.SubagentTimeout, DefaultSubagentTimeout, func(c *Config) *time.Duration { return &c.SubagentTimeout },
			"replaces idle_timeout while a sub-agent writes its next message, which claude prints only whole (its first byte, thinking, text and tool inputs are one silence)"),
		timeout(configkey.KillGrace, defaultKillGrace, func(c *Config) *time.Duration { return &c.KillGrace },
			"time between SIGTERM and SIGKILL when killing claude's process tree"),
		timeout(configkey.ShutdownGrace, defaultShutdownGrace, func(c *Config) *time.Duration { return &c.ShutdownGrace },
			"on SIGINT, SIGTERM, SIGHUP or SIGQUIT, time claude gets to stop before it is killed"),
		{Name: configkey.SessionTimeout, Help: "bound on the whole run, every attempt and wait included (exit 124, resumable); 0 disables it",
			Value: DurationValue{Field: func(c *Config) *time.Duration { return &c.SessionTimeout }, Default: defaultSessionTimeout,
				Off: "use 0 to disable it or a positive duration"}},
		{Name: configkey.LimitWait, Help: "longest wait, in all, for usage limits to reset before resuming; 0: exit 75 at once",
			Value: DurationValue{Field: func(c *Config) *time.Duration { return &c.LimitWait },
				Off: "use 0 to never wait for a usage limit, or a positive duration"}},
		{Name: configkey.UnreachableWindow, Help: "how long the API's address must stay unreachable, look after look, before a run that never had an answer ends with exit 10; 0: at the first look",
			Value: DurationValue{Field: func(c *Config) *time.Duration { return &c.UnreachableWindow }, Default: defaultUnreachableWindow,
				Off: "use 0 to end the run at the first look, or a positive duration"}},
		timeout(configkey.ResultExitTimeout, defaultResultExitTimeout, func(c *Config) *time.Duration { return &c.ResultExitTimeout },
			"how long claude may stay alive after its final result line when no background task runs"),
		timeout(configkey.BackgroundTimeout, defaultBackgroundTimeout, func(c *Config) *time.Duration { return &c.BackgroundTimeout },
			"how long claude may wait, after a result line, for the background tasks it left running"),
		{Name: configkey.PartialMessages, Help: "pass --include-partial-messages, so long replies keep the idle timer fed",
			Value: BoolValue{Field: func(c *Config) *bool { return &c.PartialMessages }, Default: true}},
		{Name: configkey.MaxAttempts, Help: "attempts (claude processes) in all, the first included",
			Value: IntValue{Field: func(c *Config) *int { return &c.MaxAttempts }, Default: defaultMaxAttempts, Min: 1}},
		{Name: configkey.MaxIdleRetries, Help: "retries in a row after attempts that produced no new assistant message",
			Value: IntValue{Field: func(c *Config) *int { return &c.MaxIdleRetries }, Default: defaultMaxIdleRetries}},
		{Name: configkey.Backoff, Help: "wait before retry 1, 2, 3, ...; the last entry repeats",
			Value: DurationsValue{Field: func(c *Config) *[]time.Duration { return &c.Backoff }, Default: run.DefaultBackoff()}},
		{Name: configkey.SideEffectFreeTools, Help: "tools whose calls a fresh start may repeat (they only read)",
			Value: NamesValue{Field: func(c *Config) *[]string { return &c.SideEffectFreeTools }, Default: run.DefaultSideEffectFree()}},
		{Name: configkey.MaxCostUSD, Help: "stop when the cost summed over all attempts reaches this (USD); 0: no cap",
			Value: NumberValue{Field: func(c *Config) *float64 { return &c.MaxCostUSD }, Rule: "use 0 for no cap or a positive amount"}},
		{Name: configkey.MaxReclaims, Help: "times in a row a run may be taken over from a malarun that died before the issue is poisoned",
			Value: IntValue{Field: func(c *Config) *int { return &c.MaxReclaims }, Default: defaultMaxReclaims}},
		{Name: configkey.ContextLimit, Help: "the context window in tokens; 0: learn it from the model",
			Value: IntValue{Field: func(c *Config) *int { return &c.ContextLimit }, Rule: "use 0 to learn it from the model, or a number of tokens"}},
		{Name: configkey.ContextThreshold, Help: "fraction of the context window that triggers a checkpoint and a fresh session",
			Value: FractionValue{Field: func(c *Config) *float64 { return &c.ContextThreshold }, Default: defaultContextThreshold}},
		{Name: configkey.MaxContinuations, Help: "fresh sessions started because the context filled, at most; 0: no cap",
			Value: IntValue{Field: func(c *Config) *int { return &c.MaxContinuations }, Default: defaultMaxContinuations,
				Rule: "use 0 for no cap or a positive number"}},
		{Name: configkey.PromptsDir, Help: "folder whose resume.md, checkpoint.md, continuation.md, fallback.md replace the built-in prompts",
			Value: TextValue{Field: func(c *Config) *string { return &c.PromptsDir }}},
		{Name: configkey.PromptChange, Help: "what a rerun does when its prompt is not the one the resumable recorded run began with (refuse exits 2; resume keeps that run's task; start_over starts this one)",
			Value: ChoiceValue{
				Allowed: []string{string(run.PromptChangeRefuse), string(run.PromptChangeResume), string(run.PromptChangeStartOver)},
				Default: string(run.PromptChangeRefuse),
				Get:     func(c *Config) string { return string(c.PromptChange) },
				Set:     func(c *Config, v string) { c.PromptChange = run.PromptChangePolicy(v) },
			}},
	}
}

// StateDirKey is state_dir, which `malarun status`, `show` and `summary`
// take too.
func StateDirKey() Key {
	return Key{Name: configkey.StateDir, Help: "where issues and their runs live: <state_dir>/<issue>/runs/<run-id>/attempt-N.jsonl",
		DefDoc: "$XDG_STATE_HOME/malarun",
		Value:  TextValue{Field: func(c *Config) *string { return &c.StateDir }, Required: true}}
}

// timeout is a key holding a positive duration.
func timeout(name string, def time.Duration, field func(*Config) *time.Duration, help string) Key {
	return Key{Name: name, Help: help, Value: DurationValue{Field: field, Default: def}}
}
