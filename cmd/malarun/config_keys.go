package main

import (
	"strings"
	"time"

	"github.com/malarun/malarun/internal/supervisor"
)

// settings is what the configuration layers produce: the supervisor's Config
// plus the keys only the command line uses (logging).
type settings struct {
	cfg       supervisor.Config
	logFormat string
	logLevel  string
}

func defaultSettings() settings {
	return settings{cfg: supervisor.DefaultConfig(), logFormat: "auto", logLevel: "info"}
}

// keySpec describes one configuration key. The flag, the environment
// variable, the config file entry, the help text and the example file check
// are all derived from it, so adding a key is one entry in configKeys.
type keySpec struct {
	name string
	// kind is shown in the help: duration, bool, string, or the allowed values.
	kind string
	help string
	// defDoc documents the default when the stored zero value stands for a
	// computed one (state_dir "" = $XDG_STATE_HOME/malarun).
	defDoc string
	// stringOnly: in a config file only a YAML string is accepted (a path
	// written as a number is more likely a mistake than a name).
	stringOnly bool
	// list: a YAML list in a file, comma-separated in a flag or env var.
	list bool
	// parse checks raw and stores it; its error says what is allowed but not
	// which key or source: the loader adds those.
	parse func(s *settings, raw string) error
	// format renders the current value as it is written in a config file.
	format func(s *settings) string
}

// configKeys is the key table. A function rather than a package variable:
// the package keeps no global state (version aside).
func configKeys() []keySpec {
	return []keySpec{
		stringKey("claude_bin", "the claude CLI to run: a path, or a name looked up on PATH", "",
			func(s *settings) *string { return &s.cfg.ClaudeBin }),
		stringKey("cwd", "working directory of claude; empty means malarun's own", "",
			func(s *settings) *string { return &s.cfg.Cwd }),
		stateDirKey(),
		durationKey("idle_timeout", false, "kill an attempt when claude prints nothing for this long while it waits for the API's reply, between the parts of a reply, and wherever no other timeout applies",
			func(s *settings) *time.Duration { return &s.cfg.IdleTimeout }),
		durationKey("tool_timeout", false, "replaces idle_timeout while a tool call or a hook is running (tools print nothing)",
			func(s *settings) *time.Duration { return &s.cfg.ToolTimeout }),
		durationKey("text_timeout", false, "replaces idle_timeout while the model writes text (its chunks flow: a silence there is a stream that died)",
			func(s *settings) *time.Duration { return &s.cfg.TextTimeout }),
		durationKey("thinking_timeout", false, "replaces idle_timeout while the model thinks (its thought arrives in bursts minutes apart)",
			func(s *settings) *time.Duration { return &s.cfg.ThinkingTimeout }),
		durationKey("tool_input_timeout", false, "replaces idle_timeout while the model writes a tool call's input (the API sends it whole, once written: a long file is minutes of silence)",
			func(s *settings) *time.Duration { return &s.cfg.ToolInputTimeout }),
		durationKey("first_byte_timeout", false, "replaces idle_timeout between a request and the first event of its reply, for a request of up to 100,000 tokens; a larger request is allowed as much more as it is larger (the model reads it first)",
			func(s *settings) *time.Duration { return &s.cfg.FirstByteTimeout }),
		durationKey("subagent_timeout", false, "replaces idle_timeout while a sub-agent writes its next message, which claude prints only whole (its first byte, thinking, text and tool inputs are one silence)",
			func(s *settings) *time.Duration { return &s.cfg.SubagentTimeout }),
		durationKey("kill_grace", false, "time between SIGTERM and SIGKILL when killing claude's process tree",
			func(s *settings) *time.Duration { return &s.cfg.KillGrace }),
		durationKey("shutdown_grace", false, "on SIGINT, SIGTERM, SIGHUP or SIGQUIT, time claude gets to stop before it is killed",
			func(s *settings) *time.Duration { return &s.cfg.ShutdownGrace }),
		durationKey("session_timeout", true, "bound on the whole run, every attempt and wait included (exit 124, resumable); 0 disables it",
			func(s *settings) *time.Duration { return &s.cfg.SessionTimeout }),
		durationKey("limit_wait", true, "longest wait, in all, for usage limits to reset before resuming; 0: exit 75 at once",
			func(s *settings) *time.Duration { return &s.cfg.LimitWait }),
		durationKey("unreachable_window", true, "how long the API's address must stay unreachable, look after look, before a run that never had an answer ends with exit 10; 0: at the first look",
			func(s *settings) *time.Duration { return &s.cfg.UnreachableWindow }),
		durationKey("result_exit_timeout", false, "how long claude may stay alive after its final result line when no background task runs",
			func(s *settings) *time.Duration { return &s.cfg.ResultExitTimeout }),
		durationKey("background_timeout", false, "how long claude may wait, after a result line, for the background tasks it left running",
			func(s *settings) *time.Duration { return &s.cfg.BackgroundTimeout }),
		boolKey("partial_messages", "pass --include-partial-messages, so long replies keep the idle timer fed",
			func(s *settings) *bool { return &s.cfg.PartialMessages }),
		intKey("max_attempts", 1, "attempts (claude processes) in all, the first included",
			func(s *settings) *int { return &s.cfg.MaxAttempts }),
		intKey("max_idle_retries", 0, "retries in a row after attempts that produced no new assistant message",
			func(s *settings) *int { return &s.cfg.MaxIdleRetries }),
		durationListKey("backoff", "wait before retry 1, 2, 3, ...; the last entry repeats",
			func(s *settings) *[]time.Duration { return &s.cfg.Backoff }),
		stringListKey("side_effect_free_tools", "tools whose calls a fresh start may repeat (they only read)",
			func(s *settings) *[]string { return &s.cfg.SideEffectFreeTools }),
		floatKey("max_cost_usd", "stop when the cost summed over all attempts reaches this (USD); 0: no cap",
			func(s *settings) *float64 { return &s.cfg.MaxCostUSD }),
		intKey("max_reclaims", 0, "times in a row a run may be taken over from a malarun that died before the issue is poisoned",
			func(s *settings) *int { return &s.cfg.MaxReclaims }),
		intKey("context_limit", 0, "the context window in tokens; 0: learn it from the model",
			func(s *settings) *int { return &s.cfg.ContextLimit }),
		fractionKey("context_threshold", "fraction of the context window that triggers a checkpoint and a fresh session",
			func(s *settings) *float64 { return &s.cfg.ContextThreshold }),
		intKey("max_continuations", 0, "fresh sessions started because the context filled, at most; 0: no cap",
			func(s *settings) *int { return &s.cfg.MaxContinuations }),
		stringKey("prompts_dir", "folder whose resume.md, checkpoint.md, continuation.md, fallback.md replace the built-in prompts", "",
			func(s *settings) *string { return &s.cfg.PromptsDir }),
		enumKey("prompt_change", []string{supervisor.PromptChangeRefuse, supervisor.PromptChangeResume, supervisor.PromptChangeStartOver},
			"what a rerun does when its prompt is not the one the resumable recorded run began with (refuse exits 2; resume keeps that run's task; start_over starts this one)",
			func(s *settings) *string { return &s.cfg.PromptChange }),
		enumKey("log_format", []string{"auto", "console", "json"}, "log format on stderr; auto: console on a terminal, JSON otherwise",
			func(s *settings) *string { return &s.logFormat }),
		enumKey("log_level", []string{"debug", "info", "warn", "error"}, "least severe log level written to stderr",
			func(s *settings) *string { return &s.logLevel }),
	}
}

// stateDirKey is shared by the run and `malarun status`.
func stateDirKey() keySpec {
	return stringKey("state_dir", "where issues and their runs live: <state_dir>/<issue>/runs/<run-id>/attempt-N.jsonl", "$XDG_STATE_HOME/malarun",
		func(s *settings) *string { return &s.cfg.StateDir })
}

func (k keySpec) flagName() string { return strings.ReplaceAll(k.name, "_", "-") }
func (k keySpec) envName() string  { return "MALARUN_" + strings.ToUpper(k.name) }

// yamlDefault is the default as written in a config file.
func (k keySpec) yamlDefault() string {
	d := defaultSettings()
	return k.format(&d)
}

// defaultDoc is the default as shown to a reader.
func (k keySpec) defaultDoc() string {
	if k.defDoc != "" {
		return k.defDoc
	}
	return k.yamlDefault()
}
