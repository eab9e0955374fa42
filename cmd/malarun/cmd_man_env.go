package main

import (
	"github.com/malarun/malarun/internal/manpage"
)

// The manual's ENVIRONMENT and FILES: what malarun reads besides its
// flags. The configuration keys come from the key table; the rest is
// written here, and says no more than the README and docs/.

func environmentBlocks() []manpage.Block {
	out := []manpage.Block{manpage.Para(`Every configuration key has a variable: MALARUN_ and the key in upper case.
A flag overrides it, and it overrides the config file; an empty value counts as unset.`)}
	for _, k := range configKeys() {
		out = append(out, manpage.Item([]manpage.Span{manpage.B(k.envName())},
			k.name+" (--"+k.flagName()+"): "+k.help+"."))
	}
	others := []struct{ name, text string }{
		{"XDG_STATE_HOME", "state_dir defaults to $XDG_STATE_HOME/malarun; unset or relative, ~/.local/state is used."},
		{"XDG_CONFIG_HOME", "the config file is looked for in $XDG_CONFIG_HOME/malarun/config.yaml; unset or relative, ~/.config is used."},
		{"HOME", "the base of both defaults above."},
		{"PATH", "where claude is looked for when claude_bin is a name."},
		{"MALARUN_PAGER, PAGER", "the pager of malarun show on a terminal, in that order, else less; set to cat or empty, none."},
		{"NO_COLOR", "set: malarun show does not colour its text."},
		{"TERM", "dumb: no status line."},
		{"GITHUB_ACTIONS", "true: one log group per attempt, an error annotation on failure, no status line, and the model's text kept from running workflow commands."},
		{"GITHUB_STEP_SUMMARY", "under GitHub Actions, a Markdown summary of the run is appended to this file."},
		{"MALARUN_RUN", "not read but set: every process of a run carries MALARUN_RUN=<issue>/<run-id>, so that the next malarun finds what a dead one left running."},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "set (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, ..._METRICS_ENDPOINT): malarun exports OpenTelemetry traces and metrics there over OTLP/HTTP protobuf; the other OTEL_* variables mean what the OpenTelemetry spec says (docs/telemetry.md). At exit the flush takes at most 2 s."},
		{"TRACEPARENT, TRACESTATE", "with export on, the run's trace is their child and each attempt's claude gets its attempt span instead; with export off, claude gets them unchanged."},
	}
	for _, o := range others {
		out = append(out, manpage.Item([]manpage.Span{manpage.B(o.name)}, o.text))
	}
	return append(out, manpage.Para(`claude gets malarun's whole environment. Of it, malarun itself reads ANTHROPIC_BASE_URL (the
address it checks when the API cannot be reached), the proxy variables (when one is set, it checks
nothing), and ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN, hashed with ANTHROPIC_BASE_URL, to share
usage limits between the malaruns of one account.`))
}

func fileBlocks() []manpage.Block {
	files := []struct{ path, text string }{
		{"./malarun.yaml", "the config file (YAML), unless --config names one."},
		{"$XDG_CONFIG_HOME/malarun/config.yaml", "the config file when there is no ./malarun.yaml; only one file is read."},
		{"$XDG_STATE_HOME/malarun", "state_dir, unless set."},
		{"<state_dir>/<issue>/record.json", "the issue's record: status, sessions, attempts, reclaims, owner, cost, exit code and reason (malarun status)."},
		{"<state_dir>/<issue>/lock", "locked by the malarun running the issue."},
		{"<state_dir>/<issue>/runs/<run-id>/", "one run: prompt.md, and for each attempt claude's stdout (attempt-N.jsonl), stderr (attempt-N.stderr) and, after the first, its prompt (attempt-N.prompt.md); timeline.jsonl, malarun's decisions (malarun show)."},
		{"<state_dir>/usage-limits/", "usage-limit resets shared by the malaruns of one account on this state_dir."},
	}
	var out []manpage.Block
	for _, f := range files {
		out = append(out, manpage.Item([]manpage.Span{manpage.B(f.path)}, f.text))
	}
	return out
}
