package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

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
		durationKey("idle_timeout", false, "kill an attempt when claude prints nothing for this long",
			func(s *settings) *time.Duration { return &s.cfg.IdleTimeout }),
		durationKey("tool_timeout", false, "replaces idle_timeout while a tool call is running (tools print nothing)",
			func(s *settings) *time.Duration { return &s.cfg.ToolTimeout }),
		durationKey("kill_grace", false, "time between SIGTERM and SIGKILL when killing claude's process tree",
			func(s *settings) *time.Duration { return &s.cfg.KillGrace }),
		durationKey("shutdown_grace", false, "on SIGINT/SIGTERM, time claude gets to stop before it is killed",
			func(s *settings) *time.Duration { return &s.cfg.ShutdownGrace }),
		durationKey("session_timeout", true, "bound on the whole run; 0 disables it",
			func(s *settings) *time.Duration { return &s.cfg.SessionTimeout }),
		durationKey("limit_wait", true, "longest wait, in all, for usage limits to reset before resuming; 0: exit 75 at once",
			func(s *settings) *time.Duration { return &s.cfg.LimitWait }),
		durationKey("result_exit_timeout", false, "how long claude may stay alive after its result line",
			func(s *settings) *time.Duration { return &s.cfg.ResultExitTimeout }),
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

func stringKey(name, help, defDoc string, field func(*settings) *string) keySpec {
	return keySpec{
		name: name, kind: "string", help: help, defDoc: defDoc, stringOnly: true,
		parse: func(s *settings, raw string) error { *field(s) = raw; return nil },
		format: func(s *settings) string {
			if v := *field(s); v != "" {
				return v
			}
			return `""`
		},
	}
}

func durationKey(name string, zeroDisables bool, help string, field func(*settings) *time.Duration) keySpec {
	return keySpec{
		name: name, kind: "duration", help: help,
		parse: func(s *settings, raw string) error {
			d, err := parseDuration(raw, zeroDisables)
			if err != nil {
				return err
			}
			*field(s) = d
			return nil
		},
		format: func(s *settings) string { return formatDuration(*field(s)) },
	}
}

func boolKey(name, help string, field func(*settings) *bool) keySpec {
	return keySpec{
		name: name, kind: "bool", help: help,
		parse: func(s *settings, raw string) error {
			b, err := strconv.ParseBool(strings.TrimSpace(raw))
			if err != nil {
				return errors.New("not a boolean; use true or false")
			}
			*field(s) = b
			return nil
		},
		format: func(s *settings) string { return strconv.FormatBool(*field(s)) },
	}
}

func enumKey(name string, allowed []string, help string, field func(*settings) *string) keySpec {
	return keySpec{
		name: name, kind: strings.Join(allowed, "|"), help: help, stringOnly: true,
		parse: func(s *settings, raw string) error {
			v := strings.TrimSpace(raw)
			if !slices.Contains(allowed, v) {
				return fmt.Errorf("must be one of %s", strings.Join(allowed, ", "))
			}
			*field(s) = v
			return nil
		},
		format: func(s *settings) string { return *field(s) },
	}
}

// intKey takes a whole number of at least minimum.
func intKey(name string, minimum int, help string, field func(*settings) *int) keySpec {
	return keySpec{
		name: name, kind: "integer", help: help,
		parse: func(s *settings, raw string) error {
			n, err := strconv.Atoi(strings.TrimSpace(raw))
			if err != nil {
				return errors.New("not a whole number")
			}
			if n < minimum {
				return fmt.Errorf("must be at least %d", minimum)
			}
			*field(s) = n
			return nil
		},
		format: func(s *settings) string { return strconv.Itoa(*field(s)) },
	}
}

// floatKey takes a number of 0 or more.
func floatKey(name, help string, field func(*settings) *float64) keySpec {
	return keySpec{
		name: name, kind: "number", help: help,
		parse: func(s *settings, raw string) error {
			f, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return errors.New("not a number")
			}
			if f < 0 {
				return errors.New("must not be negative")
			}
			*field(s) = f
			return nil
		},
		format: func(s *settings) string { return strconv.FormatFloat(*field(s), 'f', -1, 64) },
	}
}

// fractionKey takes a number above 0 and at most 1.
func fractionKey(name, help string, field func(*settings) *float64) keySpec {
	k := floatKey(name, help, field)
	k.kind = "fraction"
	parse := k.parse
	k.parse = func(s *settings, raw string) error {
		old := *field(s)
		if err := parse(s, raw); err != nil {
			return err
		}
		if f := *field(s); f <= 0 || f > 1 {
			*field(s) = old
			return errors.New("must be above 0 and at most 1, such as 0.9")
		}
		return nil
	}
	return k
}

// durationListKey takes durations of 0 or more, comma-separated in a flag or
// env var ("0s,5s,15s"), a YAML list in a file.
func durationListKey(name, help string, field func(*settings) *[]time.Duration) keySpec {
	return keySpec{
		name: name, kind: "durations", help: help, list: true,
		parse: func(s *settings, raw string) error {
			var ds []time.Duration
			for i, e := range splitList(raw) {
				d, err := parseDuration(e, true)
				if err != nil {
					return fmt.Errorf("entry %d: %w", i+1, err)
				}
				ds = append(ds, d)
			}
			*field(s) = ds
			return nil
		},
		format: func(s *settings) string {
			var parts []string
			for _, d := range *field(s) {
				parts = append(parts, formatDuration(d))
			}
			return "[" + strings.Join(parts, ", ") + "]"
		},
	}
}

// stringListKey takes names, comma-separated in a flag or env var, a YAML
// list in a file.
func stringListKey(name, help string, field func(*settings) *[]string) keySpec {
	return keySpec{
		name: name, kind: "list", help: help, list: true,
		parse: func(s *settings, raw string) error {
			*field(s) = splitList(raw)
			return nil
		},
		format: func(s *settings) string { return "[" + strings.Join(*field(s), ", ") + "]" },
	}
}

// splitList splits "a, b,c" (optionally in brackets, as YAML writes it) into
// its trimmed, non-empty entries.
func splitList(raw string) []string {
	raw = strings.TrimSpace(raw)
	if strings.HasPrefix(raw, "[") && strings.HasSuffix(raw, "]") {
		raw = raw[1 : len(raw)-1]
	}
	list := []string{}
	for e := range strings.SplitSeq(raw, ",") {
		if e = strings.TrimSpace(e); e != "" {
			list = append(list, e)
		}
	}
	return list
}

// parseDuration insists on units: viper would read a bare 300 as 300ns and an
// unparsable value as 0, which would disable hang detection without a word.
func parseDuration(raw string, zeroDisables bool) (time.Duration, error) {
	s := strings.TrimSpace(raw)
	if isBareNumber(s) {
		if zeroDisables {
			if f, err := strconv.ParseFloat(s, 64); err == nil && f == 0 {
				return 0, nil
			}
		}
		return 0, fmt.Errorf("%s needs a unit, e.g. %s", s, unitExample(s))
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errors.New("not a duration; use a number with a unit (ns, us, ms, s, m, h), e.g. 30s, 5m or 1h30m")
	}
	if d < 0 {
		return 0, errors.New("must not be negative")
	}
	if d == 0 && !zeroDisables {
		return 0, errors.New("must be positive, e.g. 30s or 5m")
	}
	return d, nil
}

// isBareNumber reports whether s is a decimal number without a unit
// ("300", "-5", "1.5"). strconv.ParseFloat is not used: it accepts "inf".
func isBareNumber(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	digits, dots := 0, 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '.':
			dots++
		default:
			return false
		}
	}
	return digits > 0 && dots <= 1
}

func unitExample(n string) string {
	if i, err := strconv.Atoi(n); err == nil && i > 0 && i%60 == 0 {
		return fmt.Sprintf("%ds or %dm", i, i/60)
	}
	return n + "s or " + n + "m"
}

// formatDuration drops the zero parts time.Duration.String keeps: 3m, not 3m0s.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// rawFlag keeps a flag's text; the loader parses it like any other source,
// so a flag gets the same checks and messages as the file and the env.
type rawFlag struct {
	value string
	typ   string
}

func (f *rawFlag) String() string     { return f.value }
func (f *rawFlag) Set(s string) error { f.value = s; return nil }
func (f *rawFlag) Type() string       { return f.typ }

// addKeyFlags adds one flag per key.
func addKeyFlags(fs *pflag.FlagSet, keys []keySpec) {
	for _, k := range keys {
		typ, help := k.kind, fmt.Sprintf("%s (env %s)", k.help, k.envName())
		if strings.Contains(typ, "|") {
			// pflag shows a back-quoted word of the usage as the value's name.
			typ, help = "string", fmt.Sprintf("%s: `%s` (env %s)", k.help, k.kind, k.envName())
		}
		fs.Var(&rawFlag{typ: typ}, k.flagName(), help)
		f := fs.Lookup(k.flagName())
		// Only shown in the help: the loader reads a flag only when it is set.
		f.DefValue = k.defaultDoc()
		if f.DefValue == `""` {
			f.DefValue = ""
		}
		if k.kind == "bool" {
			f.NoOptDefVal = "true"
			f.Usage += "; --" + k.flagName() + "=false turns it off"
		}
	}
}

// loadedConfig is the outcome of loading: the settings, the file read (if
// any) and where each key's value came from, for the debug log.
type loadedConfig struct {
	settings settings
	file     string
	sources  map[string]string
}

// loadConfig resolves every key: flag > MALARUN_* env > config file >
// default. viper reads the file; the precedence is resolved here so that
// every error can name the source, and every value is parsed with error
// checks instead of viper's silent casts. An empty env value counts as unset.
func loadConfig(keys []keySpec, flags *pflag.FlagSet, getenv func(string) string) (loadedConfig, error) {
	lc := loadedConfig{settings: defaultSettings(), sources: map[string]string{}}
	path, err := findConfigFile(flags, getenv)
	if err != nil {
		return lc, err
	}
	lc.file = path
	fileVals := map[string]any{}
	var errs []error
	if path != "" {
		fileVals, errs = readConfigFile(path, keys)
		if fileVals == nil {
			return lc, usage(errors.Join(errs...))
		}
	}
	for _, k := range keys {
		var raw, source string
		if f := flags.Lookup(k.flagName()); f != nil && f.Changed {
			raw, source = f.Value.String(), "flag --"+k.flagName()
		} else if v := getenv(k.envName()); v != "" {
			raw, source = v, "env "+k.envName()
		} else if v, ok := fileVals[k.name]; ok {
			source = "file " + path
			raw, err = fileValue(v, k)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s (%s): %w", k.name, source, err))
				continue
			}
		} else {
			lc.sources[k.name] = "default"
			continue
		}
		lc.sources[k.name] = source
		if err := k.parse(&lc.settings, raw); err != nil {
			errs = append(errs, fmt.Errorf("%s %q (%s): %w", k.name, raw, source, err))
		}
	}
	if len(errs) > 0 {
		return lc, usage(errors.Join(errs...))
	}
	if err := resolvePaths(&lc, getenv); err != nil {
		return lc, usage(err)
	}
	return lc, nil
}

// findConfigFile returns the first of: --config FILE (which must exist),
// ./malarun.yaml, $XDG_CONFIG_HOME/malarun/config.yaml; or "" for none.
func findConfigFile(flags *pflag.FlagSet, getenv func(string) string) (string, error) {
	if f := flags.Lookup("config"); f != nil && f.Changed {
		p := f.Value.String()
		if p == "" {
			return "", usagef("--config is empty: give the path of a YAML config file")
		}
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "", usagef("config file %s (from --config) does not exist", p)
		case err != nil:
			return "", usagef("config file %s (from --config): %v", p, err)
		case fi.IsDir():
			return "", usagef("config file %s (from --config) is a directory", p)
		}
		return p, nil
	}
	candidates := []string{"malarun.yaml"}
	if dir := xdgDir(getenv, "XDG_CONFIG_HOME", ".config"); dir != "" {
		candidates = append(candidates, filepath.Join(dir, "malarun", "config.yaml"))
	}
	for _, p := range candidates {
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return "", usagef("config file %s: %v", p, err)
		case fi.IsDir():
			return "", usagef("config file %s is a directory", p)
		}
		return p, nil
	}
	return "", nil
}

// xdgDir is $VAR, or $HOME/fallback when VAR is unset or relative (the XDG
// spec says to ignore relative values); "" when neither is known.
func xdgDir(getenv func(string) string, envVar, fallback string) string {
	if v := getenv(envVar); v != "" && filepath.IsAbs(v) {
		return v
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, fallback)
	}
	return ""
}

// readConfigFile returns the file's top-level keys and values. A nil map
// means the file could not be read at all; otherwise errs lists the unknown
// or malformed keys.
func readConfigFile(path string, keys []keySpec) (map[string]any, []error) {
	v := viper.New()
	v.SetConfigFile(path)
	v.SetConfigType("yaml")
	if err := v.ReadInConfig(); err != nil {
		return nil, []error{fmt.Errorf("config file %s: %w", path, err)}
	}
	known := map[string]bool{}
	var names []string
	for _, k := range keys {
		known[k.name] = true
		names = append(names, k.name)
	}
	vals := map[string]any{}
	reported := map[string]bool{}
	var errs []error
	inFile := v.AllKeys()
	sort.Strings(inFile)
	for _, key := range inFile {
		top, rest, nested := strings.Cut(key, ".")
		if reported[top] {
			continue
		}
		switch {
		case !known[top]:
			reported[top] = true
			msg := fmt.Sprintf("unknown key %q in config file %s", top, path)
			if s := closest(top, names); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			} else {
				msg += "; known keys: " + strings.Join(names, ", ")
			}
			errs = append(errs, errors.New(msg))
		case nested:
			reported[top] = true
			errs = append(errs, fmt.Errorf("%s (file %s): must be a single value, not a mapping (found %s.%s)", top, path, top, rest))
		default:
			vals[key] = v.Get(key)
		}
	}
	return vals, errs
}

// fileValue turns a decoded YAML value into the text the key parsers take.
func fileValue(v any, k keySpec) (string, error) {
	if l, ok := v.([]any); ok && k.list {
		parts := make([]string, len(l))
		for i, e := range l {
			p, err := fileScalar(e, false)
			if err != nil {
				return "", fmt.Errorf("entry %d: %w", i+1, err)
			}
			if strings.Contains(p, ",") {
				return "", fmt.Errorf("entry %d %q: an entry cannot contain a comma", i+1, p)
			}
			parts[i] = p
		}
		return strings.Join(parts, ","), nil
	}
	return fileScalar(v, k.stringOnly)
}

func fileScalar(v any, stringOnly bool) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case []any:
		return "", errors.New("must be a single value, not a list")
	case map[string]any:
		return "", errors.New("must be a single value, not a mapping")
	}
	if stringOnly {
		return "", fmt.Errorf("%v must be a string; quote it", v)
	}
	switch v.(type) {
	case bool, int, int64, uint64, float64:
		return fmt.Sprint(v), nil
	}
	return "", fmt.Errorf("%v (%T) is not a value this key accepts", v, v)
}

// resolvePaths fills the computed default of state_dir and makes paths
// absolute, so the logs and the run's records say exactly where things are.
func resolvePaths(lc *loadedConfig, getenv func(string) string) error {
	cfg := &lc.settings.cfg
	if cfg.StateDir == "" {
		dir := xdgDir(getenv, "XDG_STATE_HOME", filepath.Join(".local", "state"))
		if dir == "" {
			return errors.New("state_dir is not set and neither XDG_STATE_HOME nor HOME is: set state_dir")
		}
		cfg.StateDir = filepath.Join(dir, "malarun")
		lc.sources["state_dir"] = "default"
	}
	abs, err := filepath.Abs(cfg.StateDir)
	if err != nil {
		return fmt.Errorf("state_dir %q (%s): %w", cfg.StateDir, lc.sources["state_dir"], err)
	}
	cfg.StateDir = abs
	if cfg.Cwd != "" {
		abs, err := filepath.Abs(cfg.Cwd)
		if err != nil {
			return fmt.Errorf("cwd %q (%s): %w", cfg.Cwd, lc.sources["cwd"], err)
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return fmt.Errorf("cwd %q (%s): %w", cfg.Cwd, lc.sources["cwd"], err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("cwd %q (%s): not a directory", cfg.Cwd, lc.sources["cwd"])
		}
		cfg.Cwd = abs
	}
	return nil
}

// closest returns the candidate nearest to name (a likely typo), or "".
func closest(name string, candidates []string) string {
	best, bestD := "", 0
	for _, c := range candidates {
		d := levenshtein(strings.ToLower(name), strings.ToLower(c))
		if best == "" || d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > max(2, len(name)/3) {
		return ""
	}
	return best
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
