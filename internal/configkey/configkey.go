// Package configkey names malarun's configuration keys, each once. The key
// table (internal/supervisor/keys.go; the logging keys in cmd/malarun)
// gives each key its default, help and check; cmd/malarun derives a key's
// flag (--idle-timeout), variable (MALARUN_IDLE_TIMEOUT) and config file
// entry from its name; a package that names a key in a message (the
// attempt's allowances) uses these constants. A leaf: it imports nothing.
package configkey

// The keys, in the order --help, the man page and docs/configuration.md
// list them.
const (
	ClaudeBin           = "claude_bin"
	Cwd                 = "cwd"
	StateDir            = "state_dir"
	IdleTimeout         = "idle_timeout"
	ToolTimeout         = "tool_timeout"
	TextTimeout         = "text_timeout"
	ThinkingTimeout     = "thinking_timeout"
	ToolInputTimeout    = "tool_input_timeout"
	FirstByteTimeout    = "first_byte_timeout"
	SubagentTimeout     = "subagent_timeout"
	KillGrace           = "kill_grace"
	ShutdownGrace       = "shutdown_grace"
	SessionTimeout      = "session_timeout"
	LimitWait           = "limit_wait"
	UnreachableWindow   = "unreachable_window"
	ResultExitTimeout   = "result_exit_timeout"
	BackgroundTimeout   = "background_timeout"
	PartialMessages     = "partial_messages"
	MaxAttempts         = "max_attempts"
	MaxIdleRetries      = "max_idle_retries"
	Backoff             = "backoff"
	SideEffectFreeTools = "side_effect_free_tools"
	MaxCostUSD          = "max_cost_usd"
	MaxReclaims         = "max_reclaims"
	ContextLimit        = "context_limit"
	ContextThreshold    = "context_threshold"
	MaxContinuations    = "max_continuations"
	PromptsDir          = "prompts_dir"
	PromptChange        = "prompt_change"
	LogFormat           = "log_format"
	LogLevel            = "log_level"
)
