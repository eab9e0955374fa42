package supervisor

import (
	"fmt"
	"time"

	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/run"
)

// Config is everything one supervised run needs, already parsed and
// validated by the command line layer. The zero value is not usable; start
// from DefaultConfig.
type Config struct {
	// IssueID names the run's folder under StateDir; validated by ValidateIssueID.
	IssueID string
	// Prompt is the task text, sent to the CLI on stdin.
	Prompt []byte
	// PromptSource names where Prompt came from (a path or "stdin"), for messages.
	PromptSource string

	// ClaudeBin is the CLI to run: a path, or a name looked up on PATH.
	ClaudeBin string
	// ExtraArgs are passed to the CLI after malarun's own flags.
	ExtraArgs []string
	// Cwd is the CLI's working directory ("" = malarun's own).
	Cwd string
	// Env is the CLI's environment (usually os.Environ()).
	Env []string
	// Trace names this malarun's run span when traces are exported, for
	// the record (zero: none).
	Trace record.TraceRef
	// StateDir holds <issue>/runs/<run-id>/attempt-N.jsonl and friends.
	StateDir string

	// UnreachableWindow is how long the API's address must stay certainly
	// unreachable, look after look, before a run that never had an answer
	// ends with exit 10 (docs/design.md §D17); 0: at the first look.
	UnreachableWindow time.Duration
	// IdleTimeout ends an attempt when no line arrives for this long while
	// claude waits for the API's reply, between the parts of a reply, and
	// wherever no other timeout applies (docs/design.md §D30).
	IdleTimeout time.Duration
	// ToolTimeout replaces IdleTimeout while a tool call or hook runs.
	ToolTimeout time.Duration
	// TextTimeout, ThinkingTimeout and ToolInputTimeout replace it while
	// the model writes a text block, thinks, or writes a tool call's input
	// (seen only with PartialMessages).
	TextTimeout, ThinkingTimeout, ToolInputTimeout time.Duration
	// FirstByteTimeout replaces it between a request and the first event
	// of its reply (for a request of up to attempt.firstByteTokens tokens;
	// it grows with a larger one), SubagentTimeout while a sub-agent
	// writes a message the CLI prints only whole (docs/design.md §D33).
	FirstByteTimeout, SubagentTimeout time.Duration
	// KillGrace is the time between SIGTERM and SIGKILL.
	KillGrace time.Duration
	// ShutdownGrace bounds how long malarun takes to stop the tree after a shutdown signal.
	ShutdownGrace time.Duration
	// SessionTimeout bounds the whole run (every attempt and wait of this
	// invocation); 0 disables it.
	SessionTimeout time.Duration
	// LimitWait is the longest malarun sleeps, summed over the run, waiting
	// for usage limits to reset before it resumes the session; 0: exit 75
	// at once (the record stays resumable).
	LimitWait time.Duration
	// ResultExitTimeout is how long the CLI may stay alive after its final
	// result line when no background task is running.
	ResultExitTimeout time.Duration
	// BackgroundTimeout bounds the wait, after a result line, for the
	// background tasks it left running (the CLI stays alive for them and
	// runs another turn when they end).
	BackgroundTimeout time.Duration
	// PartialMessages adds --include-partial-messages, so long replies keep the idle timer fed.
	PartialMessages bool

	// MaxAttempts caps the attempts (claude processes) of a run, the first included.
	MaxAttempts int
	// MaxIdleRetries caps retries in a row after attempts that made no progress.
	MaxIdleRetries int
	// Backoff is the wait before retry N; the last entry repeats.
	Backoff []time.Duration
	// SideEffectFreeTools are tools whose calls a fresh start may repeat.
	SideEffectFreeTools []string
	// MaxCostUSD caps the cost summed over all attempts; 0 means no cap.
	MaxCostUSD float64
	// PromptsDir holds prompt templates (resume.md, checkpoint.md,
	// continuation.md, fallback.md) that replace the built-in ones; "" = built-in only.
	PromptsDir string

	// ContextLimit is the context window in tokens; 0 = learn it from the model.
	ContextLimit int
	// ContextThreshold is the fraction of the window that triggers a checkpoint.
	ContextThreshold float64
	// MaxContinuations caps the fresh sessions started because the context
	// filled; 0 = unlimited.
	MaxContinuations int

	// MaxReclaims is how many times in a row a run may be taken over from
	// a malarun that died before the issue counts as poisoned.
	MaxReclaims int
	// Reset starts the issue over: a poisoned, interrupted or orphaned run
	// is not continued.
	Reset bool
	// PromptChange is what a rerun does when its prompt differs from the
	// one the recorded, still resumable run began with.
	PromptChange run.PromptChangePolicy
}

// Defaults. Each phase's allowance is set from the silences measured and
// reported in a healthy stream (docs/design.md §F32, §D30): text deltas
// flow, so a minute of silence in the middle of a text block is a dead
// stream; thinking comes in bursts up to about two minutes apart; a tool
// call's input arrives whole, minutes after its block began, for a long
// file. The tool timeout must exceed the Bash tool's own 10 minute ceiling.
const (
	DefaultIdleTimeout      = 3 * time.Minute
	defaultToolTimeout      = 15 * time.Minute
	defaultTextTimeout      = time.Minute
	defaultThinkingTimeout  = 3 * time.Minute
	defaultToolInputTimeout = 15 * time.Minute
	// A request the API never answers is found within a minute (issue
	// 46); a large one is allowed more (attempt.firstByteTokens).
	defaultFirstByteTimeout = 45 * time.Second
	// The silence of a sub-agent's stream, which the CLI sees and ends
	// itself (§F35): a stream dead mid-text is found in a minute and a
	// half, and thinking gaps of 60-120 s (§F32) mostly pass.
	DefaultSubagentTimeout   = 90 * time.Second
	defaultKillGrace         = 10 * time.Second
	defaultShutdownGrace     = 5 * time.Second
	defaultResultExitTimeout = 5 * time.Second
	// Above the CLI's own 10-minute wait for background agents after the
	// final turn (docs/design.md §F17), so that the CLI ends its wait first.
	defaultBackgroundTimeout = 15 * time.Minute
	// No stream of lines can keep a run alive for ever (issue 46, §D34): a
	// model that keeps working, or a CLI that keeps printing what looks
	// like work, is bounded by a day. Resumable (exit 124).
	defaultSessionTimeout   = 24 * time.Hour
	defaultMaxAttempts      = 10
	defaultMaxIdleRetries   = 2
	defaultContextThreshold = 0.90
	// Five fresh sessions is far more than a well-cut issue needs; beyond
	// that the task is likely too big for one issue, and each restart costs.
	defaultMaxContinuations = 5
	defaultMaxReclaims      = 3
	// Long enough for a local gateway, a sidecar or a compose service to
	// open its port after malarun starts (issue 31), short beside the
	// minutes the CLI's own retries take to give up (§F25).
	defaultUnreachableWindow = 30 * time.Second
)

// DefaultConfig returns a Config with every key's default (Keys) filled in.
func DefaultConfig() Config {
	var c Config
	for _, k := range Keys() {
		k.Value.setDefault(&c)
	}
	return c
}

// runPolicy is the run's limits for internal/run, the session deadline
// counted from started.
func (c Config) runPolicy(started time.Time) run.Policy {
	free := make(map[string]bool, len(c.SideEffectFreeTools))
	for _, t := range c.SideEffectFreeTools {
		free[t] = true
	}
	p := run.Policy{MaxAttempts: c.MaxAttempts, MaxIdleRetries: c.MaxIdleRetries, Backoff: c.Backoff,
		MaxCostUSD: c.MaxCostUSD, SideEffectFree: free, MaxContinuations: c.MaxContinuations, LimitWait: c.LimitWait}
	if c.SessionTimeout > 0 {
		p.Deadline = started.Add(c.SessionTimeout)
	}
	return p
}

// Validate checks the values that no parser can: each key's, as the key
// table says (Keys), the issue, the prompt and the extra arguments.
func (c Config) Validate() error {
	if err := ValidateIssueID(c.IssueID); err != nil {
		return err
	}
	if len(c.Prompt) == 0 {
		return fmt.Errorf("the prompt from %s is empty", c.PromptSource)
	}
	for _, k := range Keys() {
		if err := k.Value.check(k.Name, &c); err != nil {
			return err
		}
	}
	if err := CheckExtraArgs(c.ExtraArgs); err != nil {
		return err
	}
	return nil
}
