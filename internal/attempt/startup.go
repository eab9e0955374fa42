package attempt

import (
	"fmt"
	"strings"

	"github.com/malarun/malarun/internal/environ"
	"github.com/malarun/malarun/internal/stream"
)

// startupVar makes 2.1.332 write a result naming why it refused to start
// (startup_failure_reason, docs/design.md §F37) for every cause it knows;
// without it only three causes get one, and the rest end with stderr
// alone. Older CLIs do not read it. Set unless claude's environment sets it
// (a user's value wins; an empty one is unset).
const startupVar = "CLAUDE_CODE_STARTUP_FAILURE_RESULTS"

// StartupEnv is env with startupVar set to 1 where env does not set it.
func StartupEnv(env []string) []string {
	if cur, _ := environ.Lookup(env, startupVar); strings.TrimSpace(cur) != "" {
		return env
	}
	return environ.With(env, startupVar, "1")
}

// startupCause is what malarun makes of one startup_failure_reason: the
// ending (ErrorResult or Auth: a person must fix it; StartupFailed: it
// passes, so the attempt is made again), and what to fix, in malarun's
// words, naming the file or setting where the CLI's own description does.
type startupCause struct {
	ending Ending
	what   string
}

// startupCauses is every cause 2.1.332 lists (its schema's enum, read from
// its code: §F37). A cause it adds later is a failure retrying cannot fix,
// reported as it came, with a warning (UnknownResult).
var startupCauses = map[string]startupCause{
	"org_pin_api_key_conflict":             {Auth, "managed settings pin a claude.ai or Cloud gateway sign-in, and an API key or auth token is configured instead: unset ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN (or apiKeyHelper), or have the pin changed"},
	"provider_not_allowed":                 {ErrorResult, "managed settings (allowedProviders) do not list the API provider this run is set up for (CLAUDE_CODE_USE_BEDROCK, _VERTEX, ...)"},
	"org_verify_failed":                    {StartupFailed, "the sign-in's organization could not be verified against the managed settings' pin (the network, or a revoked token)"},
	"org_pin_mismatch":                     {Auth, "the sign-in belongs to an organization the managed settings' pin does not allow: sign in with an allowed account"},
	"managed_settings_invalid":             {ErrorResult, "the managed policy settings cannot be read, name no organization, or leave no allowed model: have them fixed"},
	"remote_settings_required_unavailable": {StartupFailed, "managed settings the organization requires could not be loaded"},
	"gateway_signin_required":              {Auth, "the Cloud gateway ended this sign-in: sign in again"},
	"gateway_access_denied":                {Auth, "the Cloud gateway refused managed settings for this account"},
	"proxy_invalid":                        {ErrorResult, "a proxy setting (HTTPS_PROXY, HTTP_PROXY, or a settings file's env) is not a complete URL with its scheme"},
	"temp_dir_unusable":                    {ErrorResult, "claude's temporary directory (CLAUDE_CODE_TMPDIR, else TMPDIR) cannot be made or is unsafe"},
	"cwd_unavailable":                      {ErrorResult, "the working directory was deleted, moved or cannot be read"},
	"shell_tool_missing":                   {ErrorResult, "claude has no shell tool (Windows: Git Bash is missing)"},
	"session_held_by_background":           {StartupFailed, "the session to resume is running as a background session of claude's"},
	"worktree_resume_refused":              {ErrorResult, "the session's worktree failed claude's safety checks"},
	"worktree_unverified":                  {StartupFailed, "the session's worktree could not be verified just now"},
	"cli_version_too_old":                  {ErrorResult, "this claude is older than Anthropic requires: upgrade it"},
	"bypass_root":                          {ErrorResult, "--dangerously-skip-permissions is refused when claude runs as root: remove it from claude's arguments (give --allowedTools instead)"},
	"org_config_required_unavailable":      {StartupFailed, "the organization's required policy limits and managed settings could not be loaded (the network, a proxy, or an Anthropic error)"},
	"org_config_refused":                   {Auth, "Anthropic refused the organization's policy for this sign-in (expired or revoked, or Claude Code is not allowed for the account): sign in again, or an admin must allow it"},
	"sandbox_required_unavailable":         {ErrorResult, "a sandbox is required and cannot run here (bubblewrap missing, or the platform): make it available or have the requirement changed"},
	"initialize_not_first":                 {ErrorResult, "claude was started with --await-initialize, which malarun never sends: remove it from claude's arguments"},
	"config_file_invalid":                  {ErrorResult, "a configuration file of claude's is not valid JSON"},
	"managed_settings_not_delivered":       {ErrorResult, "claude was started with --managed-settings-in-initialize, which malarun never sends: remove it from claude's arguments"},
	"initialize_fields_not_delivered":      {ErrorResult, "claude was started with --initialize-fields, which malarun never sends: remove it from claude's arguments"},
	"sideload_flags_disabled":              {ErrorResult, "managed settings set disableSideloadFlags, and claude's arguments name plugins, agents or MCP servers of their own (--mcp-config, --plugin-dir, --agents): remove them"},
}

// byStartup decides a result that names a start-up failure, with a
// sentence naming the file or setting to fix. unknown is the cause when
// malarun does not know it.
func byStartup(r *stream.Event) (e Ending, why string, unknown string) {
	reason := r.StartupFailureReason
	said := oneLine(firstLine(strings.Join(r.Errors, "; ")), 300)
	c, ok := startupCauses[reason]
	if !ok {
		return ErrorResult, fmt.Sprintf("claude refused to start (%s): %s", reason, said), fmt.Sprintf("startup_failure_reason %q", reason)
	}
	what := c.what
	if reason == "config_file_invalid" {
		what = configFileWhat(r.InvalidConfigFile)
	}
	if c.ending == StartupFailed {
		return c.ending, fmt.Sprintf("claude could not start (%s): %s; this can pass, so it is tried again", reason, what), ""
	}
	msg := fmt.Sprintf("claude refused to start (%s): %s", reason, what)
	if said != "" && reason != "config_file_invalid" {
		msg += "; claude said: " + said
	}
	return c.ending, msg, ""
}

// configFileWhat names the file that does not parse, from the result's
// own field (never from the text of errors: §F37), and its backup.
func configFileWhat(f stream.ConfigFile) string {
	if f.Path == "" {
		return "a configuration file of claude's is not valid JSON (claude did not say which)"
	}
	path := f.Path
	if f.PathTruncated {
		path += "…"
	}
	s := fmt.Sprintf("claude's configuration file %s is not valid JSON: fix it, or move it aside to start with claude's defaults", path)
	if f.IsGlobal && f.BackupPath != "" {
		s += " (claude names a backup: " + f.BackupPath + "; check that it parses before copying it over)"
	}
	return s
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
